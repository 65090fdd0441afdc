"""NumPy's namespace over lazy arrays, as CuPy gives one: ``lf.exp(x)``,
``lf.sum(x, axis=0)``, ``lf.nanmax(x)``, ``lf.concatenate([x, y])``,
``lf.linspace(0, 1, 5)``, ``lf.tril(m)``…

Every function takes lazyfuse arrays, NumPy arrays, sequences or numbers
and returns a lazy array, in the context of its lazy arguments (else the
current one). NumPy's own functions called on lazyfuse arrays
(``np.concatenate([x, y])``, ``np.nanmean(x)``) come here too, through
``Array.__array_function__``. Results follow NumPy: dtypes by its
promotion (Python numbers are weak, NEP 50), shapes, NaN rules, errors
(``lazyfuse.ShapeError`` and friends, which are NumPy's ``ValueError``…).
A few functions answer a question and so demand their operands:
``allclose`` and ``array_equal`` return Python bools."""

import collections

import numpy as np

from . import (_arrangements, _compat, _complex, _contractions, _diagonals, _fancy, _generated, _ufuncs,
               _histograms, _host, _joins, _pad, _polynomials, _quantiles, _ranges, _sorting,
               _statistics)
from ._array import Array, COMPLEX, _axes, _store, where
from ._creation import _lazy, _one, full_like
from ._joins import concatenate, moveaxis
from ._registry import FUNCTIONS
from .errors import ArgumentError, ShapeError

# NumPy's ufuncs lazyfuse computes lazily (``Array.__array_ufunc__``),
# offered under their NumPy names.
_UFUNCS = (
    "absolute", "add", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2",
    "arctanh", "bitwise_and", "bitwise_or", "bitwise_xor", "cbrt", "ceil", "copysign", "cos",
    "cosh", "deg2rad", "degrees", "divide", "divmod", "equal", "exp", "exp2", "expm1", "fabs",
    "float_power", "floor", "floor_divide", "fmax", "fmin", "fmod", "greater", "greater_equal",
    "heaviside", "hypot", "invert", "isfinite", "isinf", "isnan", "left_shift", "less",
    "less_equal", "log", "log10", "log1p", "log2", "logaddexp", "logaddexp2", "logical_and",
    "logical_not", "logical_or", "logical_xor", "matmul", "maximum", "minimum", "mod",
    "multiply", "negative", "not_equal", "positive", "power", "rad2deg", "radians",
    "reciprocal", "remainder", "right_shift", "rint", "sign", "signbit", "sin", "sinh", "sqrt",
    "square", "subtract", "tan", "tanh", "true_divide", "trunc", "modf", "gcd", "lcm",
    "nextafter", "spacing", "bitwise_count", "vecdot", "matvec", "vecmat", "ldexp", "frexp",
)
# NumPy 2's array-API names of its ufuncs.
_ALIASES = {"abs": "absolute", "bitwise_not": "invert", "pow": "power", "acos": "arccos",
            "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh", "atan": "arctan",
            "atan2": "arctan2", "atanh": "arctanh", "bitwise_invert": "invert",
            "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift"}

def _function(f):
    FUNCTIONS[f.__name__] = f
    return f


class ufunc:
    """One of NumPy's ufuncs over lazy arrays, as CuPy's ``cupy.ufunc``:
    called (``lf.add(a, b)``) or through its methods ``reduce``,
    ``accumulate``, ``outer``, ``reduceat`` and ``at``, each as NumPy's
    (lazy where lazyfuse computes it lazily; see ``docs/python.md``). Its
    other attributes (``nin``, ``nout``, ``identity``, ``types``…) are
    NumPy's."""

    def __init__(self, name):
        self._ufunc = getattr(np, _ALIASES.get(name, name))
        self._direct = _ufuncs.direct(self._ufunc)
        self._nin = self._ufunc.nin
        self.__name__ = self.__qualname__ = name
        self.__doc__ = f"NumPy's ``{self._ufunc.__name__}``, lazily (fused with the work around it)."

    def __call__(self, *args, **kwargs):
        # The hot call (``lf.exp(x)``, ``lf.add(x, y)``): no keywords, one
        # native operation. (No ``out=`` parameter: parsing it cost more
        # than NumPy's own dispatch to ``__array_ufunc__``.)
        if not kwargs and self._direct is not None and len(args) == self._nin:
            result = self._direct(*args)
            if result is not None:
                return result
            if isinstance(args[0], COMPLEX.types):
                return self._ufunc(*args)  # straight to the complex array's __array_ufunc__
        inputs = _lazy(args[:self._nin]) + list(args[self._nin:])
        return self._ufunc(*inputs, **kwargs)

    def reduce(self, array, *args, **kwargs):
        """NumPy's ``ufunc.reduce`` of ``array``."""
        return self._ufunc.reduce(_one(array), *args, **kwargs)

    def accumulate(self, array, *args, **kwargs):
        """NumPy's ``ufunc.accumulate`` of ``array``."""
        return self._ufunc.accumulate(_one(array), *args, **kwargs)

    def reduceat(self, array, indices, *args, **kwargs):
        """NumPy's ``ufunc.reduceat`` of ``array`` (computed in NumPy)."""
        return self._ufunc.reduceat(_one(array), indices, *args, **kwargs)

    def outer(self, a, b, **kwargs):
        """NumPy's ``ufunc.outer``: every pair of ``a``'s and ``b``'s elements."""
        return self._ufunc.outer(*_lazy([a, b]), **kwargs)

    def at(self, array, indices, *args):
        """NumPy's ``ufunc.at``: ``array`` (a lazy array) updated in place at
        ``indices``."""
        return self._ufunc.at(array, indices, *args)

    def __getattr__(self, name):
        if name.startswith("_"):  # no delegation before __init__ (copy, pickle)
            raise AttributeError(name)
        return getattr(self._ufunc, name)

    def __reduce__(self):
        return ufunc, (self.__name__,)

    def __repr__(self):
        return f"<lazyfuse ufunc '{self.__name__}'>"


