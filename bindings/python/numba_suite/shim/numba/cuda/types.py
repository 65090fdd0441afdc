"""``numba.cuda.types``: lazyfuse's type objects under Numba's names."""

from lazyfuse._numba import *  # noqa: F401,F403
from lazyfuse._numba import ArrayType as Array  # noqa: F401

# The base class of Numba's types: lazyfuse's (the tests' extension types
# subclass it; Numba's extension API is not lazyfuse's, see
# ``numba.cuda.extending``).
from lazyfuse._numba import _Type as Type  # noqa: E402,F401


double = float64

from ._absent import Absent as _Absent  # noqa: E402

#: Pointer types: not lazyfuse's.
CPointer = _Absent("pointer types (CPointer)")
