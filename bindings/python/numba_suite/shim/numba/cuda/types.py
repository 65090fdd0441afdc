"""``numba.cuda.types``: lazyfuse's type objects under Numba's names."""

from lazyfuse._numba import *  # noqa: F401,F403


class Type:
    """The base class of Numba's types, for the tests' extension types
    (Numba's extension API is not lazyfuse's: see ``numba.cuda.extending``)."""

    def __init__(self, name):
        self.name = name


double = float64

from ._absent import Absent as _Absent  # noqa: E402

#: Pointer types: not lazyfuse's.
CPointer = _Absent("pointer types (CPointer)")
