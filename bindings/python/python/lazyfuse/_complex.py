"""``lazyfuse.ComplexArray``: lazy ``complex64``/``complex128`` arrays.

A complex array is two real lazy arrays, its real and imaginary parts
(``z.real``, ``z.imag``), and every complex operation is real work on them
(the native library's formulas, NumPy's: Smith's division, ``abs`` as
``hypot``…), so a chain of complex operations fuses into one kernel as a
real chain does. NumPy's interleaved layout exists only at the boundary:
``lf.asarray`` of a complex NumPy array views it as pairs of reals, and a
demand writes both parts into one NumPy complex array.

    >>> import numpy as np, lazyfuse as lf
    >>> z = lf.asarray(np.array([1 + 2j, 3 - 1j], dtype=np.complex64))
    >>> np.asarray(abs(z * 1j + 1)).round(3)
    array([1.414, 4.123], dtype=float32)
"""

import operator
import warnings

import numpy as np

from . import _array, _native, _rounds
from ._array import Array
from ._registry import FFT_FUNCTIONS, FUNCTIONS, OPERATIONS
from .errors import ArgumentError, DTypeError, ShapeError

# NumPy's ufuncs lazyfuse computes on complex arrays, from the native
# library's tables (`ComplexUnary`, `ComplexBinary`).
_UNARY = frozenset(_native.complex_unary_names())
_BINARY = frozenset(_native.complex_binary_names())


def _wrap(result):
    """A native complex result (a pair of parts) or real one, wrapped."""
    if isinstance(result, tuple):
        return ComplexArray(*result)
    return Array(result)


def _complex_dtype(dtype):
    name = np.dtype(dtype).name
    if name not in ("complex64", "complex128"):
        raise DTypeError(f"{name} is not a complex dtype (expected complex64 or complex128)")
    return name


