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
import contextlib
import math
import operator
import os
import threading

import numpy as np

from . import _native
from ._array import Array, _dtype_name, _store, compute, where
from . import _numpy
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


class Context:
    """A backend: ``"cpu"``, ``"sim"`` (a simulated GPU), ``"cuda"``,
    ``"reference"``, ``"auto"`` (CUDA if usable, else the CPU) or
    ``"default"`` (what ``LAZYFUSE_BACKEND`` names, else ``"auto"``).

    ``device_memory_limit`` caps the device memory demands use (on
    ``"sim"``, the simulated device's size); ``pipeline_threshold`` is how
    many bytes a demand moves before it runs as a pipeline of chunks
    (default 64 MiB). A demand too large for the device runs in chunks when
    it can (``explain()`` shows the pipeline)."""

    __slots__ = ("_cx",)

    def __init__(self, backend="default", *, device_memory_limit=None, pipeline_threshold=None):
        if backend == "default":
            backend = os.environ.get("LAZYFUSE_BACKEND", "default") or "default"
            if backend == "default" and (device_memory_limit, pipeline_threshold) != (None, None):
                backend = "auto"
        self._cx = _native.Context(backend, device_memory_limit, pipeline_threshold)

    @property
    def backend(self):
        """The backend's name."""
        return self._cx.backend

    def stats(self):
        """What ran and moved: a dict of counters."""
        return self._cx.stats()

    def release_memory(self):
        """Frees the memory kept for reuse once arrays died — the device's
        pool on ``cuda`` and, on every backend, the few large host buffers
        kept for the next results of their size (as CuPy's
        ``free_all_blocks``); returns the bytes freed."""
        return self._cx.release_memory()

    def __enter__(self):
        _stack().append(self)
        return self

    def __exit__(self, *exc):
        _stack().pop()
        return False

    def __repr__(self):
        return f"lazyfuse.Context({self.backend!r})"


_local = threading.local()
_default = []


def _stack():
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


def current_context():
    """The context new arrays go to: the innermost ``with lazyfuse.use(…)``,
    else the default one."""
    stack = _stack()
    if stack:
        return stack[-1]
    if not _default:
        _default.append(Context("default"))
    return _default[0]


@contextlib.contextmanager
def use(backend):
    """``with lazyfuse.use("sim"): ...``: arrays made inside go to that backend."""
    context = backend if isinstance(backend, Context) else Context(backend)
    with context:
        yield context


def asarray(x, dtype=None, context=None, *, copy=None, device=None):
    """An array holding a copy of ``x`` (anything ``numpy.asarray`` takes,
    or a ``__dlpack__`` producer in host memory); a lazyfuse array is
    returned as it is (cast if ``dtype`` differs).

    ``copy`` follows the array API: ``True`` always gives a new array (for a
    lazyfuse array, a new handle on its value: values never change);
    ``False`` never copies, and raises ``ValueError`` where a copy is needed
    — a cast, or memory from outside lazyfuse, which its owner may still
    write while a lazyfuse value never changes."""
    if copy is False:
        _asarray_without_copy(x, dtype)
    if isinstance(x, ComplexArray):
        return x if dtype is None else x.astype(dtype)
    if isinstance(x, Array):
        same = dtype is None or _dtype_name(dtype) == _dtype_name(x.dtype)
        if copy:
            return x.copy() if same else x.astype(dtype)
        return x if same else x.astype(dtype)
    if isinstance(x, (list, tuple)) and any(isinstance(e, (Array, ComplexArray)) for e in x):
        # A sequence of lazy arrays (and numbers): stacked, lazily.
        stacked = _numpy.FUNCTIONS["stack"](list(x))
        return stacked if dtype is None else stacked.astype(dtype)
    cx = _context(context, device)._cx
    if hasattr(x, "__dlpack__") and not hasattr(x, "__array__") and not isinstance(x, np.ndarray):
        x = np.from_dlpack(x)  # a DLPack producer NumPy does not take as an array
    value = np.asarray(x, dtype=dtype, order="C")  # (ascontiguousarray makes 0-d arrays 1-d)
    if value.dtype.kind == "c":
        return ComplexArray._from_numpy(value, cx)
    return Array(cx.asarray(value))


array = asarray


def _asarray_without_copy(x, dtype):
    """Raises the array API's ``ValueError`` unless ``asarray(x, dtype,
    copy=False)`` can return ``x`` itself."""
    if not isinstance(x, (Array, ComplexArray)):
        raise ValueError(
            f"asarray(copy=False): a {type(x).__name__} cannot be shared without a copy: "
            "its memory is outside lazyfuse and its owner may still write it, while a "
            "lazyfuse value never changes (pass copy=None to copy it)")
    if dtype is not None and _dtype_name(dtype) != _dtype_name(x.dtype):
        raise ValueError(
            f"asarray(copy=False): casting a {_dtype_name(x.dtype)} array to "
            f"{_dtype_name(dtype)} needs a copy")


def _shape(shape, what):
    """A shape argument (an int or a sequence of ints, NumPy's integers
    too) as a list; a negative size is an ``ArgumentError``."""
    dims = [shape] if isinstance(shape, (int, np.integer)) else list(shape)
    dims = [operator.index(d) for d in dims]
    if any(d < 0 for d in dims):
        raise ArgumentError(f"{what}: negative dimensions are not allowed (shape {tuple(dims)})")
    return dims


def _context(context, device):
    """The context of a creation function's ``context=`` or the array API's
    ``device=`` (a ``lazyfuse.Device``, a ``Context`` or a backend name);
    the current one without either."""
    if device is not None and context is None:
        return _array_api.context_of(device)
    return context or current_context()


