"""NumPy's statistics and numerical helpers, lazily: ``ptp``, ``average``,
``quantile``/``percentile`` (and their ``nan`` forms), ``nanargmax``/
``nanargmin``, ``cov``, ``corrcoef``, ``gradient``, ``diff``,
``trapezoid``, ``cross``, ``kron``, ``logspace``.

``quantile`` sorts along the reduced axes (``lazyfuse::sort``) and reads
the two neighbours of each requested position, which are known from the
shape alone: a gather and a fused interpolation, nothing computed early.
``average`` with weights checks that they do not sum to zero, which
computes their sum (NumPy raises there; CuPy synchronizes too)."""

import operator

import numpy as np

from ._array import Array, _store
from .errors import ArgumentError, ShapeError


def _one(a):
    from ._numpy import _one as one
    return one(a)


def _axes(a, axis, name):
    from ._reductions import _axes as axes
    return axes(a, axis, name)


def ptp(a, axis=None, out=None, keepdims=False):
    """NumPy's ``ptp``: the range (maximum minus minimum) along ``axis``."""
    a = _one(a)
    result = a.max(axis=axis, keepdims=keepdims) - a.min(axis=axis, keepdims=keepdims)
    return result if out is None else _store(result, out, "ptp")


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """NumPy's ``average``: the mean, or with ``weights`` (of ``a``'s shape,
    or 1-d along a single ``axis``) the weighted mean; ``returned`` adds
    the sum of the weights."""
    from ._numpy import _lazy
    a = _one(a)
    if weights is None:
        result = a.mean(axis=axis, keepdims=keepdims)
        count = a.size // max(result.size, 1) if a.size else 0
        scale = result._like(np.full(result.shape, count, dtype=result.dtype))
        return (result, scale) if returned else result
    w = _one(_lazy([a, weights])[1])
    if w.shape != a.shape:
        if axis is None:
            raise TypeError("average: axis must be specified when shapes of a and weights differ")
        axes = _axes(a, axis, "average")
        if w.ndim != 1 or len(axes) != 1:
            raise TypeError("average: 1D weights expected when shapes of a and weights differ")
        if w.shape[0] != a.shape[axes[0]]:
            raise ShapeError(f"average: weights of length {w.shape[0]} for an axis of length "
                             f"{a.shape[axes[0]]}")
        w = w.reshape(tuple(a.shape[d] if d == axes[0] else 1 for d in range(a.ndim)))
    floats = np.float64 if a.dtype.kind in "biu" else None
    kind = np.result_type(a.dtype, w.dtype, *([floats] if floats else []))
    scale = w.astype(kind).sum(axis=axis, keepdims=keepdims)
    if (scale.numpy() == 0).any():
        raise ZeroDivisionError("average: weights sum to zero, can't be normalized")
    result = (a.astype(kind) * w.astype(kind)).sum(axis=axis, keepdims=keepdims) / scale
    if returned:
        from ._numpy import broadcast_to
        scale = scale if scale.shape == result.shape else broadcast_to(scale, result.shape)
        return result, scale
    return result


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
    from ._fancy import take_along_axis
    from ._numpy import _lazy, FUNCTIONS
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
    from ._numpy import FUNCTIONS
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
    from ._fancy import take
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


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """NumPy's ``cov``: the covariance matrix of the variables (rows, or
    columns with ``rowvar=False``) of ``m`` and ``y``: their (weighted)
    deviations from the (weighted) mean, one matrix product, divided by
    NumPy's normalization; length-1 axes squeezed. Lazy; weights are
    checked (NumPy's errors) on computed values."""
    from ._numpy import _lazy, concatenate
    if ddof is not None and ddof != int(ddof):
        raise ArgumentError(f"cov: ddof={ddof!r} (expected an integer)")
    m = _one(m)
    y = None if y is None else _one(_lazy([m, y])[1])
    for name, v in (("m", m), ("y", y)):
        if v is not None and v.ndim > 2:
            raise ArgumentError(f"cov: {name} of shape {v.shape} (expected at most 2 axes)")
    if dtype is None:
        dtype = np.result_type(m.dtype, np.float64, *(() if y is None else (y.dtype,)))
    x = m.astype(dtype).reshape(1, -1) if m.ndim < 2 else m.astype(dtype)
    if not rowvar and m.ndim != 1:
        x = x.T
    if x.shape[0] == 0:
        return m._like(np.empty((0, 0)))
    if y is not None:
        y = y.astype(dtype).reshape(1, -1) if y.ndim < 2 else y.astype(dtype)
        if not rowvar and y.shape[0] != 1:
            y = y.T
        x = concatenate([x, y], axis=0)
    ddof = (0 if bias else 1) if ddof is None else int(ddof)
    f = _cov_weights(x, fweights, "fweights")
    a = _cov_weights(x, aweights, "aweights")
    w = f if a is None else a if f is None else f * a
    if w is None:
        deviations = x - x.mean(axis=1, keepdims=True)
        fact = x.shape[1] - ddof
        product = deviations @ deviations.T
        # NumPy multiplies by 1 / 0 = inf where the degrees of freedom are not positive.
        result = product * (1.0 / fact if fact > 0 else np.inf)
    else:
        w_sum = w.sum()
        deviations = (x - (x * w).sum(axis=1, keepdims=True) / w_sum).astype(x.dtype)
        if ddof == 0:
            fact = w_sum
        elif a is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * (w * a).sum() / w_sum
        product = deviations @ (deviations * w).T
        result = product * np.where(fact > 0, 1.0 / fact, np.inf)
    return result.squeeze()