class ComplexArray:
    """A lazy complex array (see the module documentation): NumPy's
    arithmetic, comparisons ``==``/``!=``, the complex ufuncs, ``sum``,
    ``mean``, views that act on both parts (``reshape``, ``T``, indexing),
    and demands (``np.asarray``, ``lf.compute``)."""

    __slots__ = ("_re", "_im")
    __array_priority__ = 101

    def __init__(self, re, im):
        self._re, self._im = re, im

    # --- construction -----------------------------------------------------
    @classmethod
    def _from_numpy(cls, value, cx):
        """A complex NumPy array's parts copied into ``cx`` (a native context
        or array, whose context is meant), in one pass on all cores."""
        if value.dtype not in (np.complex64, np.complex128):
            raise DTypeError(f"asarray: cannot hold a NumPy array of dtype {value.dtype} "
                             "(expected complex64 or complex128 among complex dtypes)")
        # (np.ascontiguousarray would make a 0-d array 1-d.)
        return cls(*cx.complex_parts(np.asarray(value, order="C")))

    @classmethod
    def _from_real(cls, x, dtype=None):
        """The lazy real array ``x`` as complex (of ``dtype``, else the dtype
        holding it: ``complex64`` for ``float32``, else ``complex128``)."""
        name = None if dtype is None else _complex_dtype(dtype)
        return cls(*_native.complex_from_real(x._a, name))

    # --- properties -------------------------------------------------------
    @property
    def real(self):
        return Array(self._re)

    @property
    def imag(self):
        return Array(self._im)

    @property
    def shape(self):
        return tuple(self._re.shape)

    @property
    def ndim(self):
        return len(self._re.shape)

    @property
    def size(self):
        return _array._shape_len(self._re.shape)

    @property
    def dtype(self):
        return np.dtype("complex64" if self._re.dtype_name == "float32" else "complex128")

    @property
    def device(self):
        """The array API's device: the parts' context's."""
        return self.real.device

    def __dlpack_device__(self):
        return self.real.__dlpack_device__()

    def to_device(self, device, /, *, stream=None):
        """The array API's ``to_device``: both parts moved."""
        return self._views(lambda p: p.to_device(device, stream=stream))

    @property
    def T(self):
        return self._views(lambda p: p.T)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __repr__(self):
        return f"lazyfuse.ComplexArray({np.array2string(self.numpy(), separator=', ')}, dtype={self.dtype})"

    def __str__(self):
        return str(self.numpy())

    # --- demands ----------------------------------------------------------
    def _demanded(self):
        """The native arrays ``lf.compute`` computes for this one."""
        return [self._re, self._im]

    def _received(self, re, im):
        """This array's value from its computed parts."""
        out = np.empty(self.shape, self.dtype)
        out.real, out.imag = re, im
        return out

    def numpy(self):
        """Computes both parts (one program) and returns them as a new
        NumPy complex array."""
        return _native.complex_numpy(self._re, self._im)

    def __array__(self, dtype=None, copy=None):
        value = self.numpy()
        return value if dtype is None else value.astype(dtype, copy=False)

    def item(self):
        return complex(self.numpy().item())

    def __reduce__(self):
        # Pickled as its computed value, as a real array is (Dask's
        # distributed scheduler moves chunks so); unpickled into the
        # receiving process's default context.
        return (_array._unpickled, (self.numpy(),))

    def __complex__(self):
        return self.item()

    def eval(self):
        """Computes both parts in one demand and keeps them."""
        _native.eval_all([self._re, self._im])
        return self

    def explain(self):
        """The plan computing both parts (``lf.explain_all`` of them)."""
        return _native.explain_all([self._re, self._im])

    # --- arithmetic -------------------------------------------------------
    def _binary(self, op, other, reflected=False):
        if isinstance(other, ComplexArray):
            other = (other._re, other._im)
        elif isinstance(other, Array):
            other = other._a
        elif isinstance(other, (np.ndarray, list, tuple)):
            other = _lazy_of(self, other)
            other = (other._re, other._im) if isinstance(other, ComplexArray) else other._a
        elif isinstance(other, np.generic) and other.dtype.kind in "biufc":
            other = _lazy_of(self, other)  # strong: a 0-d array of its dtype
            other = (other._re, other._im) if isinstance(other, ComplexArray) else other._a
        elif not isinstance(other, (bool, int, float, complex)):
            return NotImplemented
        return _wrap(_native.complex_binary(op, self._re, self._im, other, reflected))

    def __add__(self, o): return self._binary("add", o)
    def __radd__(self, o): return self._binary("add", o, True)
    def __sub__(self, o): return self._binary("subtract", o)
    def __rsub__(self, o): return self._binary("subtract", o, True)
    def __mul__(self, o): return self._binary("multiply", o)
    def __rmul__(self, o): return self._binary("multiply", o, True)
    def __truediv__(self, o): return self._binary("divide", o)
    def __rtruediv__(self, o): return self._binary("divide", o, True)
    def __rpow__(self, o): return self._binary("power", o, True)

    def __matmul__(self, other):
        # Four real products: (a + bi)(c + di) = (ac - bd) + (ad + bc)i.
        if not isinstance(other, (ComplexArray, Array, np.ndarray)):
            return NotImplemented
        other = _as_complex(self, other)
        a, b, c, d = self.real, self.imag, other.real, other.imag
        return ComplexArray(((a @ c) - (b @ d))._a, ((a @ d) + (b @ c))._a)

    def __rmatmul__(self, other):
        if not isinstance(other, (Array, np.ndarray)):
            return NotImplemented
        return _as_complex(self, other) @ self
    def __eq__(self, o): return self._binary("equal", o)
    def __ne__(self, o): return self._binary("not_equal", o)
    __hash__ = None

    def __pow__(self, o):
        # Integer powers multiply (exact where the products are), as NumPy's.
        if isinstance(o, (int, np.integer)) and not isinstance(o, bool):
            return ComplexArray(*_native.complex_powi(self._re, self._im, int(o)))
        return self._binary("power", o)

    def _unary(self, name):
        return _wrap(_native.complex_unary(name, self._re, self._im))

    def __neg__(self): return self._unary("negative")
    def __pos__(self): return self
    def __abs__(self): return self._unary("absolute")

    # NumPy's order of complex values: by real part, then imaginary part
    # (a NaN in either compares false).
    def __lt__(self, o): return _ordered(self, o, "<")
    def __le__(self, o): return _ordered(self, o, "<=")
    def __gt__(self, o): return _ordered(self, o, ">")
    def __ge__(self, o): return _ordered(self, o, ">=")

    def conj(self):
        return self._unary("conjugate")

    conjugate = conj

    def astype(self, dtype, copy=True):
        """The array cast to ``dtype``: a complex dtype casts both parts; a
        real one keeps the real part, as NumPy does (NumPy warns; so does
        lazyfuse, with NumPy's ``ComplexWarning``)."""
        if np.dtype(dtype).kind == "c":
            return ComplexArray(*_native.complex_astype(self._re, self._im, _complex_dtype(dtype)))
        import warnings
        warnings.warn("Casting complex values to real discards the imaginary part",
                      np.exceptions.ComplexWarning, stacklevel=2)
        return self.real.astype(dtype)

    # --- reductions -------------------------------------------------------
    def _reduce(self, mean, axis, keepdims):
        if axis is None:
            axes = list(range(self.ndim))
        else:
            axes = [operator.index(a) for a in (axis if isinstance(axis, tuple) else (axis,))]
        return ComplexArray(*_native.complex_reduce(self._re, self._im, mean, axes, keepdims))

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        result = self._reduce(False, axis, keepdims)
        return _into(result if dtype is None else result.astype(dtype), out, "sum")

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        result = self._reduce(True, axis, keepdims)
        return _into(result if dtype is None else result.astype(dtype), out, "mean")

    def max(self, axis=None, out=None, keepdims=False):
        """The largest value along ``axis`` in NumPy's order of complex
        values (a NaN in either part wins, as NumPy's), in rounds of pairs."""
        result = self._pairwise(lambda a, b: _extreme("maximum", a, b), axis, keepdims, "max")
        return _into(result, out, "max")

    def min(self, axis=None, out=None, keepdims=False):
        """The smallest value along ``axis`` (see ``max``)."""
        result = self._pairwise(lambda a, b: _extreme("minimum", a, b), axis, keepdims, "min")
        return _into(result, out, "min")

    def argmax(self, axis=None, out=None, *, keepdims=False):
        """The position of the first largest value along ``axis`` (of the
        flattened array for None) in NumPy's order of complex values, the
        first NaN where there is one: a tournament of pairs, each keeping
        the earlier of equals."""
        return _into(self._tournament(True, axis, keepdims), out, "argmax", "positions")

    def argmin(self, axis=None, out=None, *, keepdims=False):
        """The position of the first smallest value (see ``argmax``)."""
        return _into(self._tournament(False, axis, keepdims), out, "argmin", "positions")

    def _tournament(self, largest, axis, keepdims):
        a = self.ravel() if axis is None else self
        axis = 0 if axis is None else operator.index(axis) % max(a.ndim, 1)
        x = FUNCTIONS["moveaxis"](a, axis, -1)
        n = x.shape[-1]
        if n == 0:
            raise ValueError(f"attempt to get {'argmax' if largest else 'argmin'} of an empty sequence")
        index = FUNCTIONS["broadcast_to"](
            FUNCTIONS["arange"](n, dtype=np.int64), x.shape)
        def keep_first(evens, odds):
            (x0, i0), (x1, i1) = evens, odds
            nan0 = _array.where(x0.real != x0.real, True, x0.imag != x0.imag)
            nan1 = _array.where(x1.real != x1.real, True, x1.imag != x1.imag)
            first = nan0 | (~nan1 & _ordered(x0, x1, ">=" if largest else "<="))
            return _where(first, x0, x1), _array.where(first, i0, i1)

        _, result = _rounds.pairwise((x, index), keep_first, _concatenate_last)
        if keepdims:
            result = FUNCTIONS["expand_dims"](result, axis) if self.ndim else result
        return result

    def _pairwise(self, combine, axis, keepdims, name):
        axes = range(self.ndim) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
        axes = sorted({operator.index(a) % max(self.ndim, 1) for a in axes}, reverse=True)
        result = self
        for a in axes:
            if result.shape[a] == 0:
                raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
            result = _pairwise_reduce(FUNCTIONS["moveaxis"](result, a, -1), combine)
            result = FUNCTIONS["expand_dims"](result, a) if keepdims else result
        return result

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        """Products along ``axis`` (all axes for None): pairs of elements
        multiplied, then pairs of those, lazily — ``log2 n`` rounds of
        complex multiplication (NumPy multiplies one after another: the
        last bits may differ)."""
        axes = range(self.ndim) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
        axes = sorted({operator.index(a) % max(self.ndim, 1) for a in axes}, reverse=True)
        result = self
        for a in axes:
            result = _pairwise_products(FUNCTIONS["moveaxis"](result, a, -1))
            result = FUNCTIONS["expand_dims"](result, a) if keepdims else result
        return _into(result if dtype is None else result.astype(dtype), out, "prod")

    def cumprod(self, axis=None, dtype=None, out=None):
        """Running products along ``axis`` (of the flattened array for
        None), by doubling: ``log2 n`` rounds, each multiplying every
        element by the product ``2**k`` before it."""
        a = self.ravel() if axis is None else self
        axis = 0 if axis is None else operator.index(axis) % a.ndim
        moved = FUNCTIONS["moveaxis"](a, axis, -1)
        n, shift = moved.shape[-1], 1
        while shift < n:
            head, rest = moved[..., :shift], moved[..., shift:] * moved[..., :n - shift]
            moved = _join(FUNCTIONS["concatenate"], [head, rest], axis=-1)
            shift *= 2
        result = FUNCTIONS["moveaxis"](moved, -1, axis)
        return _into(result if dtype is None else result.astype(dtype), out, "cumprod")

    def argsort(self, axis=-1, kind=None, order=None, *, stable=None, descending=False):
        """NumPy's order of complex values: by real part, then by
        imaginary part (NaNs last), stable — a sort by the imaginary parts,
        then a stable one by the real parts in that order."""
        from ._sorting import argsort
        if axis is None:
            return self.ravel().argsort(0, descending=descending)
        by_imag = argsort(self.imag, axis, descending=descending)
        real = FUNCTIONS["take_along_axis"](self.real, by_imag, axis)
        by_real = argsort(real, axis, descending=descending)
        return FUNCTIONS["take_along_axis"](by_imag, by_real, axis)

    def sort(self, axis=-1, kind=None, order=None, *, stable=None, descending=False):
        """The values in NumPy's order of complex values (``argsort``)."""
        a = self.ravel() if axis is None else self
        axis = -1 if axis is None else axis
        return FUNCTIONS["take_along_axis"](a, a.argsort(axis, descending=descending), axis)

    # --- views ------------------------------------------------------------
    def _views(self, f):
        return ComplexArray(f(Array(self._re))._a, f(Array(self._im))._a)

    def reshape(self, *shape, order="C"):
        return self._views(lambda p: p.reshape(*shape, order=order))

    def ravel(self):
        return self._views(lambda p: p.ravel())

    def transpose(self, *axes):
        return self._views(lambda p: p.transpose(*axes))

    def __getitem__(self, index):
        return self._views(lambda p: p[index])

    def __setitem__(self, index, value):
        """``z[index] = value``: each part written (a new value: views of
        the old one handed out before are unchanged, as for real arrays)."""
        value = _as_complex(self, value)
        re, im = Array(self._re), Array(self._im)
        if isinstance(value, ComplexArray):
            re[index], im[index] = value.real, value.imag
        else:
            re[index], im[index] = complex(value).real, complex(value).imag
        self._re, self._im = re._a, im._a

    def copy(self):
        return self

    def flatten(self, order="C"):
        return self._views(lambda p: p.flatten(order))

    def squeeze(self, axis=None):
        return self._views(lambda p: p.squeeze(axis))

    def swapaxes(self, axis1, axis2):
        return self._views(lambda p: p.swapaxes(axis1, axis2))

    def repeat(self, repeats, axis=None):
        return self._views(lambda p: p.repeat(repeats, axis))

    def take(self, indices, axis=None):
        return self._views(lambda p: p.take(indices, axis))

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return self._views(lambda p: p.diagonal(offset, axis1, axis2))

    def cumsum(self, axis=None, dtype=None, out=None):
        """Running sums: of each part (addition acts on the parts apart)."""
        result = self._views(lambda p: p.cumsum(axis))
        return _into(result if dtype is None else result.astype(dtype), out, "cumsum")

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        return _into(self.diagonal(offset, axis1, axis2).sum(axis=-1, dtype=dtype), out, "trace")

    # --- NumPy's protocols ------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        name = ufunc.__name__
        if method == "__call__" and name in ("vecdot", "matvec", "vecmat"):
            out = kwargs.pop("out", None)
            result = OPERATIONS[name](*inputs, **kwargs)  # `_contractions`'s
            return result if out is None else _store(result, out[0], name, "same_kind")
        out = kwargs.pop("out", None)
        if method != "__call__" or kwargs:
            return NotImplemented
        if out is not None:
            if len(out) != 1:
                return NotImplemented
            result = self.__array_ufunc__(ufunc, method, *inputs)
            if result is NotImplemented:
                return NotImplemented
            return _store(result, out[0], name, "same_kind")
        if len(inputs) == 1 and name in _UNARY:
            return _lazy_of(self, inputs[0])._unary(name)
        if len(inputs) == 2 and name in _EXTREMES:
            like = next(v for v in inputs if isinstance(v, ComplexArray))
            return _extreme(name, *(_as_complex(like, v) for v in inputs))
        if len(inputs) == 2 and name in _ORDER:
            return _ordered(*inputs, _ORDER[name]) if isinstance(inputs[0], ComplexArray) else \
                _ordered(inputs[1], inputs[0], _ORDER[_SWAPPED[name]])
        if len(inputs) == 2 and name == "matmul":
            a, b = inputs
            return a @ b if isinstance(a, ComplexArray) else b.__rmatmul__(a)
        if len(inputs) == 2 and name in _BINARY:
            a, b = inputs
            if isinstance(a, ComplexArray):
                return a._binary(name, b)
            return b._binary(name, a, True)
        return NotImplemented

    def __array_function__(self, func, types, args, kwargs):
        name = func.__name__
        if func.__module__ == "numpy.fft":
            lazy = FFT_FUNCTIONS.get(name)
        else:
            lazy = FUNCTIONS.get(name) if name in _LAZY_FUNCTIONS else None
        if lazy is not None:
            return lazy(*args, **kwargs)
        def computed(x):
            if isinstance(x, (Array, ComplexArray)):
                return x.numpy()
            if isinstance(x, (list, tuple)):
                return type(x)(computed(y) for y in x)
            return x
        return func(*computed(args), **{k: computed(v) for k, v in kwargs.items()})