def full(shape, fill_value, dtype=None, context=None, *, device=None):
    """``shape`` filled with ``fill_value`` (generated where it is used)."""
    shape = _shape(shape, "full")
    if dtype is None:
        dtype = np.asarray(fill_value).dtype
    cx = _context(context, device)._cx
    if not (isinstance(dtype, str) and dtype == "bfloat16") and np.dtype(dtype).kind == "c":
        # A complex fill: each part filled, in the parts' float dtype.
        value, part = complex(fill_value), np.dtype(dtype).type(0).real.dtype.name
        return ComplexArray(cx.full(shape, value.real, part), cx.full(shape, value.imag, part))
    return Array(cx.full(shape, _fill(fill_value), _dtype_name(dtype)))


def _fill(value):
    """A fill value for the native side: ints stay exact ints."""
    return value.item() if isinstance(value, np.generic) else value


def zeros(shape, dtype=np.float64, context=None, *, device=None):
    return full(shape, 0, np.float64 if dtype is None else dtype, context, device=device)


def ones(shape, dtype=np.float64, context=None, *, device=None):
    return full(shape, 1, np.float64 if dtype is None else dtype, context, device=device)


def empty(shape, dtype=np.float64, context=None, *, device=None):
    """A destination (its contents are unspecified until written; zeros here)."""
    return full(shape, 0, np.float64 if dtype is None else dtype, context, device=device)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``a``'s shape (or ``shape``) filled with ``fill_value``, in ``a``'s
    dtype (or ``dtype``); a lazyfuse ``a`` gives an array of its context
    (nothing computed). ``order``, ``subok`` and ``device`` are NumPy's,
    accepted: a lazy array's elements are in C order, on its context."""
    shape = _shape(np.shape(a) if shape is None else shape, "full_like")
    dtype = (a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype) if dtype is None else dtype
    native = a._a if isinstance(a, Array) else a._re if isinstance(a, ComplexArray) else None
    if native is None:
        return full(shape, fill_value, dtype)
    if _dtype_name(dtype) in ("complex64", "complex128"):
        value, part = complex(fill_value), np.dtype(dtype).type(0).real.dtype.name
        return ComplexArray(native.full_like(shape, value.real, part),
                            native.full_like(shape, value.imag, part))
    return Array(native.full_like(shape, _fill(fill_value), _dtype_name(dtype)))


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``full_like(a, 0, …)``."""
    return full_like(a, 0, dtype, shape=shape)


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``full_like(a, 1, …)``."""
    return full_like(a, 1, dtype, shape=shape)


def empty_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """A destination like ``a`` (zeros here, as ``empty``)."""
    return full_like(a, 0, dtype, shape=shape)


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
Device = _array_api.Device
# Names that would shadow builtins inside the package, served by
# `__getattr__` (the array API's `bool` dtype).
_SHADOWING = {"bool": np.bool_}
_numpy.FUNCTIONS["from_dlpack"] = _array_api.from_dlpack

# NumPy's own `np.zeros_like(x)` of a lazy `x` comes here too.
_numpy.FUNCTIONS.update(full_like=full_like, zeros_like=zeros_like, ones_like=ones_like,
                        empty_like=empty_like)


def arange(start, stop=None, step=1, dtype=None, context=None, *, device=None):
    """NumPy's ``arange`` (generated where it is used)."""
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        # NumPy's: float64 when any of the three is a float, else int64.
        floats = any(isinstance(v, (float, np.floating)) for v in (start, stop, step))
        dtype = np.float64 if floats or not step else np.arange(start, start + step, step).dtype
    cx = _context(context, device)._cx
    name = _dtype_name(dtype)
    exact = all(isinstance(v, (int, np.integer)) for v in (start, stop, step))
    if exact and np.dtype(name).kind in "iu" and max(abs(int(start)), abs(int(stop))) > 2**53:
        # Beyond 2**53 an f64 would round the ends: count in f64 (exact for
        # any length that fits in memory), then scale and shift in integers.
        n = len(range(int(start), int(stop), int(step)))
        return Array(cx.arange(0.0, float(n), 1.0, name)) * int(step) + int(start)
    if not exact and np.dtype(name).kind in "iu":
        # NumPy's rule: the first two values in the dtype, their difference
        # the step (np.arange(0, 5, 0.5, dtype=int) is all zeros).
        first = int(np.array(start).astype(name))
        delta = int(np.array(start + step).astype(name)) - first
        n = max(0, math.ceil((stop - start) / step)) if step else 0
        # In int64, then wrapped into the dtype, as NumPy's fill wraps.
        return (Array(cx.arange(0.0, float(n), 1.0, "int64")) * delta + first).astype(name)
    return Array(cx.arange(float(start), float(stop), float(step), name))


def stats(context=None):
    """What the context ran and moved (kernel launches, copies, bytes)."""
    return (context or current_context()).stats()


def cuda_source(*arrays):
    """The CUDA C lazyfuse would run to compute ``arrays``."""
    return _native.cuda_source([a._a for a in arrays])


def __getattr__(name):
    """NumPy's namespace over lazy arrays (``lf.exp``, ``lf.nanmax``,
    ``lf.concatenate``…: see ``lazyfuse._numpy``), resolved here so that
    names like ``sum`` and ``max`` do not shadow the builtins inside the
    package; the others become module attributes at their first use."""
    try:
        value = _SHADOWING[name] if name in _SHADOWING else _numpy.FUNCTIONS[name]
    except KeyError:
        raise AttributeError(f"module 'lazyfuse' has no attribute {name!r}") from None
    # Kept as a module attribute, so the next ``lf.exp`` is a plain lookup
    # (this hook cost a microsecond a call); builtins' names stay here.
    if not hasattr(_builtins, name):
        globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_numpy.FUNCTIONS))