for _name in _UFUNCS + tuple(_ALIASES):
    FUNCTIONS[_name] = ufunc(_name)
FUNCTIONS["ufunc"] = ufunc


# --- reductions -------------------------------------------------------------

def _method(name, method=None):
    def apply(a, *args, **kwargs):
        return getattr(_one(a), method or name)(*args, **kwargs)

    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = f"NumPy's ``{name}``: ``asarray(a).{method or name}(…)``, lazily."
    FUNCTIONS[name] = apply


for _name in ("sum", "prod", "min", "max", "mean", "any", "all", "argmax", "argmin", "var",
              "std", "cumsum", "cumprod", "ravel", "squeeze",
              "swapaxes", "clip", "copy", "astype", "round"):
    _method(_name)
for _name, _method_name in (("amin", "min"), ("amax", "max"), ("around", "round")):
    _method(_name, _method_name)


def reshape(a, /, shape=None, order="C", *, newshape=None, copy=None):
    """NumPy's (and the array API's) ``reshape``: the shape given by position
    or as ``shape=`` (NumPy's older ``newshape=`` too), lazily."""
    shape = newshape if shape is None else shape
    if shape is None:
        raise TypeError("reshape: the new shape is missing")
    if copy is None:
        return _one(a).reshape(shape, order=order)
    return _one(a).reshape(shape, order=order, copy=copy)


FUNCTIONS["reshape"] = reshape


def _cumulative(x, name, identity, axis, dtype, include_initial):
    """NumPy 2's (the array API's) running sum or product along ``axis``
    (None only for 1-d ``x``), with ``identity`` in front when
    ``include_initial``."""
    a = _one(x)
    what = "cumulative_sum" if name == "cumsum" else "cumulative_prod"
    if axis is None:
        if a.ndim != 1:
            raise ArgumentError(f"{what}: axis must be given for a {a.ndim}-d array (expected 1-d "
                                "without one)")
        axis = 0
    result = getattr(a, name)(axis=axis, dtype=dtype)
    if not include_initial:
        return result
    axis = axis + a.ndim if axis < 0 else axis
    front = full_like(result, identity, shape=tuple(1 if i == axis else n
                                                    for i, n in enumerate(result.shape)))
    return FUNCTIONS["concatenate"]([front, result], axis=axis)


@_function
def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """NumPy 2's ``cumulative_sum`` (``include_initial``: a 0 in front)."""
    return _cumulative(x, "cumsum", 0, axis, dtype, include_initial)


@_function
def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """NumPy 2's ``cumulative_prod`` (``include_initial``: a 1 in front)."""
    return _cumulative(x, "cumprod", 1, axis, dtype, include_initial)


@_function
def transpose(a, axes=None):
    """NumPy's ``transpose``: ``a`` with its axes reversed, or in the order
    ``axes`` gives (a view)."""
    return _one(a).transpose() if axes is None else _one(a).transpose(axes)


def _is_float(a):
    return a.dtype == "bfloat16" or a.dtype.kind == "f"


def _not_nan(a, where):
    """The mask of ``a``'s numbers, and ``where=``'s."""
    mask = ~FUNCTIONS["isnan"](a)
    return mask if where is True else mask & _lazy([where, a])[0]


