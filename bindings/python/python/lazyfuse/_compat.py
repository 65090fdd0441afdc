"""NumPy functions that are thin over others, lazily: conversions
(``asanyarray``, ``ascontiguousarray``, ``copyto``), questions about
dtypes and shapes that compute nothing (``iscomplexobj``, ``isrealobj``,
``broadcast_shapes``, ``shares_memory``), the complex helpers on real
arrays and complex ones (``real``, ``imag``, ``conj``, ``angle``, ``isreal``,
``iscomplex``), rounding and infinities (``fix``, ``isposinf``, ``isneginf``,
``sinc``), running sums that skip NaNs (``nancumsum``, ``nancumprod``),
``unwrap``, index arithmetic (``ravel_multi_index``, ``unravel_index``,
``indices``, ``tril_indices``, ``triu_indices``, ``diag_indices``),
``rollaxis``, ``resize``, ``compress``/``extract``, ``vdot``, and a few
questions of real arrays (``isreal``, ``array_equiv``…)."""

import operator

import numpy as np

from . import _array
from ._array import Array, _axes, _store, where, where as choose
from ._creation import _lazy, _one, arange, asarray, empty, full, full_like, ones, zeros
from ._fancy import take
from ._joins import broadcast_to, concatenate, moveaxis, stack
from .errors import ArgumentError


def asanyarray(a, dtype=None, order=None):
    """NumPy's ``asanyarray``: a lazy array of ``a`` (itself if it is one)."""
    return asarray(a, dtype=dtype)


def ascontiguousarray(a, dtype=None):
    """NumPy's ``ascontiguousarray``: lazy arrays have no layout to fix, so
    ``a`` as a lazy array (at least 1-d, as NumPy's)."""
    a = asarray(a, dtype=dtype)
    return a.reshape(1) if a.ndim == 0 else a


def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0):
    """NumPy's ``array``, reached by ``np.array(..., like=lazy)`` (Dask's
    chunk functions make their arrays so): a lazy array of ``object`` with
    at least ``ndmin`` axes (new axes in front, as NumPy's)."""
    a = asarray(object, dtype=dtype, copy=True if copy else None)
    missing = operator.index(ndmin) - a.ndim
    return a.reshape((1,) * missing + a.shape) if missing > 0 else a


def _asarray(a, dtype=None, order=None, *, device=None, copy=None):
    """NumPy's ``asarray``, reached by ``np.asarray(..., like=lazy)``."""
    return asarray(a, dtype=dtype, copy=copy)


_asarray.__name__ = "asarray"


def _constructor(name):
    """NumPy's ``zeros``/``ones``/``empty``/``full``/``arange``, reached by
    ``like=lazy``: lazyfuse's own (NumPy's layout arguments do not apply
    to lazy arrays)."""
    def make(*args, order="C", device=None, **kwargs):
        made = {"zeros": zeros, "ones": ones, "empty": empty, "full": full, "arange": arange}[name]
        return made(*args, **kwargs)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"NumPy's ``{name}``, reached by ``like=`` a lazy array: ``lazyfuse.{name}``."
    return make


def asfortranarray(a, dtype=None, *, like=None):
    """NumPy's ``asfortranarray``: lazy arrays have no memory order, so
    ``a`` as a lazy array (at least 1-d, as NumPy's)."""
    return ascontiguousarray(a, dtype)


def require(a, dtype=None, requirements=None, *, like=None):
    """NumPy's ``require``: ``a`` as a lazy array of ``dtype``; the memory
    flags asked for concern NumPy's arrays (``np.asarray`` of the result
    gives a new, aligned, writeable, C-contiguous one)."""
    return asarray(a, dtype=dtype)


def copyto(dst, src, casting="same_kind", where=True):
    """NumPy's ``copyto``: ``src`` (broadcast, cast by ``casting``) written
    into ``dst`` where ``where`` holds; a lazy ``dst`` takes the new value
    lazily, a NumPy one is written."""
    if where is not True:
        if not isinstance(dst, Array):
            np.copyto(dst, src.numpy() if isinstance(src, Array) else src, casting=casting,
                      where=where.numpy() if isinstance(where, Array) else where)
            return None
        src = choose(where, src, dst)
    if isinstance(src, Array) or isinstance(dst, Array):
        value = src if isinstance(src, Array) else dst._like(np.asarray(src))
        _store(value, dst, "copyto", casting)
        return None
    np.copyto(dst, src, casting=casting)
    return None


def _is_complex(x):
    """Whether ``x`` is a lazy complex array (registered by ``_complex``)."""
    return isinstance(x, _array.COMPLEX.types)


