"""See ``numba.cuda.extending``."""

from ..extending import _refuse as unbox  # noqa: F401