def _nan_skipping(name, reduction):
    def apply(a, axis=None, *args, where=True, **kwargs):
        a = _one(a)
        if _is_float(a):
            where = _not_nan(a, where)
        return getattr(a, reduction)(axis, *args, where=where, **kwargs)

    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = (f"NumPy's ``{name}``: ``{reduction}`` of the elements that are not NaN "
                     f"(a ``where=`` mask), lazily.")
    FUNCTIONS[name] = apply


for _name in ("sum", "prod", "mean", "var", "std"):
    _nan_skipping("nan" + _name, _name)


def _nan_extreme(name, reduction, fill):
    def apply(a, axis=None, out=None, keepdims=False):
        a = _one(a)
        if not _is_float(a):
            return getattr(a, reduction)(axis, out=out, keepdims=keepdims)
        nan = FUNCTIONS["isnan"](a)
        extreme = getattr(where(nan, fill, a), reduction)(axis, keepdims=keepdims)
        result = where(nan.all(axis, keepdims=keepdims), np.nan, extreme)  # all-NaN: NaN
        return result if out is None else _store(result, out, name, "unsafe")

    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = (f"NumPy's ``{name}``: ``{reduction}`` ignoring NaN (NaN where a slice is "
                     f"all NaN), lazily.")
    FUNCTIONS[name] = apply


_nan_extreme("nanmin", "min", np.inf)
_nan_extreme("nanmax", "max", -np.inf)


@_function
def count_nonzero(a, axis=None, *, keepdims=False):
    """NumPy's ``count_nonzero`` as an int64 array (0-d for the whole
    array, as CuPy's), lazily."""
    a = _one(a)
    return (a != 0).sum(axis, dtype=np.int64, keepdims=keepdims)


# --- comparisons and cleaning -------------------------------------------------

@_function
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """NumPy's ``isclose``, with its formula: ``|a - b| <= atol + rtol * |b|``
    where ``b`` is finite, or ``a == b``; NaN equal to NaN with
    ``equal_nan``. Lazy."""
    a, b = _lazy([a, b])
    if isinstance(b, Array) and b.dtype != "bfloat16":
        b = b.astype(np.result_type(b.dtype, 1.0))
    elif isinstance(b, int):
        b = float(b)
    isfinite, isnan = FUNCTIONS["isfinite"], FUNCTIONS["isnan"]
    result = (abs(a - b) <= atol + rtol * abs(b)) & isfinite(b) | (a == b)
    if equal_nan:
        result = result | (isnan(a) & isnan(b))
    return result


@_function
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """NumPy's ``allclose``: a Python bool (computes ``isclose``'s ``all``)."""
    return bool(isclose(a, b, rtol, atol, equal_nan).all())


@_function
def array_equal(a1, a2, equal_nan=False):
    """NumPy's ``array_equal``: a Python bool (False for other shapes)."""
    a1, a2 = _lazy([a1, a2])
    if np.shape(a1) != np.shape(a2):
        return False
    same = a1 == a2
    if equal_nan and any(isinstance(x, Array) and _is_float(x) for x in (a1, a2)):
        isnan = FUNCTIONS["isnan"]
        same = same | (isnan(a1) & isnan(a2))
    return bool(same.all())


@_function
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NumPy's ``nan_to_num``: NaN, +∞ and -∞ replaced (by default with 0
    and the dtype's largest and smallest finite values), lazily. Arrays
    are values here, so ``copy=False`` changes nothing."""
    x = _one(x)
    if not _is_float(x):
        return x
    info = np.finfo(np.float32 if x.dtype == "bfloat16" else x.dtype)
    big = 3.3895313892515355e38 if x.dtype == "bfloat16" else float(info.max)
    posinf = big if posinf is None else posinf
    neginf = -big if neginf is None else neginf
    return where(FUNCTIONS["isnan"](x), nan, where(x == np.inf, posinf,
                                                   where(x == -np.inf, neginf, x)))


# --- products -----------------------------------------------------------------

@_function
def dot(a, b, out=None):
    """NumPy's ``dot``: products of 0-d operands, ``matmul`` up to 2-d (and
    for a 1-d ``b``), else the sum over ``a``'s last axis and ``b``'s
    second-to-last. Lazy."""
    a, b = _contractions._operands("dot", a, b)  # numbers too: ``dot`` asks for shapes
    if a.ndim == 0 or b.ndim == 0:
        result = a * b
    elif b.ndim <= 2:
        result = a @ b
    else:
        # b (..., K, m): K to the front, the rest flat; one product.
        k = b.shape[-2]
        if a.shape[-1] != k:
            raise ShapeError(f"dot: shapes {a.shape} and {b.shape} not aligned (the last axis "
                             f"of the first, {a.shape[-1]}, is not the second-to-last of the "
                             f"second, {k})")
        flat_b = moveaxis(b, -2, 0).reshape(k, -1)
        result = (a.reshape(-1, k) @ flat_b).reshape(a.shape[:-1] + b.shape[:-2] + b.shape[-1:])
    return result if out is None else _store(result, out, "dot")


@_function
def outer(a, b, out=None):
    """NumPy's ``outer``: ``ravel(a)[:, None] * ravel(b)[None, :]``, lazily."""
    a, b = (_one(x).reshape(-1) for x in _lazy([a, b]))
    result = a[:, None] * b[None, :]
    return result if out is None else _store(result, out, "outer")


