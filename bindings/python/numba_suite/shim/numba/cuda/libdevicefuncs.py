"""``numba.cuda.libdevicefuncs``: libdevice's function table, not
lazyfuse's (see ``_absent.py``)."""

from ._absent import Absent


def __getattr__(name):
    return Absent(f"libdevicefuncs.{name}")
