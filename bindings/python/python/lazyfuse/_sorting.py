"""NumPy's sorting and what builds on it: ``sort``, ``median`` and
``unique``, over the native ``sort`` (a lazy kernel sorting rows; NaNs
last, as NumPy's)."""

import numpy as np

from ._array import Array
from .errors import ArgumentError


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """NumPy's ``sort``: a sorted copy along ``axis`` (of the flattened
    array for ``None``), lazily. ``kind`` is accepted and ignored (as
    CuPy's); ``stable=True`` and ``order`` are refused (lazyfuse's sort is
    not stable: sorted values are the same, stable or not)."""
    from ._numpy import _one
    from ._reductions import _axes
    if order is not None:
        raise ArgumentError("sort: lazyfuse arrays have no fields (order= is for structured arrays)")
    a = _one(a)
    if axis is None:
        a, axis = a.reshape(-1), 0
    else:
        axis = _axes(a, axis, "sort")[0]
    return Array(a._a.sort(axis))


def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """NumPy's ``argsort``: the positions along ``axis`` (of the flattened
    array for ``None``) that sort ``a``, lazily; always stable (equal values
    keep their order, NaNs last), which every ``kind`` allows."""
    from ._numpy import _one
    from ._reductions import _axes
    if order is not None:
        raise ArgumentError("argsort: lazyfuse arrays have no fields (order= is for structured arrays)")
    a = _one(a)
    if axis is None:
        a, axis = a.reshape(-1), 0
    else:
        axis = _axes(a, axis, "argsort")[0]
    return Array(a._a.argsort(axis))


def sort_in_place(a, axis=-1, kind=None, order=None, *, stable=None):
    """NumPy's ``ndarray.sort``: ``a`` itself takes its sorted value."""
    a._rebind(sort(a, axis, kind, order, stable=stable)._a)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """NumPy's ``median``: the middle of the sorted values (the mean of the
    two middle ones for an even count), NaN where a NaN is among them."""
    from ._array import _store
    from ._numpy import _one
    from ._reductions import _axes
    a = _one(a)
    axes = tuple(range(a.ndim)) if axis is None else _axes(a, axis, "median")
    kept = [d for d in range(a.ndim) if d not in axes]
    lined = a.transpose(kept + list(axes)) if kept + list(axes) != list(range(a.ndim)) else a
    n = int(np.prod([a.shape[d] for d in axes], dtype=np.int64))
    float_type = np.float64 if a.dtype.kind in "biu" else a.dtype  # NumPy's mean's
    if n == 0:  # NumPy's mean of nothing: NaN (NumPy warns too)
        middle = Array(a._a.full_like([a.shape[d] for d in kept], float("nan"), np.dtype(float_type).name))
    else:
        rows = lined.reshape(tuple(a.shape[d] for d in kept) + (n,))
        middle = _middle(sort(rows, -1), n, float_type, a.dtype.kind in "fc")
    if keepdims:
        middle = middle.reshape(tuple(1 if d in axes else a.shape[d] for d in range(a.ndim)))
    return middle if out is None else _store(middle, out, "median")


def _middle(ordered, n, float_type, floats):
    """The median of each sorted row of ``n``: NaN where its last is."""
    middle = (ordered[..., (n - 1) // 2].astype(float_type) + ordered[..., n // 2].astype(float_type)) / 2
    if floats:
        middle = np.where(np.isnan(ordered[..., n - 1]), np.nan, middle).astype(float_type)
    return middle


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, sorted=True):
    """NumPy's ``unique`` of the flattened array (its sorted distinct
    values, one NaN), lazily sorted; the count of distinct values decides
    the result's shape, so it is computed. Other options run in NumPy on
    the computed values."""
    from ._numpy import _one
    a = _one(ar)
    if return_index or return_inverse or return_counts or axis is not None or not equal_nan:
        results = np.unique(a.numpy(), return_index, return_inverse, return_counts, axis,
                            equal_nan=equal_nan)
        return tuple(a._like(r) for r in results) if isinstance(results, tuple) else a._like(results)
    ordered = sort(a.reshape(-1), 0)
    if ordered.size == 0:
        return ordered
    values = ordered.numpy()  # computed once: the mask needs the same values
    keep = np.empty(values.size, dtype=bool)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    if values.dtype.kind in "fc":
        keep[1:] &= ~(np.isnan(values[1:]) & np.isnan(values[:-1]))  # one NaN
    return a._like(values[keep])
