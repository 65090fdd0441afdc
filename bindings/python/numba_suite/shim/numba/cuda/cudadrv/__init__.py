"""``numba.cuda.cudadrv``: Numba's CUDA driver wrapper, which lazyfuse
does not have (tests that mock it fail)."""

from . import driver  # noqa: F401