# --- shapes -------------------------------------------------------------------

@_function
def shape(a):
    """NumPy's ``shape`` (nothing computed)."""
    return a.shape if isinstance(a, Array) else np.shape(a)


@_function
def ndim(a):
    """NumPy's ``ndim`` (nothing computed)."""
    return a.ndim if isinstance(a, Array) else np.ndim(a)


@_function
def size(a, axis=None):
    """NumPy's ``size``, of all axes or of one (nothing computed)."""
    if not isinstance(a, Array):
        return np.size(a, axis)
    return a.size if axis is None else a.shape[_axes(a, axis, "size")[0]]


@_function
def result_type(*arrays_and_dtypes):
    """NumPy's ``result_type``, lazy arrays standing for their dtypes."""
    return np.result_type(*(x.dtype if isinstance(x, Array) else x for x in arrays_and_dtypes))


def concat(arrays, /, *, axis=0):
    """NumPy 2's (the array API's) ``concat``: ``concatenate``."""
    return concatenate(arrays, axis=axis)


def permute_dims(a, /, axes=None):
    """NumPy 2's (the array API's) ``permute_dims``: ``transpose``."""
    return _one(a).transpose(axes) if axes is not None else _one(a).transpose()


def unique_values(x):
    """The array API's ``unique_values``: ``unique(x)``."""
    return _sorting.unique(x)


def _unique_tuple(name, result, fields, **options):
    """An array API ``unique_*`` function: ``unique`` with ``options``, its
    results named as NumPy's (the inverse indices of ``x``'s shape)."""
    result_type = collections.namedtuple(result, fields)

    def apply(x):
        x = _one(x)
        values = list(_sorting.unique(x, **options))
        if "inverse_indices" in fields:
            at = fields.split().index("inverse_indices")
            values[at] = values[at].reshape(x.shape)
        return result_type(*values)

    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = f"The array API's ``{name}``: ``unique`` with {', '.join(options)}."
    return apply


unique_counts = _unique_tuple("unique_counts", "UniqueCountsResult", "values counts",
                              return_counts=True)
unique_inverse = _unique_tuple("unique_inverse", "UniqueInverseResult", "values inverse_indices",
                               return_inverse=True)
unique_all = _unique_tuple("unique_all", "UniqueAllResult",
                           "values indices inverse_indices counts", return_index=True,
                           return_inverse=True, return_counts=True)
for _function_ in (concat, permute_dims, unique_values, unique_counts, unique_inverse, unique_all):
    FUNCTIONS[_function_.__name__] = _function_

FUNCTIONS["take"] = _fancy.take
for _sorting_function in (_sorting.sort, _sorting.argsort, _sorting.median, _sorting.unique,
                          _sorting.searchsorted, _sorting.digitize, _sorting.interp,
                          _sorting.partition, _sorting.argpartition, _sorting.isin,
                          _sorting.select, _sorting.choose, _sorting.lexsort, _sorting.piecewise):
    FUNCTIONS[_sorting_function.__name__] = _sorting_function
for _diagonal_function in (_diagonals.diagonal, _diagonals.trace, _diagonals.diag,
                           _diagonals.diagflat, _diagonals.fill_diagonal):
    FUNCTIONS[_diagonal_function.__name__] = _diagonal_function
for _function_ in (_contractions.einsum, _contractions.tensordot, _contractions.inner,
                   *_arrangements.EXPORTED, *_pad.EXPORTED, *_statistics.EXPORTED,
                   *_quantiles.EXPORTED, *_histograms.EXPORTED, *_polynomials.EXPORTED, *_compat.EXPORTED, *_generated.EXPORTED,
                   *_host.EXPORTED, *_joins.EXPORTED, *_ranges.EXPORTED):
    FUNCTIONS[_function_.__name__] = _function_
FUNCTIONS["put"] = _fancy.put_flat
FUNCTIONS["take_along_axis"] = _fancy.take_along_axis
FUNCTIONS["put_along_axis"] = _fancy.put_along_axis
FUNCTIONS["putmask"] = _fancy.putmask
FUNCTIONS["place"] = _fancy.place


# Last, when every function is in: complex arrays accepted where a function
# has no complex form of its own.
_complex.accept_complex(FUNCTIONS)
