"""Advanced indexing (``x[[2, 0]]``, ``x[:, idx]``, ``x[mask]``,
``x[rows, cols]``), its assignment (``x[idx] = v``), and NumPy's
``take``, ``put`` and ``putmask``, over the native ``take`` and
``scatter`` (lazy gather and scatter kernels).

Any NumPy key with integer or boolean arrays is one gather or scatter
along one axis (`_selection` spells out how); the result is a new array
(a copy, as NumPy's), not a view. Integer indices whose values are known
(from NumPy or Python, or computed already) are checked as NumPy checks
them (``IndexError``), and where one repeats in an assignment its last
value lands, as in NumPy. Lazy indices not computed yet are not computed
for this: out of bounds, they wrap around, and of repeated ones which
value lands is unspecified, as in CuPy (``sim`` reports it as a race). A
boolean mask's values decide the result's shape, so a lazy mask is
computed (CuPy synchronizes there too), except in ``x[mask] = value``
with one value: a lazy ``where``."""

import numpy as np

from ._array import Array, _axes, _store
from ._creation import _one
from ._selection import check_mask, is_array_index, lazy_mask, resolve
from ._registry import OPERATIONS, register
from .errors import ArgumentError, ShapeError


def is_advanced(key):
    """Whether ``key`` holds an array index (cheap: on the indexing path)."""
    if type(key) is tuple:
        return any(is_array_index(k) for k in key)
    return is_array_index(key)


def get(array, key):
    """``array[key]`` for a key holding array indices: one gather."""
    selection = resolve(array, key)
    return take(selection.merged(), selection.index, selection.axis)


def put(array, key, value):
    """``array[key] = value`` for a key holding array indices: ``value``
    broadcast to ``array[key]``'s shape (its leading length-1 axes
    dropped) and cast to ``array``'s dtype, as NumPy assigns; one scatter.
    A mask alone with one value is a ``where`` (lazy when the mask is)."""
    if not isinstance(value, Array):
        value = array._like(value)
    lazy = lazy_mask(array, key) if value.size == 1 else None
    if lazy is not None:
        _put_where(array, *lazy, value)
        return
    selection = resolve(array, key)
    region = selection.region
    if selection.mask is not None and value.size == 1:
        _put_where(region, selection.axis, region._like(selection.mask), value)
        return
    target, axis, index = selection.merged(), selection.axis, selection.index
    if not isinstance(index, Array):
        index = array._like(index)
    indexed = target.shape[:axis] + index.shape + target.shape[axis + 1:]
    shape = value.shape
    while len(shape) > len(indexed) and shape[0] == 1:
        shape = shape[1:]  # NumPy drops leading length-1 axes of the value
    native = value._a if shape == value.shape else value._a.reshape(list(shape))
    try:
        written = target._a.scatter(index._a, axis, native, "raise")
    except ArgumentError as error:
        if "out of bounds" not in str(error):
            raise
        raise IndexError(str(error)) from None
    except ShapeError:
        raise ShapeError(f"could not broadcast a value of shape {value.shape} into the indexed "
                         f"shape {indexed} of an array of shape {array.shape}") from None
    region._rebind(written.reshape(list(region.shape)))


def _put_where(array, axis, mask, value):
    """``array[..., mask] = value`` for one value: ``where(mask, value,
    array)``, lazily, the mask lined up with the axes it covers."""
    check_mask(array.shape, axis, mask)
    lined_up = mask._a.reshape(list(mask.shape) + [1] * (array.ndim - axis - mask.ndim))
    one = value._a.reshape([]).astype(array.dtype.name)
    array._rebind(lined_up.where_(one, array._a).astype(array.dtype.name))


def take(a, indices, axis=None, out=None, mode="raise"):
    """NumPy's ``take``: the elements at ``indices`` along ``axis`` (of
    the flattened array for ``None``), ``mode`` ``"raise"``, ``"wrap"`` or
    ``"clip"``. Lazy; see the module for which indices are checked."""
    a = _one(a)
    if axis is None:
        a, axis = a.reshape(-1), 0
    else:
        axis = _axes(a, axis, "take")[0]
    if not isinstance(indices, Array):
        indices = np.asarray(indices)
        if indices.size == 0:
            indices = indices.astype(np.intp)
        if not np.issubdtype(indices.dtype, np.integer):
            raise IndexError(f"take: indices must be integers, not {indices.dtype}")
        indices = a._like(indices)
    if a.shape[axis] == 0 and indices.size:
        raise IndexError("cannot do a non-empty take from an empty axes.")
    try:
        result = Array(a._a.take(indices._a, axis, mode))
    except ArgumentError as error:
        if mode not in ("raise", "wrap", "clip"):
            raise
        # The axis and the context are right: an index out of bounds,
        # which NumPy reports as an IndexError.
        raise IndexError(str(error)) from None
    return result if out is None else _store(result, out, "take", "unsafe")


def take_along_axis(arr, indices, axis=-1):
    """NumPy's ``take_along_axis``: the elements at ``indices`` along
    ``axis`` (the flattened array's for None), line by line (for example,
    with ``argsort``'s positions: the sorted array). One gather."""
    arr, indices, axis = _along_axis(arr, indices, axis, "take_along_axis")
    return arr[_along_axis_key(arr, indices, axis)]


