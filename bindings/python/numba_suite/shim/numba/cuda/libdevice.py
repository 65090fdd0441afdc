"""``numba.cuda.libdevice``: libdevice's functions, which lazyfuse's
kernels do not call by these names (see ``_absent.py``)."""

from ._absent import Absent


def __getattr__(name):
    return Absent(f"libdevice.{name}")