def _cov_weights(x, weights, name):
    """``cov``'s ``fweights`` or ``aweights`` as float64, one per
    observation of ``x``, checked as NumPy checks them (computed)."""
    if weights is None:
        return None
    w = _one(weights if isinstance(weights, Array) else x._like(np.asarray(weights, float)))
    w = w.astype(np.float64)
    if w.ndim > 1:
        raise ArgumentError(f"cov: {name} of shape {w.shape} (expected one axis)")
    if w.shape[0] != x.shape[1]:
        raise ShapeError(f"cov: {w.shape[0]} {name} for {x.shape[1]} observations")
    from ._numpy import FUNCTIONS
    checks = [(w < 0).any()] + ([(w != np.round(w)).any()] if name == "fweights" else [])
    negative, *fractional = np.asarray(FUNCTIONS["stack"](checks))
    if any(fractional):
        raise TypeError(f"cov: {name} must be integer")
    if negative:
        raise ArgumentError(f"cov: {name} cannot be negative")
    return w


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """NumPy's ``corrcoef``: ``cov`` normalized by the standard deviations,
    clipped to ``[-1, 1]``."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = np.sqrt(c.diagonal())
    result = c / d.reshape(-1, 1) / d.reshape(1, -1)
    return np.clip(result, -1, 1)


def gradient(f, *varargs, axis=None, edge_order=1):
    """NumPy's ``gradient``: central differences inside, one-sided ones of
    ``edge_order`` 1 or 2 at the ends; one array per axis (a tuple for
    several). Spacings: one number for every axis, or per axis a number or
    the coordinates along it (a 1-d array; NumPy's non-uniform formulas,
    or its uniform ones when the coordinates are evenly spaced, which is
    computed)."""
    from ._numpy import concatenate
    f = _one(f)
    axes = _axes(f, axis, "gradient")
    if len(varargs) == 0:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacings = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise ArgumentError("gradient: invalid number of arguments (expected one spacing, or "
                            f"one per axis: {len(axes)})")
    if edge_order not in (1, 2):
        raise ArgumentError("gradient: 'edge_order' greater than 2 not supported")
    float_type = f.dtype if f.dtype.kind == "f" else np.dtype(np.float64)
    f = f.astype(float_type)
    results = []
    for axis, h in zip(axes, spacings):
        n = f.shape[axis]
        if n < edge_order + 1:
            raise ArgumentError("gradient: shape of array too small to calculate a numerical "
                                f"gradient, at least (edge_order + 1) elements are required")
        part = lambda start, stop: f[(slice(None),) * axis + (slice(start, stop),)]
        h = _spacing(h, n, f)
        if np.ndim(h) == 0:
            pieces = _uniform_gradient(part, n, h, edge_order)
        else:
            pieces = _coordinate_gradient(part, n, h, edge_order, axis, f.ndim)
        results.append(concatenate(pieces, axis=axis).astype(float_type))
    return results[0] if len(results) == 1 else tuple(results)


def _spacing(h, n, like):
    """A number spacing as it is; coordinates as their differences (a lazy
    1-d array), or as one number when they are evenly spaced (NumPy then
    takes its uniform formulas)."""
    if np.ndim(h) == 0 and not isinstance(h, Array):
        return h
    x = _one(h) if isinstance(h, Array) else like._like(np.asarray(h))
    if x.ndim != 1:
        raise ArgumentError("gradient: distances must be either scalars or 1d")
    if x.size != n:
        raise ArgumentError("gradient: when 1d, distances must match the length of the "
                            "corresponding dimension")
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    dx = x[1:] - x[:-1]
    steps = dx.numpy()  # computed: even spacing decides NumPy's formula
    return steps[0] if (steps == steps[0]).all() else dx


def _uniform_gradient(part, n, h, edge_order):
    inside = (part(2, None) - part(None, -2)) / (2.0 * h)
    if edge_order == 1:
        first = (part(1, 2) - part(0, 1)) / h
        last = (part(n - 1, n) - part(n - 2, n - 1)) / h
    else:
        first = (-1.5 * part(0, 1) + 2.0 * part(1, 2) - 0.5 * part(2, 3)) / h
        last = (0.5 * part(n - 3, n - 2) - 2.0 * part(n - 2, n - 1) + 1.5 * part(n - 1, n)) / h
    return [first, inside, last]


def _coordinate_gradient(part, n, dx, edge_order, axis, ndim):
    """NumPy's second-order differences at uneven spacings ``dx`` (lazy),
    the coefficients broadcast along ``axis``."""
    along = lambda v: v.reshape((1,) * axis + (-1,) + (1,) * (ndim - axis - 1))
    dx1, dx2 = along(dx[:-1]), along(dx[1:])
    a = -dx2 / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    inside = a * part(None, -2) + b * part(1, -1) + c * part(2, None)
    if edge_order == 1:
        first = (part(1, 2) - part(0, 1)) / dx[0]
        last = (part(n - 1, n) - part(n - 2, n - 1)) / dx[n - 2]
        return [first, inside, last]
    d1, d2 = dx[0], dx[1]
    first = (-(2.0 * d1 + d2) / (d1 * (d1 + d2)) * part(0, 1) + (d1 + d2) / (d1 * d2) * part(1, 2)
             - d1 / (d2 * (d1 + d2)) * part(2, 3))
    d1, d2 = dx[n - 3], dx[n - 2]
    last = (d2 / (d1 * (d1 + d2)) * part(n - 3, n - 2) - (d2 + d1) / (d1 * d2) * part(n - 2, n - 1)
            + (2.0 * d2 + d1) / (d2 * (d1 + d2)) * part(n - 1, n))
    return [first, inside, last]


def nanargmax(a, axis=None, out=None, *, keepdims=False):
    """NumPy's ``nanargmax``: ``argmax`` with NaNs left out; a slice of
    NaNs only raises NumPy's ``ValueError`` (which computes whether one is:
    a small boolean reduction)."""
    return _nan_arg(a, "argmax", -np.inf, axis, out, keepdims)


def nanargmin(a, axis=None, out=None, *, keepdims=False):
    """NumPy's ``nanargmin``: ``argmin`` with NaNs left out (see
    ``nanargmax``)."""
    return _nan_arg(a, "argmin", np.inf, axis, out, keepdims)


def _nan_arg(a, name, fill, axis, out, keepdims):
    from ._array import where
    a = _one(a)
    if a.dtype.kind == "f":
        missing = np.isnan(a)
        if missing.all(axis=axis).any().item():
            raise ArgumentError(f"nan{name}: All-NaN slice encountered")
        a = where(missing, fill, a)
    return getattr(a, name)(axis=axis, out=out, keepdims=keepdims)


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """NumPy's ``diff``: the ``n``-th differences along ``axis`` (``!=`` for
    booleans), ``prepend``/``append`` joined first."""
    from ._numpy import broadcast_to, concatenate
    a = _one(a)
    n = operator.index(n)
    if n < 0:
        raise ArgumentError(f"diff: order must be non-negative but got {n}")
    if a.ndim == 0:
        raise ArgumentError("diff requires input that is at least one dimensional")
    axis = _axes(a, axis, "diff")[0]

    def edge(extra):  # a number stands for a slice of the axis' length 1
        extra = extra if isinstance(extra, Array) else a._like(extra)
        return broadcast_to(extra, a.shape[:axis] + (1,) + a.shape[axis + 1:]) if extra.ndim == 0 else extra

    pieces = ([edge(prepend)] if prepend is not None else []) + [a] + (
        [edge(append)] if append is not None else [])
    a = concatenate(pieces, axis=axis) if len(pieces) > 1 else a
    for _ in range(n):
        head = (slice(None),) * axis + (slice(1, None),)
        tail = (slice(None),) * axis + (slice(None, -1),)
        a = a[head] != a[tail] if a.dtype == np.bool_ else a[head] - a[tail]
    return a


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """NumPy's ``trapezoid``: the integral of ``y`` along ``axis`` by the
    trapezoidal rule, at spacing ``dx`` or at sample points ``x``."""
    y = _one(y)
    axis = _axes(y, axis, "trapezoid")[0]
    if x is None:
        d = dx
    else:
        x = _one(x) if isinstance(x, Array) else y._like(x)
        d = diff(x, axis=-1 if x.ndim == 1 else axis)
        if x.ndim == 1:
            d = d.reshape(tuple(d.shape[0] if k == axis else 1 for k in range(y.ndim)))
    head = (slice(None),) * axis + (slice(1, None),)
    tail = (slice(None),) * axis + (slice(None, -1),)
    return (d * (y[head] + y[tail]) / 2.0).sum(axis=axis)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """NumPy's ``cross`` of 3-element vectors (2-element ones have a zero
    third component; two 2-element ones give the scalar z component),
    broadcast over the other axes."""
    from ._numpy import _lazy, broadcast_to, moveaxis, stack
    a, b = (_one(x) for x in _lazy([a, b]))
    if axis is not None:
        axisa = axisb = axisc = axis
    a = moveaxis(a, axisa, -1)
    b = moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ShapeError("cross: incompatible dimensions for cross product (dimension must be 2 or 3)")
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return a0 * b1 - a1 * b0
    a2 = a[..., 2] if a.shape[-1] == 3 else 0  # a 2-element vector's z is 0
    b2 = b[..., 2] if b.shape[-1] == 3 else 0
    parts = [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0]
    shape = np.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    result = stack([p if p.shape == shape else broadcast_to(p, shape) for p in parts], axis=-1)
    return moveaxis(result, -1, axisc)


def kron(a, b):
    """NumPy's ``kron``: the Kronecker product (blocks of ``b`` scaled by
    each element of ``a``), one broadcast product reshaped."""
    from ._numpy import _lazy
    a, b = (_one(x) for x in _lazy([a, b]))
    d = max(a.ndim, b.ndim)
    sa, sb = (1,) * (d - a.ndim) + a.shape, (1,) * (d - b.ndim) + b.shape
    wide_a = tuple(x for s in sa for x in (s, 1))
    wide_b = tuple(x for s in sb for x in (1, s))
    product = a.reshape(wide_a) * b.reshape(wide_b)
    return product.reshape(tuple(x * y for x, y in zip(sa, sb)))


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """NumPy's ``logspace``: ``base`` to the powers of ``linspace(start,
    stop, num)``."""
    from ._numpy import linspace
    powers = linspace(start, stop, num, endpoint=endpoint, axis=axis)
    result = np.power(base, powers) if isinstance(powers, Array) else base ** powers
    return result if dtype is None else result.astype(dtype)


FUNCTIONS = (ptp, average, cov, corrcoef, gradient, quantile, percentile, nanquantile,
             nanpercentile, nanmedian, nanargmax, nanargmin, diff, trapezoid, cross, kron,
             logspace)