def iscomplexobj(x):
    """NumPy's ``iscomplexobj``: true for lazy complex arrays, false for
    the others; nothing computed."""
    if _is_complex(x):
        return True
    return False if isinstance(x, Array) else np.iscomplexobj(x)


def isrealobj(x):
    """NumPy's ``isrealobj``: the opposite of ``iscomplexobj``."""
    return not iscomplexobj(x)


def broadcast_shapes(*shapes):
    """NumPy's ``broadcast_shapes`` (shapes only)."""
    return np.broadcast_shapes(*shapes)


def shares_memory(a, b, max_work=None):
    """NumPy's ``shares_memory``: lazy arrays hold values, not memory a
    write through one could change in the other (views write their array
    by value), so false for them; NumPy's answer for NumPy arrays."""
    if isinstance(a, Array) or isinstance(b, Array):
        return False
    return np.shares_memory(a, b) if max_work is None else np.shares_memory(a, b, max_work)


def may_share_memory(a, b, max_work=None):
    """NumPy's ``may_share_memory`` (see ``shares_memory``)."""
    if isinstance(a, Array) or isinstance(b, Array):
        return False
    return np.may_share_memory(a, b) if max_work is None else np.may_share_memory(a, b, max_work)


def real(val):
    """NumPy's ``real``: a complex array's real part (a view); a real
    array itself."""
    val = _one(val)
    return val.real if _is_complex(val) else val


def imag(val):
    """NumPy's ``imag``: a complex array's imaginary part (a view); for a
    real array, zeros of its shape and dtype."""
    val = _one(val)
    if _is_complex(val):
        return val.imag
    return Array(val._a.full_like(list(val.shape), 0, val.dtype.name))


def conj(x, out=None):
    """NumPy's ``conj``: a complex array's conjugate; a real array itself
    (a copy into ``out``)."""
    x = _one(x)
    if _is_complex(x):
        if out is not None:
            raise ArgumentError("conj: out= is not supported for complex arrays yet")
        return x.conj()
    return x if out is None else _store(x, out, "conj")


def conjugate(x, out=None):
    """NumPy's ``conjugate`` of a real array (see ``conj``)."""
    return conj(x, out)


def angle(z, deg=False):
    """NumPy's ``angle`` of real numbers: pi (or 180) where negative, else
    0 (``arctan2(0, z)``), float64 for integers."""
    z = _one(z)
    if _is_complex(z):
        result = z._unary("angle")
        return result * (180 / np.pi) if deg else result
    result = np.arctan2(imag(z), z)  # a positive zero: pi where negative
    return np.degrees(result) if deg else result


def fix(x, out=None):
    """NumPy's ``fix``: rounded towards zero (``trunc``), in ``x``'s dtype."""
    x = _one(x)
    result = np.trunc(x) if x.dtype.kind == "f" else x
    return result if out is None else _store(result, out, "fix")


def isposinf(x, out=None):
    """NumPy's ``isposinf``: where ``x`` is +inf."""
    x = _one(x)
    result = (x == np.inf) if x.dtype.kind == "f" else x != x
    return result if out is None else _store(result, out, "isposinf")


def isneginf(x, out=None):
    """NumPy's ``isneginf``: where ``x`` is -inf."""
    x = _one(x)
    result = (x == -np.inf) if x.dtype.kind == "f" else x != x
    return result if out is None else _store(result, out, "isneginf")


def sinc(x):
    """NumPy's ``sinc``: ``sin(pi x) / (pi x)``, 1 at 0."""
    x = _one(x)
    x = x if x.dtype.kind == "f" else x.astype(np.float64)
    y = np.pi * where(x == 0, 1.0e-20, x)
    return np.sin(y) / y


def nancumsum(a, axis=None, dtype=None, out=None):
    """NumPy's ``nancumsum``: running sums with NaNs counted as 0."""
    a = _one(a)
    if a.dtype.kind == "f":
        a = where(np.isnan(a), 0, a)
    return a.cumsum(axis=axis, dtype=dtype, out=out)


def nancumprod(a, axis=None, dtype=None, out=None):
    """NumPy's ``nancumprod``: running products with NaNs counted as 1."""
    a = _one(a)
    if a.dtype.kind == "f":
        a = where(np.isnan(a), 1, a)
    return a.cumprod(axis=axis, dtype=dtype, out=out)


