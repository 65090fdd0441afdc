"""``numba.cuda.typing``: Numba's typing, not lazyfuse's (see ``_absent.py``)."""

from .._absent import Absent

signature = Absent("numba.cuda.typing.signature")
