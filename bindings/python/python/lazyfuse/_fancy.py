"""Advanced indexing (``x[[2, 0]]``, ``x[:, idx]``, ``x[mask]``) and NumPy's
``take``, over the native ``take`` (a lazy gather kernel).

One integer or boolean array in the key, with slices and ``...`` around
it; the result is a new array (a copy, as NumPy's), not a view.
Integer indices whose values are known (from NumPy or Python, or computed
already) are checked as NumPy checks them (``IndexError``); lazy indices
not computed yet are not computed to be checked: out of bounds, they wrap
around, as CuPy's do. A boolean mask's values
decide the result's shape, so a lazy mask is computed (CuPy synchronizes
there too)."""

import numpy as np

from ._array import Array
from .errors import ArgumentError


def is_advanced(key):
    """Whether ``key`` holds an array index (cheap: on the indexing path)."""
    if type(key) is tuple:
        return any(_is_array_index(k) for k in key)
    return _is_array_index(key)


def _is_array_index(k):
    return isinstance(k, (list, np.ndarray, Array))


def get(array, key):
    """``array[key]`` for a key holding one array index."""
    parts = key if type(key) is tuple else (key,)
    at = [i for i, k in enumerate(parts) if _is_array_index(k)]
    others = [k for i, k in enumerate(parts) if i not in at]
    if len(at) > 1 or any(k is not Ellipsis and type(k) is not slice for k in others):
        raise IndexError(
            "lazyfuse arrays take one integer or boolean array index, with slices and ... "
            "around it (not several arrays, or ints or None beside one)")
    if others.count(Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    index = _index_array(parts[at[0]])
    consumed = index.ndim if index.dtype == np.bool_ else 1
    named = len(others) - others.count(Ellipsis) + consumed
    if named > array.ndim:
        raise IndexError(f"too many indices: {named} for an array of dimension {array.ndim}")
    # `...` spelled out, so that the index's axis is its position.
    expanded = []
    for i, k in enumerate(parts):
        if i == at[0]:
            axis = len(expanded)
            expanded.extend((slice(None),) * consumed)
        elif k is Ellipsis:
            expanded.extend((slice(None),) * (array.ndim - named))
        else:
            expanded.append(k)
    full = slice(None)
    value = array[tuple(expanded)] if any(k != full for k in expanded) else array
    if index.dtype == np.bool_:
        covered = value.shape[axis:axis + consumed]
        if index.shape != covered:
            raise IndexError(
                f"boolean index did not match indexed array along axis {axis}; the index has "
                f"shape {index.shape}, the axes it covers {covered}")
        value = value.reshape(value.shape[:axis] + (-1,) + value.shape[axis + consumed:])
        index = np.flatnonzero(index)
    return take(value, index, axis)


def _index_array(k):
    """An index as a lazy integer array, or a NumPy integer or bool array."""
    if isinstance(k, Array):
        if k.dtype == np.bool_:
            return k.numpy()  # its values decide the shape: computed
        if not np.issubdtype(k.dtype, np.integer):
            raise IndexError(f"arrays used as indices must be of integer or boolean type, not {k.dtype}")
        return k
    index = np.asarray(k)
    if index.size == 0 and index.dtype != np.bool_:
        return index.astype(np.intp)  # `x[[]]`: no indices
    if index.dtype != np.bool_ and not np.issubdtype(index.dtype, np.integer):
        raise IndexError(f"arrays used as indices must be of integer or boolean type, not {index.dtype}")
    return index


def take(a, indices, axis=None, out=None, mode="raise"):
    """NumPy's ``take``: the elements at ``indices`` along ``axis`` (of
    the flattened array for ``None``), ``mode`` ``"raise"``, ``"wrap"`` or
    ``"clip"``. Lazy; see the module for which indices are checked."""
    from ._numpy import _one
    from ._array import _store
    from ._reductions import _axes
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