def _into(result, out, what, kind="values"):
    """``result``, or (with ``out``) ``out`` holding it, as a reduction's
    ``out=`` does in NumPy: of the reduced shape exactly, cast unsafely
    (the imaginary part dropped, with NumPy's ``ComplexWarning``, into a
    real ``out``); positions (``argmax``) only into an integer ``out``."""
    if out is None:
        return result
    if tuple(out.shape) != tuple(result.shape):
        raise ShapeError(f"{what}: out= has shape {tuple(out.shape)}; the result has shape "
                         f"{tuple(result.shape)}")
    if kind == "positions" and not np.issubdtype(out.dtype, np.integer):
        raise DTypeError(f"{what}: out= has dtype {out.dtype}; positions need an integer dtype")
    return _store(result, out, what, "unsafe")


def _store(result, out, what, casting):
    """Writes ``result`` (complex or real, lazy) into ``out`` (a lazyfuse
    complex or real array, or a NumPy array) with NumPy's ``casting`` rule
    and broadcasting, and returns ``out``: a lazyfuse ``out`` is re-bound
    to the value (lazily), a NumPy one written."""
    if not np.can_cast(result.dtype, out.dtype, casting):
        raise DTypeError(f"{what}: cannot write a {result.dtype} result into an out of dtype "
                         f"{out.dtype} (NumPy's {casting} casting)")
    if isinstance(out, ComplexArray):
        value = _as_complex(out, result)
        value = value if value.shape == out.shape else value._views(
            lambda p: Array(p._a.broadcast_to(list(out.shape))))
        value = value.astype(out.dtype)
        out._re, out._im = value._re, value._im
        return out
    if isinstance(result, ComplexArray):
        if np.dtype(out.dtype).kind != "c":
            warnings.warn(f"{what}: casting complex values to real discards the imaginary part",
                          np.exceptions.ComplexWarning, stacklevel=3)
            result = result.real
        elif isinstance(out, np.ndarray):
            np.copyto(out, result.numpy(), casting="unsafe")
            return out
    return _array._store(result, out, what, "unsafe")