def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    """NumPy's ``unwrap``: jumps along ``axis`` larger than ``discont``
    (half the ``period`` at least) replaced by their complement, lazily (a
    difference, a correction, a running sum)."""
    p = _one(p)
    axis = _axes(p, axis, "unwrap")[0]
    p = p if p.dtype.kind == "f" else p.astype(np.float64)
    discont = period / 2 if discont is None else discont
    head = (slice(None),) * axis + (slice(1, None),)
    tail = (slice(None),) * axis + (slice(None, -1),)
    dd = p[head] - p[tail]
    high, low = period / 2, -period / 2
    ddmod = np.mod(dd - low, period) + low
    ddmod = where((ddmod == low) & (dd > 0), high, ddmod)
    correction = where(abs(dd) < discont, 0, ddmod - dd)
    first = p[(slice(None),) * axis + (slice(0, 1),)]
    return concatenate([first, p[head] + correction.cumsum(axis=axis)], axis=axis)


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """NumPy's ``ravel_multi_index`` (C order): flat positions from
    coordinates. Known ones in ``raise`` mode are NumPy's (checked, its
    ``ValueError``); lazy ones are combined lazily (``wrap``/``clip`` as
    asked; in ``raise`` mode unchecked, as lazy indices are)."""
    if order != "C":
        raise ArgumentError("ravel_multi_index: only order='C' is supported")
    dims = tuple(operator.index(d) for d in dims)
    if any(isinstance(i, Array) for i in multi_index) or mode != "raise":
        flat = None
        for index, n in zip(multi_index, dims):
            index = _one(index)
            if mode == "wrap":
                index = index % n
            elif mode == "clip":
                index = np.clip(index, 0, n - 1)
            flat = index.astype(np.int64) if flat is None else flat * n + index
        return flat
    return _one(np.ravel_multi_index(tuple(np.asarray(i) for i in multi_index), dims))


def unravel_index(indices, shape, order="C"):
    """NumPy's ``unravel_index`` (C order): coordinates from flat
    positions, lazily (divisions and remainders)."""
    if order != "C":
        raise ArgumentError("unravel_index: only order='C' is supported")
    shape = (operator.index(shape),) if np.ndim(shape) == 0 else tuple(operator.index(d) for d in shape)
    if not isinstance(indices, Array):
        return tuple(_one(i) for i in np.unravel_index(indices, shape))
    rest, coordinates = indices.astype(np.int64), []
    for n in reversed(shape):
        coordinates.append(rest % n)
        rest = rest // n
    return tuple(reversed(coordinates))


def indices(dimensions, dtype=int, sparse=False):
    """NumPy's ``indices``: each axis' positions over ``dimensions`` (one
    array stacked, or broadcastable pieces with ``sparse``)."""
    dimensions = tuple(operator.index(d) for d in dimensions)
    pieces = []
    for axis, n in enumerate(dimensions):
        shape = (1,) * axis + (n,) + (1,) * (len(dimensions) - axis - 1)
        pieces.append(arange(n, dtype=dtype).reshape(shape))
    if sparse:
        return tuple(pieces)
    if not pieces:
        return _one(np.indices(dimensions, dtype=dtype))
    return stack([broadcast_to(p, dimensions) for p in pieces])


def tril_indices(n, k=0, m=None):
    """NumPy's ``tril_indices`` (known positions, as lazy arrays)."""
    return tuple(_one(i) for i in np.tril_indices(n, k, m))


def triu_indices(n, k=0, m=None):
    """NumPy's ``triu_indices`` (known positions, as lazy arrays)."""
    return tuple(_one(i) for i in np.triu_indices(n, k, m))


def diag_indices(n, ndim=2):
    """NumPy's ``diag_indices`` (known positions, as lazy arrays)."""
    return tuple(_one(i) for i in np.diag_indices(n, ndim))


def rollaxis(a, axis, start=0):
    """NumPy's ``rollaxis``: ``axis`` moved to before ``start`` (a view)."""
    a = _one(a)
    n = a.ndim
    axis = operator.index(axis) % n if n else 0
    start = operator.index(start)
    if start < 0:
        start += n
    if not 0 <= start <= n:
        raise ArgumentError(f"rollaxis: start {start} is out of bounds for an array of dimension {n}")
    if axis < start:
        start -= 1
    return a if axis == start else moveaxis(a, axis, start)


