"""``numba.errors``: the same classes as ``numba.cuda.core.errors``."""

from .cuda.core.errors import *  # noqa: F401,F403
