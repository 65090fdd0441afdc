"""See ``numba.cuda.cudadrv``."""

from .._absent import Absent, AbsentError

driver = Absent("CUDA driver wrapper")
CudaAPIError = AbsentError
