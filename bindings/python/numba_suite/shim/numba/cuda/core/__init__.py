"""``numba.cuda.core``: the configuration and the error classes."""

from .. import config  # noqa: F401
from . import errors  # noqa: F401