def _lazy_of(like, value):
    """``value`` as a lazy array (complex or real) of ``like``'s context."""
    if isinstance(value, (ComplexArray, Array)):
        return value
    value = np.asarray(value)
    if value.dtype.kind == "c":
        return ComplexArray._from_numpy(value, like._re)
    return Array(like._re.like(np.ascontiguousarray(value)))


#: Functions that move, repeat or add elements and never mix the real and
#: imaginary parts: on a complex array, the function of each part.
_PER_PART = ("tile", "repeat", "flip", "fliplr", "flipud", "roll", "rot90", "broadcast_to",
             "expand_dims", "squeeze", "moveaxis", "swapaxes", "permute_dims", "rollaxis",
             "atleast_1d", "atleast_2d", "atleast_3d", "take", "take_along_axis", "diagonal",
             "triu", "tril", "unstack", "split", "array_split", "hsplit", "vsplit", "dsplit",
             "cumsum", "cumulative_sum", "diff", "trace", "ravel", "reshape", "transpose")


def _per_part(function):
    """``function`` (of a real array first) taking a complex array too:
    applied to each part, the results paired again (lists and tuples of
    results pair element by element)."""
    def apply(a, *args, **kwargs):
        if not isinstance(a, ComplexArray):
            return function(a, *args, **kwargs)
        if kwargs.get("out") is not None:
            raise ArgumentError(f"{function.__name__}: out= is not supported for complex arrays yet")
        kwargs.pop("out", None)
        dtype = kwargs.pop("dtype", None)
        re, im = function(a.real, *args, **kwargs), function(a.imag, *args, **kwargs)
        if isinstance(re, (list, tuple)):
            return type(re)(ComplexArray(r._a, i._a) for r, i in zip(re, im))
        result = ComplexArray(re._a, im._a)
        return result if dtype is None else result.astype(dtype)

    apply.__name__ = apply.__qualname__ = function.__name__
    apply.__doc__ = function.__doc__
    return apply


