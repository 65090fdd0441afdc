"""NumPy's arrays of evenly spaced values and of diagonals' positions,
generated where they are used: ``linspace``, ``eye``, ``identity``, and
``tril``/``triu`` (zeros above or below a diagonal)."""

import operator

import numpy as np

from ._array import Array, where
from ._creation import _lazy, _one, arange, zeros
from ._joins import moveaxis
from ._registry import FUNCTIONS
from .errors import ArgumentError


def _below(shape, k, like):
    """``j - i`` over the last two axes of ``shape`` compared with ``k``:
    ``(i, j)`` index arrays that broadcast."""
    rows, cols = shape[-2], shape[-1]
    i = Array(like._a.arange_like(rows, "int64")).reshape(rows, 1)
    j = Array(like._a.arange_like(cols, "int64")).reshape(1, cols)
    return j - i


def tril(m, k=0):
    """NumPy's ``tril``: zeros above the ``k``-th diagonal, lazily."""
    m = _one(m)
    if m.ndim < 2:
        raise ArgumentError(f"tril: an array of shape {m.shape} (expected at least 2 axes)")
    return where(_below(m.shape, k, m) <= k, m, 0)


def triu(m, k=0):
    """NumPy's ``triu``: zeros below the ``k``-th diagonal, lazily."""
    m = _one(m)
    if m.ndim < 2:
        raise ArgumentError(f"triu: an array of shape {m.shape} (expected at least 2 axes)")
    return where(_below(m.shape, k, m) >= k, m, 0)


def eye(N, M=None, k=0, dtype=float, order="C", *, context=None):
    """NumPy's ``eye``: ones on the ``k``-th diagonal (generated where it is
    used)."""
    M = N if M is None else M
    like = zeros((), np.int64, context)
    return (_below((N, M), k, like) == k).astype(dtype)


def identity(n, dtype=None, *, context=None):
    """NumPy's ``identity``: ``eye(n)``."""
    return eye(n, dtype=float if dtype is None else dtype, context=context)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             context=None):
    """NumPy's ``linspace``, with its arithmetic (``i * step + start``, the
    last value ``stop`` exactly), generated where it is used. ``start`` and
    ``stop`` may be arrays: the samples then run along a new ``axis``
    (whether a step is 0 picks NumPy's formula for all, lazily)."""
    num = operator.index(num)
    if num < 0:
        raise ArgumentError(f"linspace: number of samples, {num}, must be non-negative")
    div = num - 1 if endpoint else num
    if any(isinstance(v, Array) or np.ndim(v) for v in (start, stop)):
        y, step = _linspace_of_arrays(start, stop, num, div, endpoint, context)
        if axis != 0:
            y = moveaxis(y, 0, axis)
    else:
        dt = np.result_type(start, stop, float(num))
        delta = stop - start
        step = delta / div if div > 0 else np.nan
        y = arange(0, num, dtype=dt, context=context)
        if div > 0:
            y = y / div * delta if step == 0 else y * step
        else:
            y = y * delta
        y = y + start
        if endpoint and num > 1:
            y = where(arange(0, num, dtype=np.int64, context=context) == num - 1, stop, y)
    if dtype is not None:
        if np.dtype(dtype).kind in "iu":
            y = FUNCTIONS["floor"](y)
        y = y.astype(dtype)
    if retstep:
        return y, step
    return y


def _linspace_of_arrays(start, stop, num, div, endpoint, context):
    """``linspace`` between arrays: the samples along a new first axis, and
    the steps."""
    start, stop = (_one(v) for v in _lazy([start, stop]))
    dt = np.result_type(start.dtype, stop.dtype)
    if dt.kind not in "f":
        dt = np.dtype(np.float64)
    start, stop = start.astype(dt), stop.astype(dt)
    delta = stop - start
    ndim = max(start.ndim, stop.ndim)
    along = (-1,) + (1,) * ndim
    y = arange(0, num, dtype=dt, context=context).reshape(along)
    if div > 0:
        step = delta / div
        # NumPy's formula for all samples when any step is 0: picked lazily.
        y = where((step == 0).any(), y / div * delta, y * step)
    else:
        step = delta * np.nan
        y = y * delta
    y = y + start
    if endpoint and num > 1:
        last = arange(0, num, dtype=np.int64, context=context).reshape(along) == num - 1
        y = where(last, stop, y)
    return y, step


EXPORTED = (tril, triu, eye, identity, linspace)
