"""NumPy's sorting and what builds on it: ``sort``, ``argsort``,
``lexsort``, ``median``, ``unique``, ``searchsorted``, ``digitize`` and
``interp``; and the selections ``select``, ``choose`` and ``piecewise``,
over the native ``sort``, ``argsort`` and ``searchsorted`` (lazy kernels
sorting rows and searching sorted arrays; NaNs last, as NumPy's)."""

import numpy as np

from ._array import Array, _axes, _store, where
from ._creation import _lazy, _one, zeros_like
from ._fancy import take, take_along_axis
from ._registry import FUNCTIONS, OPERATIONS, register
from .errors import ArgumentError


def sort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """NumPy's ``sort``: a sorted copy along ``axis`` (of the flattened
    array for ``None``), lazily. ``kind`` and ``stable`` are accepted (as
    CuPy's: sorted values are the same, stable or not); ``order`` is
    refused; ``descending`` is the array API's (largest first: the
    ascending values reversed, NaNs first)."""
    a, axis = _along(a, axis, order, "sort")
    result = Array(a._a.sort(axis))
    return _reversed(result, axis) if descending else result


def argsort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """NumPy's ``argsort``: the positions along ``axis`` (of the flattened
    array for ``None``) that sort ``a``, lazily; always stable (equal values
    keep their order, NaNs last), which every ``kind`` allows. With the
    array API's ``descending``, largest first and still stable: the stable
    ascending order of ``a`` reversed along the axis, itself reversed,
    and its positions mapped back."""
    a, axis = _along(a, axis, order, "argsort")
    if not descending:
        return Array(a._a.argsort(axis))
    backwards = Array(_reversed(a, axis)._a.argsort(axis))
    return (a.shape[axis] - 1) - _reversed(backwards, axis)


def _reversed(a, axis):
    """``a`` reversed along ``axis`` (a view)."""
    index = [slice(None)] * a.ndim
    index[axis] = slice(None, None, -1)
    return a[tuple(index)]


def _along(a, axis, order, name):
    """``a`` as a lazy array and ``axis`` checked (None: the flattened
    array's only axis); ``order`` refused, as there are no fields."""
    if order is not None:
        raise ArgumentError(f"{name}: lazyfuse arrays have no fields (order= is for structured arrays)")
    a = _one(a)
    if axis is None:
        return a.reshape(-1), 0
    return a, _axes(a, axis, name)[0]


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """NumPy's ``partition``: each ``kth`` element where sorting would put
    it, smaller ones before, larger after, lazily (``lazyfuse::partition``:
    a selection per ``kth`` on the CPU, a sort on devices)."""
    a, axis = _along(a, axis, order, "partition")
    positions = np.atleast_1d(np.asarray(kth))
    if positions.dtype.kind not in "iu":
        raise TypeError(f"partition: kth of dtype {positions.dtype} (expected integers)")
    return Array(a._a.partition(axis, [int(k) for k in positions.ravel()]))


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """NumPy's ``argpartition``: positions that ``partition``; here those
    that sort (stably), lazily."""
    return argsort(a, axis=axis, order=order)


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """NumPy's ``isin``: whether each of ``element`` is among
    ``test_elements``, lazily: the test elements sorted, a binary search
    for each element, and a comparison with what it finds."""
    element, tests = (_one(x) for x in _lazy([element, test_elements]))
    tests = sort(tests.reshape(-1), 0)
    if tests.size == 0:
        found = Array(element._a.full_like(list(element.shape), False, "bool"))
    else:
        at = np.minimum(searchsorted(tests, element, "left"), tests.size - 1)
        found = take(tests, at) == element
    return ~found if invert else found


def select(condlist, choicelist, default=0):
    """NumPy's ``select``: from each position, the choice of the first true
    condition (``default`` where none is), lazily: nested ``where``s."""
    if len(condlist) != len(choicelist):
        raise ArgumentError("select: list of cases must be same length as list of conditions")
    if not condlist:
        raise ArgumentError("select with an empty condition list is not possible")
    choices = _lazy(list(choicelist) + [default])
    conditions = [c if isinstance(c, Array) else np.asarray(c) for c in condlist]
    for c in conditions:
        if c.dtype != np.bool_:
            raise TypeError(f"select: invalid entry in condlist: should be boolean ndarray, not {c.dtype}")
    # NumPy's dtype: of the choices as arrays (numbers not weak).
    dtype = np.result_type(*[c.dtype if isinstance(c, Array) else np.asarray(c) for c in choices])
    result = choices[-1]
    for condition, choice in zip(reversed(conditions), reversed(choices[:-1])):
        result = where(condition, choice, result)
    return result.astype(dtype)


