"""NumPy's quantiles, lazily: ``quantile``/``percentile``, their ``nan``
forms and ``nanmedian``, with all of NumPy's 13 methods and, for
``method="inverted_cdf"``, weights.

A quantile partitions (or sorts) the values along the reduced axes and
reads the neighbours of each requested position, which are known from the
shape alone: a gather and a fused interpolation, nothing computed early.
The ``nan`` forms count each row's numbers, so their positions are lazy;
weights sort each row with its weights and take the first value whose
running share reaches the quantile."""

import numpy as np

from ._array import Array, _axes, _store
from ._creation import _lazy, _one
from ._fancy import take, take_along_axis
from ._registry import FUNCTIONS
from .errors import ArgumentError


#: Hyndman and Fan's continuous methods: the virtual index of quantile
#: ``q`` among ``n`` sorted values is ``n*q + alpha + q*(1 - alpha - beta) - 1``.
_CONTINUOUS = {"linear": (1.0, 1.0), "interpolated_inverted_cdf": (0.0, 1.0),
               "hazen": (0.5, 0.5), "weibull": (0.0, 0.0),
               "median_unbiased": (1 / 3.0, 1 / 3.0), "normal_unbiased": (3 / 8.0, 3 / 8.0)}
#: Methods that pick one of the values (the input's dtype, as NumPy's).
_PICKING = ("lower", "higher", "nearest", "inverted_cdf", "closest_observation")
_METHODS = (*_CONTINUOUS, "midpoint", "averaged_inverted_cdf", *_PICKING)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
    """NumPy's ``quantile``, every method of NumPy's (Hyndman and Fan's
    nine and the four older ones): the sorted values at the method's
    position, interpolated; NaN where the values hold a NaN. The result's
    shape is ``q``'s followed by the kept axes."""
    return _quantile(a, q, 1, axis, out, method if interpolation is None else interpolation,
                     keepdims, weights, "quantile")


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    """NumPy's ``percentile``: ``quantile`` of ``q / 100``."""
    return _quantile(a, q, 100, axis, out, method if interpolation is None else interpolation,
                     keepdims, weights, "percentile")


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None, interpolation=None):
    """NumPy's ``nanquantile``: ``quantile`` of each slice's numbers, NaNs
    left out (NaN for a slice of NaNs only)."""
    return _quantile(a, q, 1, axis, out, method if interpolation is None else interpolation,
                     keepdims, weights, "nanquantile", skip_nan=True)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None, interpolation=None):
    """NumPy's ``nanpercentile``: ``nanquantile`` of ``q / 100``."""
    return _quantile(a, q, 100, axis, out, method if interpolation is None else interpolation,
                     keepdims, weights, "nanpercentile", skip_nan=True)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """NumPy's ``nanmedian``: the median of each slice's numbers, NaNs left
    out (the mean of the two middle ones for an even count; NaN for a slice
    of NaNs only)."""
    a = _one(a)
    if a.dtype.kind != "f":
        from ._sorting import median
        return median(a, axis=axis, out=out, keepdims=keepdims)
    rows, kept, axes = _sorted_rows(a, axis, "nanmedian")
    count = (~np.isnan(rows)).sum(axis=1).reshape(1, -1)
    middle = (_at(rows, (count - 1) // 2) + _at(rows, count // 2)) / 2
    result = np.where(count == 0, np.nan, middle).astype(a.dtype)
    return _finish_quantile(result, (), a, kept, axes, keepdims, out, "nanmedian")


def _quantile(a, q, scale, axis, out, method, keepdims, weights, name, skip_nan=False):
    a = _one(a)
    if weights is not None and method != "inverted_cdf":
        raise ArgumentError(f"{name}: only method 'inverted_cdf' supports weights")
    if method not in _METHODS:
        raise ArgumentError(f"{name}: method {method!r} (expected one of {', '.join(_METHODS)})")
    # A Python number is weak (NEP 50): the result keeps a float input's dtype.
    weak = isinstance(q, (int, float)) and not isinstance(q, bool)
    q = q.numpy() if isinstance(q, Array) else np.asarray(q)
    base = a.dtype if a.dtype.kind == "f" else np.dtype(np.float64)
    float_type = base if weak else np.result_type(base, q.dtype)
    q = q.astype(np.float64) / scale
    if not ((q >= 0) & (q <= 1)).all():
        raise ArgumentError(f"{name}: quantiles must be in the range [0, 1]" if scale == 1
                            else f"{name}: percentiles must be in the range [0, 100]")
    if weights is not None:
        result, kept, axes = _weighted_inverted_cdf(a, q, weights, axis, name, skip_nan)
        return _finish_quantile(result, q.shape, a, kept, axes, keepdims, out, name)
    floats = a.dtype.kind == "f"
    # With the same positions in every row, only those (and the last, a
    # NaN's) need their sorted values: a partition.
    needed = None
    if not (skip_nan and floats):
        def needed(n):
            low, high, _ = _positions(method, n, q.reshape(-1))
            places = [low] if high is None else [low, high]
            return sorted({int(k) for p in places for k in np.ravel(p)} | {n - 1})
    rows, kept, axes = _sorted_rows(a, axis, name, needed)
    n = rows.shape[1]
    # Each quantile's position among a row's sorted values: the same in
    # every row (known), or per row among its numbers (lazy, NaNs left out).
    count = (~np.isnan(rows)).sum(axis=1).reshape(1, -1) if skip_nan and floats else n
    q_shape = q.shape
    q = q.reshape(-1, 1) if isinstance(count, Array) else q.reshape(-1)
    if isinstance(count, Array):
        count = count.astype(np.float64)
    low, high, fraction = _positions(method, count, q)
    below = _at(rows, low)
    if fraction is None:
        result = below  # one of the values: the input's dtype, as NumPy's
    else:
        above = _at(rows, high)
        lo, hi = below.astype(float_type), above.astype(float_type)
        t = fraction.astype(float_type)
        if not isinstance(t, Array):
            t = a._like(t.reshape(-1, 1))
        step = hi - lo
        # NumPy's interpolation: from the nearer end, so that it is monotonic.
        result = np.where(t >= 0.5, hi - step * (1 - t), lo + step * t)
    if floats:
        # A NaN sorts last and makes the quantile NaN; left out, only a row
        # of NaNs does.
        undefined = count == 0 if isinstance(count, Array) else np.isnan(rows[:, n - 1]).reshape(1, -1)
        result = np.where(undefined, np.nan, result)
        result = result.astype(below.dtype if fraction is None else float_type)
    return _finish_quantile(result, q_shape, a, kept, axes, keepdims, out, name)


def _weighted_inverted_cdf(a, q, weights, axis, name, skip_nan=False):
    """NumPy's weighted ``inverted_cdf``: in each row sorted (stably) with
    its weights, the first value whose running share of the weight reaches
    the quantile (past leading zero weights, as NumPy's); NaN for a row
    holding a NaN, or, with ``skip_nan``, NaNs weigh nothing and only a row
    of NaNs gives NaN. ``(Q, R)``, lazily, after a computed check of the
    weights (NumPy's errors)."""
    from ._sorting import argsort
    axes = _axes(a, axis, name)
    w = _one(_lazy([a, weights])[1])
    if w.shape != a.shape:
        if len(axes) != 1 or w.shape != (a.shape[axes[0]],):
            raise ArgumentError(f"{name}: weights of shape {w.shape} for an array of shape "
                                f"{a.shape} (expected its shape, or 1-d along a single axis)")
        w = FUNCTIONS["broadcast_to"](
            w.reshape((1,) * axes[0] + (-1,) + (1,) * (a.ndim - axes[0] - 1)), a.shape)
    kept = [d for d in range(a.ndim) if d not in axes]
    n = int(np.prod([a.shape[d] for d in axes], dtype=np.int64))
    order_of_axes = kept + list(axes)
    lines = lambda v: v.transpose(order_of_axes).reshape(-1, n)
    values, shares = lines(a), lines(w).astype(np.float64)
    floats = a.dtype.kind == "f"
    nan = np.isnan(values) if skip_nan and floats else None
    counted = shares if nan is None else np.where(nan, 0.0, shares)
    all_nan = None if nan is None else nan.all(axis=-1)
    _check_weights(shares, counted, all_nan, name)
    shares = counted
    order = argsort(values, axis=-1, kind="stable")
    values, shares = take_along_axis(values, order, -1), take_along_axis(shares, order, -1)
    cdf = shares.cumsum(axis=-1)
    cdf = cdf / cdf[:, n - 1:]
    # The first position whose share reaches q: how many fall short of it
    # (NumPy takes a share of 0 as short of q = 0 too).
    index = FUNCTIONS["stack"]([((cdf < qk) | (cdf == 0)).sum(axis=-1) for qk in q.reshape(-1)])
    result = _at(values, np.minimum(index, n - 1))
    if floats:
        undefined = all_nan if all_nan is not None else np.isnan(values[:, n - 1])
        result = np.where(undefined.reshape(1, -1), np.nan, result)
    return result, kept, axes


def _check_weights(weights, counted, skipped, name):
    """NumPy's errors for quantile weights: a negative weight, or a row
    whose ``counted`` weights sum to zero, inf or NaN (but ``skipped`` rows:
    those of NaNs only). Computed: one demand of two flags."""
    total = counted.sum(axis=-1)
    empty = ~(np.isfinite(total) & (total > 0))
    if skipped is not None:
        empty = empty & ~skipped
    negative, empty = np.asarray(FUNCTIONS["stack"]([(weights < 0).any(), empty.any()]))
    if negative:
        raise ArgumentError(f"{name}: weights must be non-negative")
    if empty:
        raise ArgumentError(f"{name}: weights of some row sum to zero, inf or NaN (expected a "
                            "positive, finite total per row, as NumPy's)")


def _positions(method, n, q):
    """Where quantiles ``q`` fall among ``n`` sorted values (a number, or
    lazy counts per row), by NumPy's rules for ``method``: the indices below
    and above (int64), and the fraction between them (None for a method
    that picks a value, whose index is the one below)."""
    if method in _CONTINUOUS or method in ("midpoint", "averaged_inverted_cdf"):
        if method == "linear" or method == "midpoint":
            virtual = q * (n - 1)
        elif method in _CONTINUOUS:
            alpha, beta = _CONTINUOUS[method]
            virtual = n * q + (alpha + q * (1 - alpha - beta)) - 1
        else:
            virtual = n * q - 1
        low = np.floor(virtual)
        fraction = virtual - low
        if method == "midpoint":
            fraction = np.where(fraction > 0, 0.5, 0.0)
        elif method == "averaged_inverted_cdf":
            fraction = np.where(fraction == 0, 0.5, 1.0)
        # Beyond the ends, both neighbours are the first or the last value.
        last = n - 1
        high = np.where(virtual >= last, last, np.where(virtual < 0, 0, low + 1))
        low = np.where(virtual >= last, last, np.where(virtual < 0, 0, low))
        return low.astype(np.int64), high.astype(np.int64), fraction
    if method == "lower":
        index = np.floor(q * (n - 1))
    elif method == "higher":
        index = np.ceil(q * (n - 1))
    elif method == "nearest":
        index = np.rint(q * (n - 1))  # ties to even, as NumPy's
    else:
        # NumPy's discontinuous ones: the next index unless the virtual one
        # is whole (and, for closest_observation, odd: the nearest even
        # order statistic, counted from 1).
        virtual = n * q - 1 if method == "inverted_cdf" else n * q - 1.5
        low = np.floor(virtual)
        whole = (virtual - low) == 0
        if method == "closest_observation":
            whole = whole & (low % 2 == 1)
        index = np.maximum(np.where(whole, low, low + 1), 0)
    return index.astype(np.int64), None, None


def _at(rows, index):
    """The values of ``rows`` (sorted, ``(R, n)``) at ``index``: known
    ``(Q,)`` positions, the same in every row, or lazy ``(Q, R)`` ones, each
    row's own; ``(Q, R)``."""
    if not isinstance(index, Array):
        return take(rows, index, axis=1).transpose(1, 0)
    count, n = rows.shape
    starts = rows._like((np.arange(count) * n).reshape(1, -1))
    return take(rows.reshape(-1), index + starts)


def _finish_quantile(result, q_shape, a, kept, axes, keepdims, out, name):
    """``(Q, R)`` results shaped as NumPy's: ``q``'s axes, then the kept ones
    (or all, length 1 where reduced, with ``keepdims``)."""
    shape = q_shape + tuple(a.shape[d] for d in kept)
    if keepdims:
        shape = q_shape + tuple(1 if d in axes else a.shape[d] for d in range(a.ndim))
    result = result.reshape(shape)
    return result if out is None else _store(result, out, name)


def _sorted_rows(a, axis, name, needed=None):
    """``a``'s values along the reduced ``axis`` sorted, one row per index
    of the kept axes (a single row when none is kept), with the kept axes
    and the reduced ones; with ``needed`` (the row length's positions that
    must hold their sorted values), only partitioned at those."""
    from ._sorting import partition, sort
    axes = _axes(a, axis, name)
    kept = [d for d in range(a.ndim) if d not in axes]
    n = int(np.prod([a.shape[d] for d in axes], dtype=np.int64))
    if n == 0:
        raise ArgumentError(f"{name}: no values along the reduced axes of shape {a.shape}")
    order = kept + list(axes)
    lined = a.transpose(order) if order != list(range(a.ndim)) else a
    rows = lined.reshape(-1, n)
    if needed is not None:
        return partition(rows, needed(n), axis=-1), kept, axes
    return sort(rows, -1), kept, axes


EXPORTED = (quantile, percentile, nanquantile, nanpercentile, nanmedian)
