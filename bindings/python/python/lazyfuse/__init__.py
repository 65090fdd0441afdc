"""lazyfuse: lazy, fused array expressions with NumPy's and Numba's vocabulary.

Operations on ``lazyfuse.Array`` only build an expression graph; nothing is
copied, compiled or run until a value is demanded (``np.asarray(x)``,
``x.numpy()``, ``x.item()``, ``float(x)``). Element-wise work, and the work
feeding reductions, fuses into single kernels on the CPU (compiled), the
simulated GPU (``"sim"``) or CUDA.

    >>> import numpy as np, lazyfuse as lf
    >>> x = lf.asarray(np.arange(4, dtype=np.float32))
    >>> float((x * 2 + 1).sum())
    16.0
"""

import builtins as _builtins

import numpy as np

from ._array import Array, compute, where
from ._contexts import Context, Device, cuda_source, stats, use
from ._creation import (
    arange, array, asarray, empty, empty_like, full, full_like, ones, ones_like, zeros,
    zeros_like,
)
from ._registry import FUNCTIONS as _FUNCTIONS
from . import _contexts, _numpy, _reductions, _ufuncs, _views
from .errors import (
    ArgumentError, AxisError, BackendError, CompileError, DeviceError, DTypeError, InternalError,
    LazyfuseError, ShapeError,
)
from ._numba import (
    b1, bool_, boolean, c8, c16, complex64, complex128, f2, f4, f8, float16, float32, float64,
    guvectorize, i1, i2, i4, i8,
    int8, int16, int32, int64, intp, jit, njit, prange, u1, u2, u4, u8, uint8, uint16, uint32,
    uint64, uintp, vectorize, void,
)
from . import _array_api, _cupy, cuda, errors, fft, linalg, random
from ._complex import ComplexArray
from ._cupy import asnumpy, fuse, get_array_module
from ._raw_kernels import ElementwiseKernel, RawKernel, RawModule, ReductionKernel

__all__ = [
    "Array", "Context", "CompileError", "asarray", "array", "zeros", "ones", "empty", "full",
    "arange", "zeros_like", "ones_like", "empty_like", "full_like", "where", "compute", "use",
    "stats", "cuda_source", "vectorize", "guvectorize", "jit", "njit", "prange", "cuda", "float16", "float32",
    "float64", "complex64", "complex128", "c8", "c16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "bool_", "boolean", "intp", "uintp", "void", "b1", "f2", "f4", "f8", "i1", "i2", "i4", "i8",
    "u1", "u2", "u4", "u8", "LazyfuseError", "ShapeError", "ArgumentError", "AxisError", "DTypeError",
    "BackendError", "DeviceError", "InternalError", "errors", "linalg", "fft", "ComplexArray", "Device", "asnumpy", "fuse",
    "get_array_module", "RawKernel", "RawModule", "ElementwiseKernel", "ReductionKernel",
]


# Imported for what they register in `_registry` before any call: the
# operations `Array`'s methods look up (indexing, reductions, ufuncs) and
# NumPy's namespace (`_numpy` imports its modules). Named here, as used.
_REGISTERING = (_numpy, _reductions, _ufuncs, _views)
current_context = _contexts.current_context  # (a name of the package before `_contexts`)

# NumPy's constants and dtype questions, as CuPy's namespace has them
# (lazyfuse's dtypes are NumPy's).
newaxis = None
pi, e, inf, nan, euler_gamma = np.pi, np.e, np.inf, np.nan, np.euler_gamma
iinfo, dtype, can_cast, promote_types = np.iinfo, np.dtype, np.can_cast, np.promote_types
issubdtype = np.issubdtype
finfo, isdtype = _array_api.finfo, _array_api.isdtype

# The array API standard's introspection (`_array_api`).
__array_api_version__ = _array_api.API_VERSION
__array_namespace_info__ = _array_api.namespace_info
# Names that would shadow builtins inside the package, served by
# `__getattr__` (the array API's `bool` dtype).
_SHADOWING = {"bool": np.bool_}


def __getattr__(name):
    """NumPy's namespace over lazy arrays (``lf.exp``, ``lf.nanmax``,
    ``lf.concatenate``…: see ``lazyfuse._numpy``), resolved here so that
    names like ``sum`` and ``max`` do not shadow the builtins inside the
    package; the others become module attributes at their first use."""
    try:
        value = _SHADOWING[name] if name in _SHADOWING else _FUNCTIONS[name]
    except KeyError:
        raise AttributeError(f"module 'lazyfuse' has no attribute {name!r}") from None
    # Kept as a module attribute, so the next ``lf.exp`` is a plain lookup
    # (this hook cost a microsecond a call); builtins' names stay here.
    if not hasattr(_builtins, name):
        globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_FUNCTIONS))