def resize(a, new_shape):
    """NumPy's ``resize``: ``a``'s elements repeated in order to fill
    ``new_shape`` (a tile, then a reshape)."""
    from ._arrangements import tile
    a = _one(a).reshape(-1)
    new_shape = (operator.index(new_shape),) if np.ndim(new_shape) == 0 else tuple(
        operator.index(d) for d in new_shape)
    size = int(np.prod(new_shape, dtype=np.int64))
    if a.size == 0 or size == 0:
        return Array(a._a.full_like(list(new_shape), 0, a.dtype.name))
    repeats = -(-size // a.size)
    return tile(a, repeats)[:size].reshape(new_shape)


def compress(condition, a, axis=None, out=None):
    """NumPy's ``compress``: the entries of ``a`` along ``axis`` where
    ``condition`` holds (computed: their count is data), one gather."""
    a = _one(a)
    mask = condition.numpy() if isinstance(condition, Array) else np.asarray(condition)
    if mask.ndim != 1:
        raise ArgumentError("compress: condition must be a 1-d array")
    if axis is None:
        a, axis = a.reshape(-1), 0
    result = take(a, np.flatnonzero(mask), axis)
    return result if out is None else _store(result, out, "compress")


def extract(condition, arr):
    """NumPy's ``extract``: the elements of ``arr`` where ``condition``
    (flattened) is non-zero."""
    arr = _one(arr)
    mask = condition.numpy() if isinstance(condition, Array) else np.asarray(condition)
    return compress(mask.reshape(-1) != 0, arr.reshape(-1))


def vdot(a, b):
    """NumPy's ``vdot`` of real arrays: the dot product of the flattened
    arrays (a 0-d array)."""
    a, b = (_one(x).reshape(-1) for x in _lazy([a, b]))
    if a.size != b.size:
        raise ArgumentError(f"vdot: vectors of lengths {a.size} and {b.size} (expected the same)")
    return (a * b).sum(dtype=np.result_type(a.dtype, b.dtype))  # NumPy's dot keeps the type


def isreal(x):
    """NumPy's ``isreal``: where the imaginary part is zero (of a real
    array: everywhere), lazily."""
    x = _one(x)
    return x.imag == 0 if _is_complex(x) else full_like(x, True, bool)


def iscomplex(x):
    """NumPy's ``iscomplex``: where the imaginary part is not zero."""
    x = _one(x)
    return x.imag != 0 if _is_complex(x) else full_like(x, False, bool)


def real_if_close(a, tol=100):
    """NumPy's ``real_if_close`` of a real array: the array itself."""
    return _one(a)


def asarray_chkfinite(a, dtype=None, order=None):
    """NumPy's ``asarray_chkfinite``: ``a``, after checking (computing)
    that it holds no NaN or infinity."""
    a = _one(a) if dtype is None else _one(a).astype(dtype)
    if a.dtype == "bfloat16" or a.dtype.kind == "f":
        if a.size and not bool(np.isfinite(a).all()):
            raise ArgumentError("array must not contain infs or NaNs")
    return a


def array_equiv(a1, a2):
    """NumPy's ``array_equiv``: whether the two are equal after
    broadcasting (False where they do not broadcast); computed, a bool."""
    a1, a2 = (_one(x) for x in _lazy([a1, a2]))
    try:
        np.broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return False
    return bool((a1 == a2).all())


def diag_indices_from(arr):
    """NumPy's ``diag_indices_from``: ``diag_indices`` of ``arr``'s shape
    (nothing computed)."""
    shape = np.shape(arr)
    if len(shape) < 2:
        raise ArgumentError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ArgumentError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], len(shape))


def tril_indices_from(arr, k=0):
    """NumPy's ``tril_indices_from`` (of ``arr``'s shape; nothing computed)."""
    shape = np.shape(arr)
    if len(shape) != 2:
        raise ArgumentError("input array must be 2-d")
    return tril_indices(shape[-2], k, shape[-1])


def triu_indices_from(arr, k=0):
    """NumPy's ``triu_indices_from`` (of ``arr``'s shape; nothing computed)."""
    shape = np.shape(arr)
    if len(shape) != 2:
        raise ArgumentError("input array must be 2-d")
    return triu_indices(shape[-2], k, shape[-1])


EXPORTED = (array, _asarray, *(_constructor(n) for n in ("zeros", "ones", "empty", "full", "arange")),
             asanyarray, ascontiguousarray, asfortranarray, require, copyto, iscomplexobj, isrealobj, broadcast_shapes,
             shares_memory, may_share_memory, real, imag, conj, conjugate, angle, fix, isposinf,
             isneginf, sinc, nancumsum, nancumprod, unwrap, ravel_multi_index, unravel_index,
             indices, tril_indices, triu_indices, diag_indices, rollaxis, resize, compress,
             extract, vdot, isreal, iscomplex,
             real_if_close, asarray_chkfinite, array_equiv, diag_indices_from, tril_indices_from,
             triu_indices_from)
