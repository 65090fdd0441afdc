"""NumPy's counting functions, lazily: ``bincount`` (``lazyfuse::bincount``:
atomic adds on devices, per-worker counts on the CPU), ``histogram`` and
``histogram_bin_edges``.

Each value's bin is found by a binary search over the edges (NumPy's
``linspace`` edges for equal bins, built from the same objects NumPy
builds them from): ``edges[i] <= x < edges[i + 1]``, the last bin closed,
which is what NumPy's equal-bin arithmetic and its rounding corrections
compute, bit for bit. (That arithmetic, fused, was slower on the CPU: its
float-to-int64 casts are not compiled there.) What decides a length or a
range (the largest value, the extremes) is computed first, as in CuPy."""

import builtins
import functools
import operator

import numpy as np

from ._array import Array
from ._creation import _lazy, _one
from ._joins import stack
from .errors import ArgumentError


def _extremes(x, dtype):
    """``[min, max]`` of ``x`` as ``dtype``, computed in one demand."""
    return stack([x.min().astype(dtype), x.max().astype(dtype)]).numpy()


def bincount(x, weights=None, minlength=0):
    """NumPy's ``bincount``: the count of each value ``0..max(x)`` among the
    non-negative integers ``x`` (1-d), or the sum of their ``weights``
    (float64). The largest value decides the length, so ``x`` is reduced
    to its extremes first (one small demand, as CuPy's), then counted
    lazily (``lazyfuse::bincount``)."""
    x = _one(x)
    if x.ndim != 1:
        raise ArgumentError(f"bincount: values of shape {x.shape} (expected 1-d)")
    if x.size and not np.issubdtype(x.dtype, np.integer) and x.dtype != np.bool_:
        raise TypeError(f"bincount: cannot cast values of dtype {x.dtype} to integers safely")
    if minlength < 0:
        raise ArgumentError("bincount: minlength must be non-negative")
    length = minlength
    if x.size:
        low, high = (int(v) for v in _extremes(x, np.int64))
        if low < 0:
            raise ArgumentError("bincount: the values must not be negative")
        length = max(length, high + 1)
    w = None if weights is None else _one(_lazy([x, weights])[1])
    if w is not None and w.shape != x.shape:
        raise ArgumentError(f"bincount: weights of shape {w.shape} for values of shape {x.shape} "
                            "(expected the same shape)")
    return Array(x._a.bincount(None if w is None else w._a, length))


def histogram(a, bins=10, range=None, density=None, weights=None):
    """NumPy's ``histogram`` of the flattened ``a``: ``(counts, edges)``,
    ``bins`` equal bins over ``range`` (the data's extremes by default,
    computed) or the given edges; the last bin includes its right edge,
    values outside are not counted."""
    a = _one(a).reshape(-1)
    w = None
    if weights is not None:
        w = _one(weights).reshape(-1) if isinstance(weights, Array) else a._like(
            np.asarray(weights).reshape(-1))
        if w.size != a.size:
            raise ArgumentError("histogram: weights should have the same shape as a")
    edges = _edges(a, bins, range, weights)
    index = _bin_of(a, edges)
    n = edges.size - 1
    counts = Array(index._a.bincount(None if w is None else w.astype(np.float64)._a, n))
    if w is not None and w.dtype != np.float64:
        counts = counts.astype(w.dtype)
    if density:
        widths = a._like(np.diff(edges))
        counts = counts / widths / counts.sum()
    return counts, a._like(edges)


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """NumPy's ``histogram_bin_edges`` for a number of equal bins or given
    edges (the data's extremes computed when ``range`` is not given)."""
    a = _one(a).reshape(-1)
    return a._like(_edges(a, bins, range, weights))


def _edges(a, bins, range, weights=None):
    """The bins' edges (NumPy's): the given ones, ``bins`` equal bins over
    ``range`` (the data's extremes, computed, by default), or those of
    NumPy's estimator named ``bins`` (``"auto"``, ``"fd"``, ``"sturges"``…),
    which reads the data (its spread, its quartiles): computed, then
    NumPy's ``histogram_bin_edges`` of the values."""
    if isinstance(bins, str):
        if weights is not None:
            raise TypeError("histogram: automated estimation of the number of bins is not "
                            "supported for weighted data")
        return np.histogram_bin_edges(a.numpy(), bins, range)
    if np.ndim(bins) == 1:
        return _given_edges(bins)
    first, last, n, bin_type = _equal_bins(a, bins, range)
    return np.linspace(first, last, n + 1, endpoint=True, dtype=bin_type)


