"""See ``numba.cuda.extending``."""

from ..extending import _refuse as OpaqueModel  # noqa: F401