def put_along_axis(arr, indices, values, axis):
    """NumPy's ``put_along_axis``: ``values`` written at ``indices`` along
    ``axis``, line by line. ``arr`` takes the new value (one scatter)."""
    if not isinstance(arr, Array):
        return np.put_along_axis(arr, _host(indices), _host(values), axis)
    target, indices, axis = _along_axis(arr, indices, axis, "put_along_axis")
    target[_along_axis_key(target, indices, axis)] = values
    if target is not arr:
        arr._rebind(target._a.reshape(list(arr.shape)))
    return None


def _along_axis(arr, indices, axis, name):
    arr = _one(arr)
    indices = indices if isinstance(indices, Array) else np.asarray(indices)
    if axis is None:
        if indices.ndim != 1:
            raise ArgumentError(f"{name}: when axis=None, `indices` must have a single dimension")
        arr, axis = arr.reshape(-1), 0
    axis = _axes(arr, axis, name)[0]
    if indices.ndim != arr.ndim:
        raise ArgumentError(f"{name}: `indices` and `arr` must have the same number of dimensions "
                            f"({indices.ndim} and {arr.ndim})")
    if not np.issubdtype(indices.dtype, np.integer):
        raise IndexError(f"{name}: `indices` must be an integer array, not {indices.dtype}")
    return arr, indices, axis


def _along_axis_key(arr, indices, axis):
    """NumPy's key for ``*_along_axis``: ``indices`` on ``axis``, and on each
    other axis its positions, shaped to broadcast against them."""
    key = []
    for d, n in enumerate(arr.shape):
        shape = (1,) * d + (n,) + (1,) * (arr.ndim - d - 1)
        key.append(indices if d == axis else np.arange(n).reshape(shape))
    return tuple(key)


def put_flat(a, ind, v, mode="raise"):
    """NumPy's ``put``: ``a.flat[ind] = v`` with ``v`` repeated as needed
    (cast unsafely, as NumPy's), ``mode`` as ``take``'s. ``a`` takes the
    new value, lazily."""
    if not isinstance(a, Array):
        return np.put(a, _host(ind), _host(v), mode=mode)  # NumPy writes its own array
    indices = ind.reshape(-1) if isinstance(ind, Array) else a._like(_integers(ind, "put"))
    values = v if isinstance(v, Array) else a._like(v)
    if indices.size == 0 or values.size == 0:
        return None
    values = values.reshape(-1)
    if values.size not in (1, indices.size):
        values = take(values, np.arange(indices.size), mode="wrap")
    native = a._a.reshape([a.size])
    try:
        written = native.scatter(indices._a, 0, values._a, mode)
    except ArgumentError as error:
        if "out of bounds" not in str(error):
            raise
        raise IndexError(str(error)) from None
    a._rebind(written.reshape(list(a.shape)))
    return None


def putmask(a, mask, values):
    """NumPy's ``putmask``: ``a.flat[n] = values[n % values.size]`` where
    ``mask.flat[n]``; a ``where``, lazily (the mask too)."""
    if not isinstance(a, Array):
        return np.putmask(a, _host(mask), _host(values))
    mask = mask if isinstance(mask, Array) else a._like(np.asarray(mask, dtype=bool))
    if mask.size != a.size:
        raise ValueError("putmask: mask and data must be the same size")
    values = values if isinstance(values, Array) else a._like(values)
    if values.size == 0:
        return None
    if values.size == 1:
        values = values.reshape(())
    elif values.size != a.size:
        values = take(values.reshape(-1), np.arange(a.size), mode="wrap")
    native = values._a.reshape(list(a.shape)) if values.ndim else values._a
    written = mask._a.astype("bool").reshape(list(a.shape)).where_(native.astype(a.dtype.name), a._a)
    a._rebind(written)
    return None


def place(arr, mask, vals):
    """NumPy's ``place``: the elements where ``mask`` holds take the first
    values of ``vals``, repeated as needed, in place. How many is data: the
    mask is computed (its positions), the writing stays lazy."""
    if not isinstance(arr, Array):
        return np.place(arr, _host(mask), _host(vals))
    mask = np.asarray(_host(mask), dtype=bool)
    if mask.size != arr.size:
        raise ValueError("place: mask and data must be the same size")
    count = int(mask.sum())
    vals = vals if isinstance(vals, Array) else arr._like(vals)
    if count == 0:
        return None
    if vals.size == 0:
        raise ValueError("Cannot insert from an empty array!")
    chosen = take(vals.reshape(-1), np.arange(count), mode="wrap")
    flat = arr.reshape(-1)
    flat[np.flatnonzero(mask)] = chosen  # a view: writes arr
    return None


def _host(x):
    """``x`` for NumPy: a lazy array computed."""
    return x.numpy() if isinstance(x, Array) else x


def _integers(ind, what):
    """Indices from Python or NumPy, flat, checked to be integers."""
    ind = np.asarray(ind).reshape(-1)
    if ind.size == 0:
        return ind.astype(np.intp)
    if not np.issubdtype(ind.dtype, np.integer):
        raise IndexError(f"{what}: indices must be integers, not {ind.dtype}")
    return ind


register(OPERATIONS, take, put=put_flat)  # `Array`'s methods
