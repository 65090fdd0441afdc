"""The test suite's ``numba``: Numba's names bound to lazyfuse's.

Only names: every behaviour is lazyfuse's own (``lazyfuse`` and
``lazyfuse.cuda``). See ../../README.md.
"""

from lazyfuse import guvectorize, jit, njit, prange, vectorize  # noqa: F401
from lazyfuse._numba import *  # noqa: F401,F403  (the type objects)

from . import cuda, errors  # noqa: F401
from .cuda.typing.typeof import typeof  # noqa: F401
from .cuda import config, types  # noqa: F401
