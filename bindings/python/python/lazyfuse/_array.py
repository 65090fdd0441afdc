"""``lazyfuse.Array``: the lazy array's Python face (operators, methods,
views, demands) and NumPy's protocols over it (``__array_ufunc__``,
``__array_function__``, ``__array__``, ``__dlpack__``), with ``where`` and
the ``out=`` rules they share. The constructors are in ``_creation``, the
contexts in ``_contexts``.

The bottom of the core layer (see ``scripts/module-cycles.py``): what
the methods need of the modules above (indexing, reductions, ufuncs,
sorting…) they look up in ``_registry.OPERATIONS``, which those modules
fill when imported."""

import operator
import types

import numpy as np

from . import _native, _trace
from ._contexts import Device
from ._methods import NdarrayMethods
from ._registry import FFT_FUNCTIONS, FUNCTIONS, LINALG_FUNCTIONS, OPERATIONS
from .errors import ArgumentError, AxisError, DTypeError, LazyfuseError, ShapeError


# The names of the dtype spellings met so far (``np.float32``, ``"f4"``, a
# NumPy dtype): ``np.dtype(x).name`` takes two microseconds, a look-up a
# twentieth of that. Equal spellings name one dtype, so a hit is right.
_DTYPE_NAMES = {}


def _dtype_name(dtype):
    try:
        return _DTYPE_NAMES[dtype]
    except (KeyError, TypeError):  # new, or unhashable
        pass
    if dtype is None:
        return None
    if dtype in (bool, "bool"):
        return "bool"
    if isinstance(dtype, str) and dtype == "bfloat16":
        return dtype
    name = np.dtype(dtype).name
    if len(_DTYPE_NAMES) < 256:  # a few spellings, not every structured dtype
        try:
            _DTYPE_NAMES[dtype] = name
        except TypeError:
            pass
    return name


_NUMPY_DTYPES = {}


def _numpy_dtype(name):
    """NumPy's dtype object for a dtype name, cached: NumPy returns the
    same object for every native-order array of a builtin dtype, so the
    hot path can compare by identity (``dtype.name`` takes a microsecond)."""
    dtype = _NUMPY_DTYPES.get(name)
    if dtype is None:
        dtype = _NUMPY_DTYPES[name] = np.dtype(name)
    return dtype


# What the layers above register here, so that this module imports none
# of them. `COMPLEX` (by `_complex`): the complex array type (`types`),
# the operation of a real array with a complex number or NumPy array
# (`operation(x, op, other, reflected)`), a real array made complex
# (`from_real(x, dtype)`), a complex NumPy array copied into a native
# array's or context's context (`from_numpy(native, value)`), one made of
# its parts' native arrays (`from_parts(re, im)`), a joining function applied
# to the parts (`join(function, arrays, **keywords)`) and `where` with a
# complex choice (`where(condition, x, y)`). The rest of what the layers
# above do for arrays (indexing, reductions, ufuncs, sorting…) they
# register in `_registry.OPERATIONS`, which the methods look up.
COMPLEX = types.SimpleNamespace(types=(), operation=None, from_real=None, from_numpy=None,
                                from_parts=None, join=None, where=None)


# Per NumPy ufunc: its direct call on lazy arrays (`_ufuncs.direct`,
# registered as "ufunc_direct"), or
# False where it has none.
_DIRECT = {}


# Python numbers the native operation takes as they are (NumPy's weak
# scalars), checked by exact type before anything else.
_PLAIN_NUMBERS = frozenset((float, int, bool))