def choose(a, choices, out=None, mode="raise"):
    """NumPy's ``choose``: from each position, ``choices[a]`` there (all
    broadcast together), lazily: nested ``where``s. ``mode="raise"``
    checks ``a``'s range first (computing it); ``"wrap"`` and ``"clip"``
    stay lazy."""
    a = _one(a)
    choices = _lazy(list(choices))
    n = len(choices)
    if a.dtype == "bfloat16" or a.dtype.kind not in "biu":
        raise TypeError(f"choose: indices of dtype {a.dtype} (expected integers)")
    if mode == "wrap":
        a = a % n
    elif mode == "clip":
        a = np.clip(a, 0, n - 1)
    elif mode != "raise":
        raise ArgumentError(f"choose: mode {mode!r} (expected 'raise', 'wrap' or 'clip')")
    elif a.size and bool(((a < 0) | (a >= n)).any()):
        raise ArgumentError("invalid entry in choice array")
    dtype = np.result_type(*[c.dtype if isinstance(c, Array) else np.asarray(c) for c in choices])
    shape = np.broadcast_shapes(a.shape, *(np.shape(c) for c in choices))
    result = choices[-1] if isinstance(choices[-1], Array) else a._like(choices[-1])
    for k in range(n - 2, -1, -1):
        result = where(a == k, choices[k], result)
    result = np.broadcast_to(result, shape).astype(dtype)
    return result if out is None else _store(result, out, "choose")


def lexsort(keys, axis=-1):
    """NumPy's ``lexsort``: the positions sorting by the last key, ties by
    the one before, and so on, lazily: a stable argsort per key, from the
    first, each of the keys reordered by the positions so far."""
    keys = _lazy(list(keys)) if not isinstance(keys, Array) else [keys[k] for k in range(len(keys))]
    if not keys:
        raise ArgumentError("lexsort: need sequence of keys with len > 0")
    order = argsort(keys[0], axis)
    for key in keys[1:]:
        order = take_along_axis(order, argsort(take_along_axis(key, order, axis), axis), axis)
    return order


def piecewise(x, condlist, funclist, *args, **kw):
    """NumPy's ``piecewise``: ``funclist[k]`` (a function of ``x``, or a
    value) where ``condlist[k]`` holds, a later condition winning; an extra
    function for where none holds, else 0. Lazily: each function is called
    once on the whole of ``x`` (NumPy calls it on the selected elements)."""
    x = _one(x)
    if isinstance(condlist, (Array, np.ndarray)) and getattr(condlist, "ndim", 1) == x.ndim:
        condlist = [condlist]
    conditions = [c if isinstance(c, Array) else x._like(np.asarray(c, bool)) for c in condlist]
    if len(funclist) == len(conditions) + 1:
        otherwise = ~conditions[0] if conditions else x == x
        for c in conditions[1:]:
            otherwise = otherwise & ~c
        conditions.append(otherwise)
    elif len(funclist) != len(conditions):
        raise ArgumentError(f"with {len(conditions)} condition(s), either {len(conditions)} or "
                            f"{len(conditions) + 1} functions are expected")
    result = zeros_like(x)
    for condition, f in zip(conditions, funclist):
        value = f(x, *args, **kw) if callable(f) else f
        result = where(condition, value, result)
    return result.astype(x.dtype)


def searchsorted(a, v, side="left", sorter=None):
    """NumPy's ``searchsorted``: where each of ``v`` goes in the ascending
    1-d ``a`` (ordered by ``sorter``'s positions if given) to keep it
    sorted, lazily: a binary search per value (``lazyfuse::searchsorted``).
    A number ``v`` gives a 0-d array."""
    if side not in ("left", "right"):
        raise ArgumentError(f"searchsorted: side {side!r} (expected 'left' or 'right')")
    a, v = (_one(x) for x in _lazy([a, v]))
    if a.ndim != 1:
        raise ArgumentError(f"searchsorted: a sorted array of shape {a.shape} (expected 1-d)")
    if sorter is not None:
        a = take(a, sorter)
    return Array(a._a.searchsorted(v._a, side))


def digitize(x, bins, right=False):
    """NumPy's ``digitize``: the index of the bin each of ``x`` falls in,
    for monotonic ``bins`` (checked: ``bins`` are computed when lazy)."""
    x, bins = (_one(b) for b in _lazy([x, bins]))
    if bins.ndim != 1:
        raise ArgumentError(f"digitize: bins of shape {bins.shape} (expected 1-d)")
    edges = bins.numpy()
    steps = np.diff(edges)
    side = "left" if right else "right"
    if (steps >= 0).all():
        return searchsorted(bins, x, side)
    if (steps <= 0).all():
        return bins.size - searchsorted(bins[::-1], x, side)
    raise ArgumentError("digitize: bins must be monotonically increasing or decreasing")