def _by_method(function):
    """``function`` taking a complex array too: its method of that name."""
    def apply(a, *args, **kwargs):
        if isinstance(a, ComplexArray):
            return getattr(a, function.__name__)(*args, **kwargs)
        return function(a, *args, **kwargs)

    apply.__name__ = apply.__qualname__ = function.__name__
    apply.__doc__ = function.__doc__
    return apply


def accept_complex(functions):
    """Makes NumPy's functions in ``functions`` (the namespace, filled:
    `_numpy` calls this last) that have no complex form of their own take
    complex arrays too: per part (`_PER_PART`), or by the complex array's
    method (``sort``, ``argsort``)."""
    for name in _PER_PART:
        if name in functions:
            functions[name] = _per_part(functions[name])
    for name in ("sort", "argsort"):
        functions[name] = _by_method(functions[name])


_EXTREMES = ("maximum", "minimum", "fmax", "fmin")
_ORDER = {"less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">="}
_SWAPPED = {"less": "greater", "greater": "less", "less_equal": "greater_equal",
            "greater_equal": "less_equal"}


def _ordered(a, b, op):
    """``a op b`` in NumPy's order of complex values: the real parts
    decide, the imaginary parts where those are equal; false where either
    value has a NaN."""
    b = _as_complex(a, b)
    part = lambda v, name: getattr(v, name) if isinstance(v, ComplexArray) else getattr(complex(v), name)
    (ar, ai), (br, bi) = (a.real, a.imag), (part(b, "real"), part(b, "imag"))
    strict = {"<": ar < br, ">": ar > br, "<=": ar < br, ">=": ar > br}[op]
    tie = {"<": ai < bi, ">": ai > bi, "<=": ai <= bi, ">=": ai >= bi}[op]
    numbers = (ai == ai) & (bi == bi)  # (a NaN real part fails both tests already)
    return (strict | ((ar == br) & tie)) & numbers


def _extreme(name, a, b):
    """NumPy's ``maximum``/``minimum`` (a NaN in either part of either wins)
    and ``fmax``/``fmin`` (a NaN loses) of complex values, in NumPy's order."""
    a_nan = _array.where(a.real != a.real, True, a.imag != a.imag)
    b_nan = _array.where(b.real != b.real, True, b.imag != b.imag)
    pick_a = _ordered(a, b, ">=") if name in ("maximum", "fmax") else _ordered(a, b, "<=")
    if name in ("maximum", "minimum"):
        pick_a = a_nan | (pick_a & ~b_nan)
    else:
        pick_a = b_nan | (pick_a & ~a_nan)
    return _where(pick_a, a, b)


def _pairwise_reduce(a, combine):
    """``combine`` of the elements along the last axis of ``a``: halves
    combined in rounds."""
    (result,) = _rounds.pairwise((a,), lambda x, y: (combine(x[0], y[0]),), _concatenate_last)
    return result


def _concatenate_last(arrays):
    """``arrays`` (complex or real) joined along the last axis."""
    concatenate = FUNCTIONS["concatenate"]
    if any(isinstance(a, ComplexArray) for a in arrays):
        return _join(concatenate, arrays, axis=-1)
    return concatenate(arrays, axis=-1)


def _pairwise_products(a):
    """Products along the last axis of ``a``: halves multiplied in rounds."""
    if a.shape[-1] == 0:
        ones = FUNCTIONS["ones"](a.shape[:-1], dtype=a.real.dtype)
        return ComplexArray(ones._a, (ones * 0)._a).astype(a.dtype)
    return _pairwise_reduce(a, lambda x, y: x * y)


# NumPy's functions that stay lazy on complex arrays (the others compute
# the array and run in NumPy).
_LAZY_FUNCTIONS = {"real", "imag", "conj", "conjugate", "angle", "iscomplexobj", "isrealobj",
                   "isreal", "iscomplex", "sum", "mean", "absolute", "abs", "exp", "sqrt", "log",
                   "isnan", "isinf", "isfinite", "concatenate", "concat", "stack", "where",
                   "matmul", "prod", "cumprod", "sort", "argsort", "max", "min", "amax", "amin",
                   "argmax", "argmin", *_PER_PART}


def _lift(x, op, other, reflected):
    """``x`` (real, lazy) with a complex number or NumPy array ``other``:
    ``x`` made complex (``complex64`` for ``float32``, else ``complex128``,
    or with a NumPy complex scalar, which is strong, their joint dtype),
    then the complex operation."""
    dtype = np.result_type(x.dtype, other.dtype) if isinstance(other, np.generic) else None
    return ComplexArray._from_real(x, dtype)._binary(op, other, reflected)


def _as_complex(like, value):
    """``value`` (complex or real, lazy or not) as a complex lazy array of
    ``like``'s context."""
    value = _lazy_of(like, value) if not isinstance(value, (int, float, complex)) else value
    if isinstance(value, ComplexArray):
        return value
    if isinstance(value, Array):
        return ComplexArray._from_real(value)
    return value  # a Python number: each part takes its own


def _join(function, arrays, **keywords):
    """A joining ``function`` (``concatenate``) of arrays some of which are
    complex: applied to the real parts and to the imaginary parts."""
    like = next(a for a in arrays if isinstance(a, ComplexArray))
    arrays = [_as_complex(like, a) for a in arrays]
    dtype = keywords.pop("dtype", None)
    parts = [function([getattr(a, part) for a in arrays], **keywords) for part in ("real", "imag")]
    result = ComplexArray(parts[0]._a, parts[1]._a)
    # The parts' dtypes promote as the complex dtypes do.
    result = result.astype(np.result_type(*[a.dtype for a in arrays]))
    return result if dtype is None else result.astype(dtype)


def _where(condition, x, y):
    """``where`` choosing between values one of which is complex: on each part."""
    like = next((v for v in (x, y) if isinstance(v, ComplexArray)), None)
    if like is None:
        like = ComplexArray._from_real(condition.astype(np.float64))
    x, y = _as_complex(like, x), _as_complex(like, y)
    part = lambda v, name: getattr(v, name) if isinstance(v, ComplexArray) else getattr(complex(v), name)
    re = _array.where(condition, part(x, "real"), part(y, "real"))
    im = _array.where(condition, part(x, "imag"), part(y, "imag"))
    return ComplexArray(re._a, im._a)


_array.COMPLEX.types = (ComplexArray,)
_array.COMPLEX.join = _join
_array.COMPLEX.where = _where
_array.COMPLEX.operation = _lift
_array.COMPLEX.from_real = ComplexArray._from_real
_array.COMPLEX.from_numpy = lambda native, value: ComplexArray._from_numpy(value, native)
_array.COMPLEX.from_parts = ComplexArray
