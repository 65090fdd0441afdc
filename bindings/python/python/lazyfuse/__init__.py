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

import contextlib
import os
import threading

import numpy as np

from . import _native
from ._native import CompileError
from ._numba import (
    bool_, float16, float32, float64, guvectorize, int8, int16, int32, int64, jit, njit,
    uint8, uint16, uint32, uint64, vectorize,
)
from . import cuda

__all__ = [
    "Array", "Context", "CompileError", "asarray", "array", "zeros", "ones", "empty", "full",
    "arange", "zeros_like", "ones_like", "empty_like", "full_like", "where", "use",
    "stats", "cuda_source", "vectorize", "guvectorize", "jit", "njit", "cuda", "float16", "float32",
    "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "bool_",
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


def _dtype_name(dtype):
    if dtype is None:
        return None
    if dtype in (bool, "bool"):
        return "bool"
    if isinstance(dtype, str) and dtype == "bfloat16":
        return dtype
    return np.dtype(dtype).name


# NumPy ufunc name -> lazyfuse operation name, where they differ.
_UFUNC_NAMES = {
    "true_divide": "divide", "absolute": "abs", "conjugate": None,
}

_BINARY = {
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder",
    "mod", "power", "maximum", "minimum", "less", "less_equal", "greater", "greater_equal",
    "equal", "not_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and",
    "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "arctan2", "hypot",
    "copysign", "fmod",
}

def _positive(x):
    if x.dtype == np.bool_:
        raise TypeError("ufunc 'positive' did not contain a loop for bool (NumPy refuses it too)")
    return Array(x._a.astype(x._a.dtype_name))


_UNARY_SPECIAL = {"positive": _positive}


def _fmax_fmin(name, a, b):
    """``fmax``/``fmin``: as ``maximum``/``minimum``, but a NaN loses to a
    number (NaN only where both are)."""
    first = a if isinstance(a, Array) else b
    a, b = (x if isinstance(x, (Array, bool, int, float)) else first._like(x) for x in (a, b))
    extreme = np.maximum(a, b) if name == "fmax" else np.minimum(a, b)
    a_nan, b_nan = (np.isnan(x) if isinstance(x, Array) else first._like(x != x) for x in (a, b))
    return where(b_nan, where(a_nan, extreme, a), where(a_nan, b, extreme))


_REDUCTIONS = ("sum", "prod", "min", "max", "mean", "any", "all", "argmax", "argmin", "var",
               "std", "cumsum", "cumprod")


class Array:
    """A lazy n-dimensional array (see the module documentation)."""

    __slots__ = ("_a",)
    __array_priority__ = 100

    def __init__(self, native):
        self._a = native

    # --- properties -------------------------------------------------------
    @property
    def shape(self):
        return tuple(self._a.shape)

    @property
    def dtype(self):
        name = self._a.dtype_name
        return name if name == "bfloat16" else np.dtype(name)

    @property
    def ndim(self):
        return len(self._a.shape)

    @property
    def size(self):
        n = 1
        for d in self._a.shape:
            n *= d
        return n

    @property
    def T(self):
        return Array(self._a.transpose(None))

    def __len__(self):
        if not self._a.shape:
            raise TypeError("len() of a 0-d array")
        return self._a.shape[0]

    def __repr__(self):
        state = ", computed" if self._a.is_materialized else ""
        return f"lazyfuse.Array(shape={self.shape}, dtype={self._a.dtype_name}, backend={self._a.backend!r}{state})"

    # --- building ---------------------------------------------------------
    def _binary(self, op, other, reflected=False):
        if isinstance(other, Array):
            other = other._a
        elif not isinstance(other, (bool, int, float, np.ndarray, np.generic, list, tuple)):
            return NotImplemented
        return Array(self._a.binary(op, other, reflected))

    def __add__(self, o): return self._binary("add", o)
    def __radd__(self, o): return self._binary("add", o, True)
    def __sub__(self, o): return self._binary("subtract", o)
    def __rsub__(self, o): return self._binary("subtract", o, True)
    def __mul__(self, o): return self._binary("multiply", o)
    def __rmul__(self, o): return self._binary("multiply", o, True)
    def __truediv__(self, o): return self._binary("divide", o)
    def __rtruediv__(self, o): return self._binary("divide", o, True)
    def __floordiv__(self, o): return self._binary("floor_divide", o)
    def __rfloordiv__(self, o): return self._binary("floor_divide", o, True)
    def __mod__(self, o): return self._binary("remainder", o)
    def __rmod__(self, o): return self._binary("remainder", o, True)
    def __pow__(self, o): return self._binary("power", o)
    def __rpow__(self, o): return self._binary("power", o, True)
    def __and__(self, o): return self._binary("bitwise_and", o)
    def __rand__(self, o): return self._binary("bitwise_and", o, True)
    def __or__(self, o): return self._binary("bitwise_or", o)
    def __ror__(self, o): return self._binary("bitwise_or", o, True)
    def __xor__(self, o): return self._binary("bitwise_xor", o)
    def __rxor__(self, o): return self._binary("bitwise_xor", o, True)
    def __lshift__(self, o): return self._binary("left_shift", o)
    def __rshift__(self, o): return self._binary("right_shift", o)
    def __lt__(self, o): return self._binary("less", o)
    def __le__(self, o): return self._binary("less_equal", o)
    def __gt__(self, o): return self._binary("greater", o)
    def __ge__(self, o): return self._binary("greater_equal", o)
    def __eq__(self, o): return self._binary("equal", o)
    def __ne__(self, o): return self._binary("not_equal", o)
    __hash__ = None

    def __neg__(self): return Array(self._a.unary("negative"))
    def __pos__(self): return self
    def __abs__(self): return Array(self._a.unary("abs"))
    def __invert__(self): return Array(self._a.unary("invert"))

    def astype(self, dtype):
        return Array(self._a.astype(_dtype_name(dtype)))

    def view(self, dtype=None):
        """NumPy's ``a.view(dtype)`` for a dtype of the same element size:
        each element's bits read as ``dtype`` (lazy, fused like a cast)."""
        if dtype is None:
            return self
        return Array(self._a.view(_dtype_name(dtype)))

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        shape = list(shape)
        if -1 in shape:
            known = 1
            for d in shape:
                if d != -1:
                    known *= d
            shape[shape.index(-1)] = self.size // known if known else 0
        return Array(self._a.reshape(shape))

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = axes[0]
        return Array(self._a.transpose(list(axes) if axes else None))

    def __getitem__(self, key):
        """Basic indexing: ints and slices (views); ``...`` is allowed."""
        if not isinstance(key, tuple):
            key = (key,)
        if any(k is Ellipsis for k in key):
            at = key.index(Ellipsis)
            key = key[:at] + (slice(None),) * (self.ndim - len(key) + 1) + key[at + 1:]
        if len(key) > self.ndim:
            raise IndexError(f"too many indices: {len(key)} for an array of dimension {self.ndim}")
        a, drop = self._a, []
        for axis, k in enumerate(key):
            if isinstance(k, slice):
                a = a.slice_axis(axis, k.start, k.stop, 1 if k.step is None else k.step)
            elif isinstance(k, (int, np.integer)):
                n = self.shape[axis]
                i = int(k) + n if k < 0 else int(k)
                if not 0 <= i < n:
                    raise IndexError(f"index {int(k)} is out of bounds for axis {axis} with size {n}")
                a = a.slice_axis(axis, i, i + 1, 1)
                drop.append(axis)
            else:
                raise IndexError(
                    f"lazyfuse arrays take basic indices (ints, slices, ...), not {type(k).__name__}"
                )
        if drop:
            a = a.reshape([d for axis, d in enumerate(a.shape) if axis not in drop])
        return Array(a)

    def _reduce(self, name, axis=None, keepdims=False, ddof=0):
        if isinstance(axis, tuple) and name not in ("sum", "prod", "min", "max", "mean", "any", "all"):
            raise ValueError(f"{name} takes one axis or None")
        return Array(self._a.reduce(name, axis, keepdims, ddof))

    def sum(self, axis=None, keepdims=False): return self._reduce("sum", axis, keepdims)
    def prod(self, axis=None, keepdims=False): return self._reduce("prod", axis, keepdims)
    def min(self, axis=None, keepdims=False): return self._reduce("min", axis, keepdims)
    def max(self, axis=None, keepdims=False): return self._reduce("max", axis, keepdims)
    def mean(self, axis=None, keepdims=False): return self._reduce("mean", axis, keepdims)
    def any(self, axis=None, keepdims=False): return self._reduce("any", axis, keepdims)
    def all(self, axis=None, keepdims=False): return self._reduce("all", axis, keepdims)
    def argmax(self, axis=None): return self._reduce("argmax", axis)
    def argmin(self, axis=None): return self._reduce("argmin", axis)
    def var(self, axis=None, ddof=0, keepdims=False): return self._moment("var", axis, ddof, keepdims)
    def std(self, axis=None, ddof=0, keepdims=False): return self._moment("std", axis, ddof, keepdims)

    def _moment(self, name, axis, ddof, keepdims):
        """``var``/``std`` over ``axis`` (also several: moved last and
        merged into one, views only), with NumPy's ``keepdims``."""
        ndim = self.ndim
        axes = tuple(range(ndim)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
        axes = sorted({a + ndim if a < 0 else a for a in axes})
        if any(not 0 <= a < ndim for a in axes):
            raise ValueError(f"{name}: axis {axis} is out of range for {ndim} dimensions")
        x, over = self, (None if axis is None else axes[0])
        if axis is not None and len(axes) > 1:
            rest = [a for a in range(ndim) if a not in axes]
            merged = int(np.prod([self.shape[a] for a in axes]))
            x = self.transpose(rest + axes).reshape(tuple(self.shape[a] for a in rest) + (merged,))
            over = len(rest)
        result = x._reduce(name, over, ddof=ddof)
        if keepdims:
            result = result.reshape(tuple(1 if a in axes else n for a, n in enumerate(self.shape)))
        return result
    def cumsum(self, axis=None):
        a = self if axis is not None else self.reshape(-1)
        return a._reduce("cumsum", -1 if axis is None else axis)
    def cumprod(self, axis=None):
        a = self if axis is not None else self.reshape(-1)
        return a._reduce("cumprod", -1 if axis is None else axis)

    # --- demands ----------------------------------------------------------
    def numpy(self):
        """Computes the array and returns a NumPy copy."""
        return self._a.numpy()

    def _like(self, value):
        """``value`` (anything NumPy takes) as an array of this one's context."""
        return Array(self._a.like(np.asarray(value, order="C")))

    def item(self):
        """The only element, as a Python scalar."""
        return self._a.item()

    def copy_to_host(self, out=None, stream=0):
        """Numba's ``copy_to_host``: a NumPy copy, or written into ``out``
        (after the work queued on ``stream``)."""
        if not isinstance(stream, int):
            stream.synchronize()
        if out is None:
            return self._a.numpy()
        if (isinstance(out, np.ndarray) and out.flags.c_contiguous and out.flags.writeable
                and out.shape == self.shape and isinstance(self.dtype, np.dtype)
                and out.dtype == self.dtype):
            self._a.read_into(out)  # computed straight into `out`
        else:
            np.copyto(out, self._a.numpy())
        return out

    def eval(self):
        """Computes the array and keeps its value (on the device)."""
        self._a.eval()
        return self

    def _to_device(self):
        return Array(self._a.to_device())

    def explain(self):
        """How lazyfuse would run it: its graph, kernels and copies."""
        return self._a.explain()

    def __array__(self, dtype=None, copy=None):
        value = self._a.numpy()
        return value if dtype is None else value.astype(dtype, copy=False)

    def __dlpack__(self, stream=None):
        """DLPack export of the computed value (a host copy)."""
        return self._a.numpy().__dlpack__()

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU: the exported value is in host memory

    def __float__(self): return float(self.item())
    def __int__(self): return int(self.item())
    def __index__(self): return int(self.item())

    def __bool__(self):
        if self.size != 1:
            raise ValueError(
                "the truth value of an array with more than one element is ambiguous (use a.any() or a.all())"
            )
        return bool(self.item())

    # --- NumPy's protocols ------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if method != "__call__" or kwargs:
            return NotImplemented
        for x in inputs:
            if not isinstance(x, (Array, np.ndarray, np.generic, bool, int, float)):
                return NotImplemented
        name = _UFUNC_NAMES.get(ufunc.__name__, ufunc.__name__)
        if name is None:
            return NotImplemented
        first = next(x for x in inputs if isinstance(x, Array))
        if ufunc.nin == 1 and name in _UNARY_SPECIAL:
            result = _UNARY_SPECIAL[name](first)
        elif ufunc.nin == 1 and _native.has_unary_operation(name):
            result = Array(first._a.unary(name))
        elif ufunc.nin == 2 and name in ("fmax", "fmin"):
            result = _fmax_fmin(name, *inputs)
        elif ufunc.nin == 2 and name in _BINARY:
            a, b = inputs
            if isinstance(a, Array):
                result = a._binary(name, b)
            else:
                result = b._binary(name, a, True)
        elif ufunc.nout == 1:
            # A ufunc lazyfuse lacks: NumPy computes it on the computed
            # values (as for other NumPy functions), and the chain goes on.
            values = [x.numpy() if isinstance(x, Array) else x for x in inputs]
            with np.errstate(all="ignore"):
                result = first._like(ufunc(*values))
        else:
            return NotImplemented
        if out is not None:
            (target,) = out
            if isinstance(target, Array):
                target._a.assign(result.astype(target.dtype)._a)
                return target
            np.copyto(target, result.numpy())
            return target
        return result

    def __array_function__(self, func, types, args, kwargs):
        name = func.__name__
        if name in _REDUCTIONS and args and isinstance(args[0], Array):
            return getattr(args[0], name)(*args[1:], **kwargs)
        if name in ("reshape", "transpose", "astype") and isinstance(args[0], Array):
            return getattr(args[0], name)(*args[1:], **kwargs)
        if name == "where" and len(args) == 3:
            return where(*args)
        if name == "broadcast_to" and isinstance(args[0], Array):
            return Array(args[0]._a.broadcast_to(list(args[1])))
        # Anything else runs in NumPy on computed values.
        def computed(x):
            if isinstance(x, Array):
                return x.numpy()
            if isinstance(x, (list, tuple)):
                return type(x)(computed(y) for y in x)
            return x
        return func(*computed(args), **{k: computed(v) for k, v in kwargs.items()})


def asarray(x, dtype=None, context=None):
    """An array holding a copy of ``x`` (anything ``numpy.asarray`` takes);
    a lazyfuse array is returned as it is (cast if ``dtype`` differs)."""
    if isinstance(x, Array):
        return x if dtype is None else x.astype(dtype)
    cx = (context or current_context())._cx
    value = np.asarray(x, dtype=dtype, order="C")  # (ascontiguousarray makes 0-d arrays 1-d)
    return Array(cx.asarray(value))


array = asarray


def full(shape, fill_value, dtype=None, context=None):
    """``shape`` filled with ``fill_value`` (generated where it is used)."""
    shape = [shape] if isinstance(shape, int) else list(shape)
    if dtype is None:
        dtype = np.asarray(fill_value).dtype
    cx = (context or current_context())._cx
    return Array(cx.full(shape, float(fill_value), _dtype_name(dtype)))


def zeros(shape, dtype=np.float64, context=None):
    return full(shape, 0, dtype, context)


def ones(shape, dtype=np.float64, context=None):
    return full(shape, 1, dtype, context)


def empty(shape, dtype=np.float64, context=None):
    """A destination (its contents are unspecified until written; zeros here)."""
    return full(shape, 0, dtype, context)


def _like(a, dtype):
    return a.shape, (a.dtype if dtype is None else dtype)


def zeros_like(a, dtype=None):
    return zeros(*_like(a, dtype))


def ones_like(a, dtype=None):
    return ones(*_like(a, dtype))


def empty_like(a, dtype=None):
    return empty(*_like(a, dtype))


def full_like(a, fill_value, dtype=None):
    shape, dtype = _like(a, dtype)
    return full(shape, fill_value, dtype)


def arange(start, stop=None, step=1, dtype=None, context=None):
    """NumPy's ``arange`` (generated where it is used)."""
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        dtype = np.arange(start, start + step, step).dtype if step else np.float64
    cx = (context or current_context())._cx
    return Array(cx.arange(float(start), float(stop), float(step), _dtype_name(dtype)))


def where(condition, x, y):
    """NumPy's ``where``; while tracing a ``vectorize`` function, the
    traced conditional."""
    from . import _trace
    if any(isinstance(v, _trace.Sym) for v in (condition, x, y)):
        return _trace.where(condition, x, y)
    condition = asarray(condition) if not isinstance(condition, Array) else condition
    unwrap = lambda v: v._a if isinstance(v, Array) else v
    return Array(condition._a.where_(unwrap(x), unwrap(y)))


def stats(context=None):
    """What the context ran and moved (kernel launches, copies, bytes)."""
    return (context or current_context()).stats()


def cuda_source(*arrays):
    """The CUDA C lazyfuse would run to compute ``arrays``."""
    return _native.cuda_source([a._a for a in arrays])