class Array(NdarrayMethods):
    """A lazy n-dimensional array (see the module documentation)."""

    # `_rebound`: set once the array was re-bound (see `copy_to_host`).
    __slots__ = ("_a", "_rebound")
    __array_priority__ = 100

    def __init__(self, native):
        self._a = native
        self._rebound = False

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
        return _shape_len(self._a.shape)

    @property
    def T(self):
        return OPERATIONS["transposed"](self, None)

    def __len__(self):
        if not self._a.shape:
            raise TypeError("len() of a 0-d array")
        return self._a.shape[0]

    def __repr__(self):
        """The values, as NumPy's ``repr`` shows them (this computes the
        array, as printing a CuPy or JAX array does); if it cannot be
        computed, its shape, dtype and the error."""
        prefix = "lazyfuse.Array("
        try:
            values = self._a.numpy()
        except LazyfuseError as e:
            return (f"{prefix}shape={self.shape}, dtype={self._a.dtype_name}, "
                    f"backend={self._a.backend!r}, not computable: {e})")
        body = np.array2string(values, separator=", ", prefix=prefix)
        return f"{prefix}{body}, dtype={self._a.dtype_name}, backend={self._a.backend!r})"

    def __str__(self):
        """The values as ``print`` of a NumPy array shows them (computed)."""
        return str(self._a.numpy())

    def _describe(self):
        """Shape, dtype and backend, without computing anything."""
        state = ", computed" if self._a.is_materialized else ""
        return f"lazyfuse.Array(shape={self.shape}, dtype={self._a.dtype_name}, backend={self._a.backend!r}{state})"

    # --- building ---------------------------------------------------------
    def _binary(self, op, other, reflected=False):
        if type(other) in _PLAIN_NUMBERS:
            # The commonest operand after an array (`x * 2.0`): one check.
            return Array(self._a.binary(op, other, reflected))
        if isinstance(other, Array):
            other = other._a
        elif (isinstance(other, (complex, np.complexfloating))
              or isinstance(other, np.ndarray) and other.dtype.kind == "c"):
            return COMPLEX.operation(self, op, other, reflected)
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

    def __rlshift__(self, o): return self._binary("left_shift", o, True)
    def __rrshift__(self, o): return self._binary("right_shift", o, True)

    def _inplace(self, op, other):
        """NumPy's ``x op= y``: ``x`` itself takes the new value (every
        name bound to this object sees it), in ``x``'s dtype; like NumPy,
        a result that would need a wider dtype (``int += float``) is a
        ``DTypeError``."""
        result = self._binary(op, other)
        if result is NotImplemented:
            return NotImplemented
        return _store(result, self, f"{op} (in place)")

    def __iadd__(self, o): return self._inplace("add", o)
    def __isub__(self, o): return self._inplace("subtract", o)
    def __imul__(self, o): return self._inplace("multiply", o)
    def __itruediv__(self, o): return self._inplace("divide", o)
    def __ifloordiv__(self, o): return self._inplace("floor_divide", o)
    def __imod__(self, o): return self._inplace("remainder", o)
    def __ipow__(self, o): return self._inplace("power", o)
    def __iand__(self, o): return self._inplace("bitwise_and", o)
    def __ior__(self, o): return self._inplace("bitwise_or", o)
    def __ixor__(self, o): return self._inplace("bitwise_xor", o)
    def __ilshift__(self, o): return self._inplace("left_shift", o)
    def __irshift__(self, o): return self._inplace("right_shift", o)

    def __neg__(self): return Array(self._a.unary("negative"))
    def __pos__(self): return self
    def __abs__(self): return Array(self._a.unary("abs"))
    def __invert__(self): return Array(self._a.unary("invert"))

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        """NumPy's ``astype``: a cast array (``casting`` checked as NumPy
        does); this one itself when ``copy=False`` and the dtype is its own."""
        name = _dtype_name(dtype)
        if not copy and name == self._a.dtype_name:
            return self
        if name in ("complex64", "complex128"):
            return COMPLEX.from_real(self, name)
        if casting != "unsafe" and name != "bfloat16" and isinstance(self.dtype, np.dtype) \
                and not np.can_cast(self.dtype, name, casting):
            raise DTypeError(f"astype: cannot cast array data from {self.dtype} to {name} "
                             f"according to the rule '{casting}'")
        return Array(self._a.astype(name))

    def view(self, dtype=None):
        """NumPy's ``a.view(dtype)`` for a dtype of the same element size:
        each element's bits read as ``dtype`` (lazy, fused like a cast)."""
        if dtype is None:
            return self
        return Array(self._a.view(_dtype_name(dtype)))

    def reshape(self, *shape, order="C", copy=None):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        if _fortran("reshape", order):
            # Column-major: the axes reversed, reshaped row-major, reversed back.
            reversed_shape = tuple(reversed([operator.index(d) for d in shape]))
            return self.transpose().reshape(reversed_shape).transpose()
        shape = [operator.index(d) for d in shape]
        if shape.count(-1) > 1 or any(d < -1 for d in shape):
            raise ArgumentError(
                f"reshape: new shape {tuple(shape)} (expected sizes of at least 0, and at most one -1)"
            )
        if -1 in shape:
            known = 1
            for d in shape:
                if d != -1:
                    known *= d
            shape[shape.index(-1)] = self.size // known if known else 0
        if _shape_len(shape) != self.size:
            return Array(self._a.reshape(shape))  # the native error names both shapes
        return OPERATIONS["reshaped"](self, shape)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = axes[0]
        axes = [operator.index(a) for a in axes]
        if not axes:
            return OPERATIONS["transposed"](self, None)
        axes = [a + self.ndim if a < 0 else a for a in axes]
        if sorted(axes) != list(range(self.ndim)):
            return Array(self._a.transpose(axes))  # the native error names the axes
        return OPERATIONS["transposed"](self, axes)

    def __getitem__(self, key):
        """Basic indexing: ints and slices make views that share this
        array's value (see `_views`); ``...`` and ``None`` are allowed. Integer
        and boolean array indices give a new array (see `_fancy`)."""
        return OPERATIONS["index"](self, key)

    def take(self, indices, axis=None, out=None, mode="raise"):
        """NumPy's ``take`` (see `_fancy`): the elements at ``indices``."""
        return OPERATIONS["take"](self, indices, axis, out, mode)

    def sort(self, axis=-1, kind=None, order=None, *, stable=None):
        """NumPy's ``ndarray.sort``: this array takes its sorted value (see
        `_sorting`)."""
        OPERATIONS["sort_in_place"](self, axis, kind, order, stable=stable)

    def argsort(self, axis=-1, kind=None, order=None, *, stable=None):
        """NumPy's ``ndarray.argsort``: the positions that sort this array
        (see `_sorting`)."""
        return OPERATIONS["argsort"](self, axis, kind, order, stable=stable)

    def searchsorted(self, v, side="left", sorter=None):
        """NumPy's ``ndarray.searchsorted`` (see `_sorting`)."""
        return OPERATIONS["searchsorted"](self, v, side, sorter)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        """NumPy's ``diagonal`` (see `_diagonals`)."""
        return OPERATIONS["diagonal"](self, offset, axis1, axis2)

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        """NumPy's ``trace``: the sum along the diagonal."""
        return OPERATIONS["trace"](self, offset, axis1, axis2, dtype, out)

    def put(self, indices, values, mode="raise"):
        """NumPy's ``put``: ``x.flat[indices] = values`` (see `_fancy`)."""
        OPERATIONS["put"](self, indices, values, mode)

    def __setitem__(self, key, value):
        """``x[key] = value``: ``x`` takes the new value, as do the views of
        it. Basic indices write a region; array indices scatter (see
        `_fancy`)."""
        OPERATIONS["assign_index"](self, key, value)

    def _rebind(self, native):
        """Makes this array hold ``native``'s value (``out=``, ``x += y``, a
        kernel's write); a view writes the array it views instead."""
        self._a.assign(native)
        self._rebound = True

    def _reduce(self, name, axis=None, keepdims=False, ddof=0):
        """The native reduction (no NumPy keywords: see `_reductions`); the
        native side says which reductions take several axes."""
        return Array(self._a.reduce(name, axis, keepdims, ddof))

    # NumPy's signatures; the keywords' rules are in `_reductions`, which
    # registers its functions under their names.
    def sum(self, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
        return OPERATIONS["reduce"](self, "sum", axis, dtype, out, keepdims, initial, where)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
        return OPERATIONS["reduce"](self, "prod", axis, dtype, out, keepdims, initial, where)

    def min(self, axis=None, out=None, keepdims=False, initial=None, where=True):
        return OPERATIONS["reduce"](self, "min", axis, None, out, keepdims, initial, where)

    def max(self, axis=None, out=None, keepdims=False, initial=None, where=True):
        return OPERATIONS["reduce"](self, "max", axis, None, out, keepdims, initial, where)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
        return OPERATIONS["reduce"](self, "mean", axis, dtype, out, keepdims, None, where)

    def any(self, axis=None, out=None, keepdims=False, *, where=True):
        return OPERATIONS["reduce"](self, "any", axis, None, out, keepdims, None, where)

    def all(self, axis=None, out=None, keepdims=False, *, where=True):
        return OPERATIONS["reduce"](self, "all", axis, None, out, keepdims, None, where)

    def argmax(self, axis=None, out=None, *, keepdims=False):
        return OPERATIONS["arg_reduce"](self, "argmax", axis, out, keepdims)

    def argmin(self, axis=None, out=None, *, keepdims=False):
        return OPERATIONS["arg_reduce"](self, "argmin", axis, out, keepdims)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
            mean=None, correction=None):
        return OPERATIONS["moment"](self, "var", axis, dtype, out, ddof, keepdims, where, mean,
                                  correction)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
            mean=None, correction=None):
        return OPERATIONS["moment"](self, "std", axis, dtype, out, ddof, keepdims, where, mean,
                                  correction)

    def cumsum(self, axis=None, dtype=None, out=None):
        return OPERATIONS["accumulate"](self, "cumsum", axis, dtype, out)

    def cumprod(self, axis=None, dtype=None, out=None):
        return OPERATIONS["accumulate"](self, "cumprod", axis, dtype, out)

    def __matmul__(self, o):
        if isinstance(o, COMPLEX.types):
            return NotImplemented  # the complex array's __rmatmul__
        o = o if isinstance(o, Array) else self._like(o)
        if isinstance(o, COMPLEX.types):
            return o.__rmatmul__(self)
        return OPERATIONS["matmul"](self, o)

    def __rmatmul__(self, o):
        o = self._like(o)
        if isinstance(o, COMPLEX.types):
            return o @ self
        return OPERATIONS["matmul"](o, self)

    def __imatmul__(self, o):
        return _store(self @ o, self, "matmul (in place)")

    def round(self, decimals=0, out=None):
        """NumPy's ``round``: half to even, at ``decimals`` places (NumPy's
        ``rint(x * 10**d) / 10**d``; integers by a negative ``decimals``
        in integer arithmetic), lazily."""
        decimals = operator.index(decimals)
        if self.dtype == np.bool_:
            raise DTypeError("round: not supported for bool (NumPy's ufunc loop is missing too)")
        integer = self.dtype != "bfloat16" and self.dtype.kind in "iu"
        if integer and decimals >= 0:
            result = self
        elif integer:
            scale = 10 ** -decimals
            if scale > np.iinfo(self.dtype).max:
                result = self * 0
            else:
                quotient = self // scale
                twice = (self - quotient * scale) * 2
                up = (twice > scale) | ((twice == scale) & (quotient % 2 == 1))
                result = (quotient + up.astype(self.dtype)) * scale
        elif decimals == 0:
            result = Array(self._a.unary("round"))
        elif decimals > 0:
            scale = 10.0 ** decimals
            result = Array((self * scale)._a.unary("round")) / scale
        else:
            scale = 10.0 ** -decimals
            result = Array((self / scale)._a.unary("round")) * scale
        return result if out is None else _store(result, out, "round")

    __round__ = round

    def __divmod__(self, o): return self // o, self % o
    def __rdivmod__(self, o): return self.__rfloordiv__(o), self.__rmod__(o)

    # --- shapes (views, as NumPy's: see `_views`) ----------------------------
    def ravel(self, order="C"):
        if _fortran("ravel", order):
            return self.transpose().reshape(-1)
        return self.reshape(-1)

    def flatten(self, order="C"):
        return Array(self.ravel(order)._a.reshape([self.size]))  # a copy: a value of its own

    def squeeze(self, axis=None):
        axes = _axes(self, axis, "squeeze") if axis is not None else [
            a for a, n in enumerate(self.shape) if n == 1]
        if any(self.shape[a] != 1 for a in axes):
            raise ShapeError(f"squeeze: axis {axis} of shape {self.shape} does not have length 1")
        return self.reshape(tuple(n for a, n in enumerate(self.shape) if a not in axes))

    def swapaxes(self, axis1, axis2):
        order = list(range(self.ndim))
        a, b = _axes(self, axis1, "swapaxes")[0], _axes(self, axis2, "swapaxes")[0]
        order[a], order[b] = order[b], order[a]
        return self.transpose(order)

    def clip(self, min=None, max=None, out=None, *, a_min=None, a_max=None):
        """NumPy's ``clip``: ``minimum(maximum(x, min), max)`` (lazy, fused)."""
        min, max = a_min if min is None else min, a_max if max is None else max
        if min is None and max is None:
            result = self.copy()  # the array API's clip without bounds, as NumPy 2.1's
            return result if out is None else _store(result, out, "clip")
        result = self if min is None else np.maximum(self, min)
        result = result if max is None else np.minimum(result, max)
        return result if out is None else _store(result, out, "clip")

    def copy(self, order="C"):
        """A new handle on the same value (values are immutable, so nothing
        is copied; ``x += 1`` on one does not change the other)."""
        return Array(self._a.copy())

    def tolist(self):
        return self.numpy().tolist()

    # --- demands ----------------------------------------------------------
    def numpy(self):
        """Computes the array and returns a NumPy copy."""
        return self._a.numpy()

    def _like(self, value):
        """``value`` (anything NumPy takes) as an array of this one's context."""
        value = np.asarray(value, order="C")
        if value.dtype.kind == "c":
            return COMPLEX.from_numpy(self._a, value)
        return Array(self._a.like(value))

    def get(self, stream=None, order="C", out=None, blocking=True):
        """CuPy's (and PyCUDA's ``GPUArray``'s) ``get``: the value as a NumPy
        array, or written into ``out``."""
        return self.copy_to_host(out=out) if out is not None else self._a.numpy()

    def copy_to_host(self, out=None, stream=0):
        """Numba's ``copy_to_host``: a NumPy copy, or written into ``out``
        (after the work queued on ``stream``). ``out`` has the array's
        shape up to axes of length 1, as in Numba (else ``ShapeError``),
        and a dtype the array's casts to safely (else ``DTypeError``;
        Numba wants the same dtype)."""
        if not isinstance(stream, int):
            stream.synchronize()
        _keep_rebound((self,))
        if out is None:
            return self._a.numpy()
        if (type(out) is np.ndarray and out.dtype is _numpy_dtype(self._a.dtype_name)
                and out.flags.c_contiguous and out.flags.writeable and out.shape == self.shape):
            self._a.read_into(out)  # the common case, kept short: computed straight into `out`
            return out
        if not isinstance(out, np.ndarray):
            raise TypeError(f"copy_to_host: out must be a NumPy array, not {type(out).__name__}")
        if out.dtype != self.dtype and not np.can_cast(self.dtype, out.dtype, "safe"):
            raise DTypeError(
                f"copy_to_host: out has dtype {out.dtype}, the array {self.dtype} (expected a dtype "
                f"{self.dtype} casts to safely)"
            )
        squeezed = lambda shape: tuple(n for n in shape if n != 1)
        if squeezed(out.shape) != squeezed(self.shape):
            raise ShapeError(f"copy_to_host: out has shape {out.shape}, the array {self.shape} (expected the same)")
        value = self if out.shape == self.shape else self.reshape(out.shape)
        if out.flags.c_contiguous and out.flags.writeable and out.dtype == self.dtype:
            value._a.read_into(out)  # computed straight into `out`
        else:
            np.copyto(out, value._a.numpy())
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

    # --- the array API standard -------------------------------------------
    def __array_namespace__(self, *, api_version=None):
        """The array API namespace of the array: ``lazyfuse``."""
        return OPERATIONS["array_namespace"](api_version)

    @property
    def device(self):
        """The array API's device: its context's backend (``lazyfuse.Device``)."""
        return Device(self._a.backend)

    def to_device(self, device, /, *, stream=None):
        """The array on ``device`` (a ``lazyfuse.Device``, a ``Context`` or a
        backend name): itself when it is there, else a copy of its value."""
        return OPERATIONS["to_device"](self, device, stream)

    def __reduce__(self):
        # Pickled as its computed value (Dask's distributed scheduler moves
        # chunks between processes this way); unpickling makes an array of
        # the receiving process's default context.
        return (_unpickled, (self._a.numpy_view(),))

    def __array__(self, dtype=None, copy=None):
        # A computed value is handed out read-only, without a copy (as JAX
        # does); one not computed yet is computed into new NumPy memory.
        # ``copy=True`` always gives new, writeable memory.
        value = self._a.numpy() if copy else self._a.numpy_view()
        return value if dtype is None else value.astype(dtype, copy=False)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack export of the computed value: its kept host memory itself,
        read-only, to a consumer of DLPack 1.0 or later (which can be told
        it is read-only), as ``np.asarray`` gets it; a new copy when
        ``copy=True`` or for an older consumer (``copy=False`` then raises
        ``BufferError``). Takes the DLPack 2023 keywords NumPy passes."""
        if dl_device is not None and tuple(dl_device) != (1, 0):
            raise BufferError(f"__dlpack__: lazyfuse exports to the host (kDLCPU), not device {dl_device}")
        if not copy and max_version is not None and tuple(max_version) >= (1, 0):
            return self._a.numpy_view().__dlpack__(max_version=max_version)
        if copy is False:
            raise BufferError("__dlpack__: a consumer of DLPack before 1.0 cannot be told the "
                              "shared value is read-only; copy=False cannot be honoured")
        value = self._a.numpy()
        if max_version is None:
            return value.__dlpack__()
        return value.__dlpack__(max_version=max_version)

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
        if method == "__call__" and out is None and not kwargs:
            # NumPy's ufuncs that are one native operation (np.exp(x),
            # np.add(x, 1.0)): straight to it, a few microseconds sooner.
            direct = _DIRECT.get(ufunc)
            if direct is None:
                direct = _DIRECT[ufunc] = OPERATIONS["ufunc_direct"](ufunc) or False
            if direct:
                result = direct(*inputs)
                if result is not None:
                    return result
        if method in ("reduce", "accumulate"):
            result = OPERATIONS["ufunc_reduction"](ufunc, method, inputs, dict(kwargs, out=out))
            if result is not None:
                return result
        if method != "__call__":
            return OPERATIONS["ufunc_method"](ufunc, method, inputs, out, kwargs)
        if not set(kwargs) <= OPERATIONS["ufunc_options"](ufunc):
            return NotImplemented
        for x in inputs:
            if not isinstance(x, (Array, np.ndarray, np.generic, bool, int, float)):
                return NotImplemented
        return OPERATIONS["ufunc_call"](ufunc, inputs, out, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        # NumPy's functions lazyfuse has (`_numpy`, `linalg`) stay lazy.
        name = func.__name__
        if name == "where":
            return where(*args, **kwargs)
        table = {"numpy.linalg": LINALG_FUNCTIONS, "numpy.fft": FFT_FUNCTIONS}.get(
            func.__module__, FUNCTIONS)
        lazy = table.get(name)
        if lazy is not None:
            return lazy(*args, **kwargs)
        # Anything else runs in NumPy on computed values.
        def computed(x):
            if isinstance(x, Array):
                return x.numpy()
            if isinstance(x, (list, tuple)):
                return type(x)(computed(y) for y in x)
            return x
        return func(*computed(args), **{k: computed(v) for k, v in kwargs.items()})


def _keep_rebound(arrays):
    """Computes and keeps the values of the arrays among ``arrays`` that
    kernels, ``out=`` or ``+=`` re-bound and that are not computed yet
    (`copy_to_host`, `compute`). Such an array is state a loop carries:
    computed straight into a destination and not kept, the chain of
    launches that re-bound it would run again from the start at every later
    demand (an increment kernel launched and copied back in a loop: 3.8 ms
    an iteration at the 250th, 0.07 ms kept). Other arrays are computed
    straight into their destination."""
    rebound = [a._a for a in arrays
               if getattr(a, "_rebound", False) and not a._a.is_materialized]
    if rebound:
        _native.eval_all(rebound)


def _unpickled(value):
    """A pickled array (``Array.__reduce__``) rebuilt in this process's
    default context."""
    return OPERATIONS["asarray"](value)


def _store(result, out, what, casting="same_kind"):
    """Writes ``result`` into ``out`` (a lazyfuse or NumPy array) as a
    ufunc's ``out=`` does: broadcast to ``out``'s shape and cast with
    NumPy's ``same_kind`` rule (else ``DTypeError``; reductions cast
    ``unsafe``ly). A lazyfuse ``out`` is re-bound to the value; a NumPy one
    is written (straight into it when it is dense)."""
    if (isinstance(result.dtype, np.dtype) and isinstance(out.dtype, np.dtype)
            and not np.can_cast(result.dtype, out.dtype, casting)):
        raise DTypeError(
            f"{what}: cannot write a {result.dtype} result into an out of dtype {out.dtype} "
            f"(NumPy's {casting} casting)"
        )
    if result.shape != out.shape:
        result = Array(result._a.broadcast_to(list(out.shape)))
    if result.dtype != out.dtype:
        result = result.astype(out.dtype)
    if isinstance(out, Array):
        out._rebind(result._a)
    elif out.flags.c_contiguous and out.flags.writeable and isinstance(result.dtype, np.dtype):
        result._a.read_into(out)
    else:
        np.copyto(out, result._a.numpy())
    return out


def _shape_len(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _axes(x, axis, name):
    """The axes `axis` names (None: all), each checked and made positive."""
    ndim = x.ndim
    given = tuple(range(ndim)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    axes = sorted({int(a) + ndim if int(a) < 0 else int(a) for a in given})
    if any(not 0 <= a < ndim for a in axes):
        raise AxisError(f"{name}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axes


def _fortran(what, order):
    """Whether ``order`` asks for column-major order (``'F'``); ``'C'``,
    and ``'A'`` and ``'K'`` of a lazy array (its elements are in C order),
    do not; anything else is an error."""
    if order not in ("C", "F", "A", "K"):
        raise ArgumentError(f"{what}: order={order!r} (expected 'C', 'F', 'A' or 'K')")
    return order == "F"


_NO_VALUE = object()
# Operands `where` passes straight to the native call.
_OPERAND_TYPES = frozenset((Array, float, int))


def where(condition, x=_NO_VALUE, y=_NO_VALUE):
    """NumPy's ``where``; while tracing a ``vectorize`` function, the
    traced conditional. With the condition alone, NumPy's
    ``nonzero(condition)`` (computed: their lengths are data)."""
    # The common case in one native call: a lazy condition, and lazy
    # arrays or Python numbers (weak scalars) to choose from.
    if type(condition) is Array:
        tx, ty = type(x), type(y)
        if tx in _OPERAND_TYPES and ty in _OPERAND_TYPES:
            return Array(condition._a.where_(x._a if tx is Array else x,
                                             y._a if ty is Array else y))
    if x is _NO_VALUE and y is _NO_VALUE:
        return FUNCTIONS["nonzero"](condition)
    if x is _NO_VALUE or y is _NO_VALUE:
        raise ArgumentError("where: either both or neither of x and y should be given")
    if any(isinstance(v, _trace.Sym) for v in (condition, x, y)):
        return _trace.where(condition, x, y)
    if not isinstance(condition, Array):
        condition = OPERATIONS["asarray"](condition)
    if any(isinstance(v, COMPLEX.types + (complex, np.complexfloating)) for v in (x, y)):
        return COMPLEX.where(condition, x, y)
    unwrap = lambda v: v._a if isinstance(v, Array) else v
    return Array(condition._a.where_(unwrap(x), unwrap(y)))


def compute(*arrays):
    """Computes several arrays at once and returns them as NumPy arrays,
    in order (a tuple, as ``dask.compute``): one program runs for all of
    them, so work they share (Black–Scholes' ``call`` and ``put``) runs
    once. On the CPU the results are computed straight into the new NumPy
    arrays and not kept (``x.eval()`` keeps a value), but for arrays that
    kernels, ``out=`` or ``+=`` re-bound (state a loop carries: their
    values are kept); arguments that are not lazyfuse arrays come back as
    ``np.asarray`` of them.

        >>> import numpy as np, lazyfuse as lf
        >>> x = lf.asarray(np.arange(3.0))
        >>> lf.compute(x * 2, x.sum())
        (array([0., 2., 4.]), array(3.))
    """
    # Re-bound arrays keep their values (`_keep_rebound`), checked inline
    # on this short path.
    natives, rebound = [], []
    for a in arrays:
        if type(a) is not Array:
            break
        natives.append(a._a)
        if a._rebound and not a._a.is_materialized:
            rebound.append(a._a)
    else:
        # The common case, kept short: a demand of small arrays costs a
        # few microseconds, and this loop is part of them.
        if rebound:
            _native.eval_all(rebound)
        return tuple(_native.compute(natives))
    _keep_rebound(arrays)
    lazy = [i for i, a in enumerate(arrays) if isinstance(a, (Array,) + COMPLEX.types)]
    values = [a if i in lazy else np.asarray(a) for i, a in enumerate(arrays)]
    # Other lazy types (complex arrays) name the native arrays to compute
    # and make their value of them.
    natives, counts = [], []
    for a in map(arrays.__getitem__, lazy):
        parts = [a._a] if isinstance(a, Array) else a._demanded()
        natives += parts
        counts.append(len(parts))
    computed = iter(_native.compute(natives))
    for i, count in zip(lazy, counts):
        parts = [next(computed) for _ in range(count)]
        values[i] = parts[0] if isinstance(arrays[i], Array) else arrays[i]._received(*parts)
    return tuple(values)