def interp(x, xp, fp, left=None, right=None, period=None):
    """NumPy's ``interp``: the piecewise linear interpolant through the
    points ``(xp, fp)`` (``xp`` increasing) at ``x``, ``left``/``right``
    outside them (``fp``'s ends by default), lazily: a binary search, two
    gathers and a fused interpolation. With a ``period``, NumPy's periodic
    form: everything taken modulo the period, the points sorted and
    extended by one period at each end."""
    x, xp, fp = (_one(b) for b in _lazy([x, xp, fp]))
    if period is not None:
        if period == 0:
            raise ArgumentError("interp: period must be a non-zero value")
        period, left, right = abs(float(period)), None, None
        x, xp = x.astype(np.float64) % period, xp.astype(np.float64) % period
        if xp.ndim == 1 and xp.size:
            order = argsort(xp, kind="stable")
            xp, fp = take(xp, order), take(fp, order)
            join = FUNCTIONS["concatenate"]
            xp = join([xp[-1:] - period, xp, xp[:1] + period])
            fp = join([fp[-1:], fp, fp[:1]])
    if xp.ndim != 1 or fp.ndim != 1 or xp.size != fp.size:
        raise ArgumentError(f"interp: xp and fp of shapes {xp.shape} and {fp.shape} (expected "
                            "1-d and of the same length)")
    if xp.size == 0:
        raise ArgumentError("interp: array of sample points is empty")
    x, xp, fp = x.astype(np.float64), xp.astype(np.float64), fp.astype(np.float64)
    n = xp.size
    first, last = fp[0], fp[n - 1]
    below = first if left is None else left
    above = last if right is None else right
    if n == 1:  # NumPy's: the one value unless below or above (NaN too)
        return np.where(x < xp[0], below, np.where(x > xp[0], above, first)).astype(np.float64)
    # The segment j with xp[j] <= x < xp[j + 1] (the last one for x at its end).
    j = np.clip(searchsorted(xp, x, "right") - 1, 0, n - 2)
    x0, x1, y0, y1 = take(xp, j), take(xp, j + 1), take(fp, j), take(fp, j + 1)
    slope = (y1 - y0) / (x1 - x0)
    value = slope * (x - x0) + y0
    # NumPy's fallbacks: from the other end, then the flat value.
    value = np.where(np.isnan(value), slope * (x - x1) + y1, value)
    inside = np.where(np.isnan(value) & (y0 == y1), y0, value)
    result = np.where(x < xp[0], below, np.where(x > xp[n - 1], above, inside))
    result = np.where(x == xp[n - 1], last, result)
    return np.where(np.isnan(x), x, result).astype(np.float64)


def sort_in_place(a, axis=-1, kind=None, order=None, *, stable=None):
    """NumPy's ``ndarray.sort``: ``a`` itself takes its sorted value."""
    a._rebind(sort(a, axis, kind, order, stable=stable)._a)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """NumPy's ``median``: the middle of the sorted values (the mean of the
    two middle ones for an even count), NaN where a NaN is among them."""
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
        # The two middle positions in place, and the last (a NaN's).
        parted = partition(rows, [(n - 1) // 2, n // 2, n - 1], axis=-1)
        middle = _middle(parted, n, float_type, a.dtype.kind in "fc")
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
    values, one NaN unless ``equal_nan=False``), with NumPy's
    ``return_index``/``return_inverse``/``return_counts``: the values
    sorted lazily (stably, by ``lazyfuse::argsort``, when positions are
    asked for); the count of distinct values decides the result's shape,
    so the sorted values are computed and the rest follows from them in
    one pass. Along an ``axis``, NumPy on the computed values."""
    a = _one(ar)
    if axis is not None:
        results = np.unique(a.numpy(), return_index, return_inverse, return_counts, axis,
                            equal_nan=equal_nan)
        return tuple(a._like(r) for r in results) if isinstance(results, tuple) else a._like(results)
    flat = a.reshape(-1)
    positions = return_index or return_inverse
    if flat.size == 0:
        values, order = flat.numpy(), np.zeros(0, np.int64)
    elif positions:
        order = argsort(flat, 0).numpy()  # stable: a value's first position first
        values = flat.numpy()[order]
    else:
        values = sort(flat, 0).numpy()  # computed once: the mask needs the same values
    keep = np.empty(values.size, dtype=bool)
    keep[:1] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    if equal_nan and values.dtype.kind in "fc":
        keep[1:] &= ~(np.isnan(values[1:]) & np.isnan(values[:-1]))  # one NaN
    results = [a._like(values[keep])]
    if return_index:
        results.append(a._like(order[keep].astype(np.intp)))
    if return_inverse:
        inverse = np.empty(values.size, np.intp)
        inverse[order] = np.cumsum(keep) - 1
        results.append(a._like(inverse.reshape(a.shape)))  # NumPy 2: the input's shape
    if return_counts:
        starts = np.flatnonzero(keep)
        results.append(a._like(np.diff(np.append(starts, values.size)).astype(np.intp)))
    return results[0] if len(results) == 1 else tuple(results)


register(OPERATIONS, sort_in_place, argsort, searchsorted)  # `Array`'s methods
