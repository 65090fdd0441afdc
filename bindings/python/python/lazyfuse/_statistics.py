"""NumPy's statistics and numerical helpers, lazily: ``ptp``, ``average``,
``nanargmax``/``nanargmin``, ``cov``, ``corrcoef``, ``gradient``,
``diff``, ``trapezoid``, ``cross``, ``kron``, ``logspace`` (the quantiles
are in ``_quantiles``).

``average`` with weights checks that they do not sum to zero, which
computes their sum (NumPy raises there; CuPy synchronizes too)."""

import operator
import warnings

import numpy as np

from ._array import Array, _axes, _store, where
from ._creation import _lazy, _one
from ._joins import broadcast_to, concatenate, moveaxis, stack
from ._ranges import linspace
from ._registry import FUNCTIONS
from .errors import ArgumentError, ShapeError


def ptp(a, axis=None, out=None, keepdims=False):
    """NumPy's ``ptp``: the range (maximum minus minimum) along ``axis``."""
    a = _one(a)
    result = a.max(axis=axis, keepdims=keepdims) - a.min(axis=axis, keepdims=keepdims)
    return result if out is None else _store(result, out, "ptp")


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """NumPy's ``average``: the mean, or with ``weights`` (of ``a``'s shape,
    or 1-d along a single ``axis``) the weighted mean; ``returned`` adds
    the sum of the weights."""
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
        scale = scale if scale.shape == result.shape else broadcast_to(scale, result.shape)
        return result, scale
    return result


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """NumPy's ``cov``: the covariance matrix of the variables (rows, or
    columns with ``rowvar=False``) of ``m`` and ``y``: their (weighted)
    deviations from the (weighted) mean, one matrix product, divided by
    NumPy's normalization; length-1 axes squeezed. Lazy; weights are
    checked (NumPy's errors) on computed values."""
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
    broadcast over the other axes. 2-element vectors are deprecated as in
    NumPy 2.0 to 2.4 (NumPy 2.5 refuses them)."""
    a, b = (_one(x) for x in _lazy([a, b]))
    if axis is not None:
        axisa = axisb = axisc = axis
    a = moveaxis(a, axisa, -1)
    b = moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ShapeError("cross: incompatible dimensions for cross product (dimension must be 2 or 3)")
    if a.shape[-1] == 2 or b.shape[-1] == 2:
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of "
                      "3-dimensional vectors instead. (deprecated in NumPy 2.0)",
                      DeprecationWarning, stacklevel=2)
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
    powers = linspace(start, stop, num, endpoint=endpoint, axis=axis)
    result = np.power(base, powers) if isinstance(powers, Array) else base ** powers
    return result if dtype is None else result.astype(dtype)


EXPORTED = (ptp, average, cov, corrcoef, gradient, nanargmax, nanargmin, diff, trapezoid, cross,
             kron, logspace)