def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """NumPy's ``histogramdd`` of ``D`` coordinates (an ``(N, D)`` array
    or ``D`` arrays of ``N``): each coordinate's bin found as
    ``histogram``'s (edges computed where they are data), the bins
    combined into one index (C order), counted by one lazy ``bincount``."""
    if isinstance(sample, (list, tuple)):
        columns = [_one(c).reshape(-1) for c in _lazy(list(sample))]
    else:
        points = _one(sample)
        if points.ndim == 1:
            points = points.reshape(-1, 1)
        if points.ndim != 2:
            raise ArgumentError(f"histogramdd: a sample of shape {points.shape} (expected (N, D))")
        columns = [points[:, d] for d in builtins.range(points.shape[1])]
    dims = len(columns)
    if len({c.size for c in columns}) > 1:
        raise ArgumentError("histogramdd: the sample's coordinates differ in length")
    try:
        per_dim_bins = list(bins)
    except TypeError:
        per_dim_bins = [bins] * dims
    if len(per_dim_bins) != dims:
        raise ArgumentError("histogramdd: The dimension of bins must be equal to the dimension "
                            "of the sample x.")
    ranges = [None] * dims if range is None else list(range)
    edges, flat, valid, size = [], None, None, 1
    for column, b, r in zip(reversed(columns), reversed(per_dim_bins), reversed(ranges)):
        e = _edges(column, b, r)
        index = _bin_of(column, e)
        flat = index * size if flat is None else flat + index * size
        valid = index >= 0 if valid is None else valid & (index >= 0)
        size *= e.size - 1
        edges.insert(0, e)
    flat = np.where(valid, flat, -1)
    w = None
    if weights is not None:
        w = _one(_lazy([columns[0], weights])[1]).reshape(-1).astype(np.float64)
    counts = Array(flat._a.bincount(None if w is None else w._a, size))
    counts = counts.reshape(tuple(e.size - 1 for e in edges)).astype(np.float64)  # as NumPy's
    if density:
        widths = [np.diff(e) for e in edges]
        volume = columns[0]._like(functools.reduce(np.multiply.outer, widths))
        counts = counts / counts.sum() / volume
    return counts, [columns[0]._like(e) for e in edges]


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """NumPy's ``histogram2d``: ``histogramdd`` of ``(x, y)``; returns
    ``(counts, xedges, yedges)``."""
    if np.ndim(bins) == 1 and len(bins) != 2:
        bins = [bins, bins]
    counts, (xedges, yedges) = histogramdd([x, y], bins, range, density, weights)
    return counts, xedges, yedges



def _given_edges(bins):
    edges = bins.numpy() if isinstance(bins, Array) else np.asarray(bins)
    if (np.diff(edges) < 0).any():
        raise ArgumentError("histogram: bins must increase monotonically, when an array")
    return edges


def _bin_of(a, edges):
    """Each value's bin among ``edges`` (``edges[i] <= x < edges[i + 1]``,
    the last bin closed), -1 outside them: a binary search each."""
    from ._sorting import searchsorted
    n = edges.size - 1
    e = a._like(edges)
    keep = (a >= e[0]) & (a <= e[n])
    index = np.minimum(searchsorted(e, a, "right") - 1, n - 1)
    return np.where(keep, index, -1)


def _equal_bins(a, bins, range):
    """NumPy's outer edges (as its objects: Python floats from ``range``,
    scalars of ``a``'s dtype from its extremes), the bin count, and the
    bins' dtype."""
    n = operator.index(bins)
    if n < 1:
        raise ArgumentError("histogram: `bins` must be positive, when an integer")
    if range is not None:
        first, last = (edge + 0.0 for edge in range)
        if first > last:
            raise ArgumentError("histogram: max must be larger than min in range parameter")
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ArgumentError(f"histogram: supplied range of [{first}, {last}] is not finite")
    elif a.size == 0:
        first, last = 0, 1
    else:
        first, last = _extremes(a, a.dtype)
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ArgumentError(f"histogram: autodetected range of [{first}, {last}] is not finite")
    if first == last:
        first, last = first - 0.5, last + 0.5
    bin_type = np.result_type(first, last, a.dtype)
    if np.issubdtype(bin_type, np.integer):
        bin_type = np.result_type(bin_type, float)
    return first, last, n, bin_type


EXPORTED = (bincount, histogram, histogram_bin_edges, histogramdd, histogram2d)
