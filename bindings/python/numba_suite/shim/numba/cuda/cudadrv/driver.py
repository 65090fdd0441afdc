"""See ``numba.cuda.cudadrv``."""

from .._absent import Absent, AbsentError

driver = Absent("CUDA driver wrapper")
CudaAPIError = AbsentError


def _have_nvjitlink():
    """lazyfuse does not link kernels with nvJitLink."""
    return False
