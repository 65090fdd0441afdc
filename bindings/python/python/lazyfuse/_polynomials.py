"""NumPy's polynomial and signal helpers, lazily: ``polyval`` (Horner's
rule, one fused kernel), ``vander``, ``convolve`` and ``correlate`` (of
1-d arrays: short kernels as a fused sum of shifted slices, long ones as
a gather of windows and one matrix product), and ``ediff1d``."""

import operator

import numpy as np

from ._array import Array
from .errors import ArgumentError

# Kernels up to this length are a fused sum of shifted slices (each slice
# a leaf of the fused kernel); longer ones gather their windows.
_SHIFTED_UP_TO = 32


def _lazy(*values):
    from ._numpy import _lazy as lazy, _one
    return [_one(v) for v in lazy(list(values))]


def polyval(p, x):
    """NumPy's ``polyval``: the polynomial with coefficients ``p`` (highest
    power first) at ``x``, by Horner's rule (``y = y * x + c``), fused."""
    p, x = _lazy(p, x)
    if p.ndim != 1:
        raise ArgumentError(f"polyval: coefficients of shape {p.shape} (expected 1-d)")
    y = x * 0
    for i in range(p.size):
        y = y * x + p[i]
    return y


def vander(x, N=None, increasing=False):
    """NumPy's ``vander``: the columns ``x ** (N - 1)`` … ``x ** 0`` (or
    increasing), one broadcast power."""
    (x,) = _lazy(x)
    if x.ndim != 1:
        raise ArgumentError("vander: x must be a one-dimensional array or sequence.")
    n = x.size if N is None else operator.index(N)
    powers = np.arange(n) if increasing else np.arange(n - 1, -1, -1)
    if n == 0:
        return Array(x._a.full_like([x.size, 0], 0, x.dtype.name))
    result = x.reshape(-1, 1) ** x._like(powers.reshape(1, -1).astype(np.int64))
    return result.astype(np.result_type(x.dtype, powers.dtype)) if x.dtype.kind in "biu" else result


def convolve(a, v, mode="full"):
    """NumPy's ``convolve`` of two 1-d arrays (``full``, ``same`` or
    ``valid``)."""
    return _sliding(a, v, mode, "convolve", flip=True)


def correlate(a, v, mode="valid"):
    """NumPy's ``correlate`` of two 1-d arrays (``valid``, ``same`` or
    ``full``): ``convolve`` with ``v`` reversed."""
    return _sliding(a, v, mode, "correlate", flip=False)


def _sliding(a, v, mode, name, flip):
    from ._numpy import concatenate
    from ._fancy import take
    a, v = _lazy(a, v)
    if a.ndim != 1 or v.ndim != 1:
        raise ArgumentError(f"{name}: arrays of shapes {a.shape} and {v.shape} (expected 1-d)")
    if a.size == 0 or v.size == 0:
        raise ArgumentError(f"{name}: {'a' if a.size == 0 else 'v'} cannot be empty")
    if mode not in ("full", "same", "valid"):
        raise ArgumentError(f"{name}: mode {mode!r} (expected 'full', 'same' or 'valid')")
    if name == "convolve" and v.size > a.size:
        a, v = v, a  # NumPy's convolve swaps them; correlate keeps its order
    m, n = v.size, a.size
    kernel = v[::-1] if flip else v
    dtype = np.result_type(a.dtype, v.dtype)
    zeros = Array(a._a.full_like([max(m - 1, 0)], 0, np.dtype(dtype).name))
    padded = concatenate([zeros, a.astype(dtype), zeros]) if m > 1 else a.astype(dtype)
    length = n + m - 1  # of the full result
    # full[k] = sum over j of padded[k + j] * kernel[j].
    if m <= _SHIFTED_UP_TO:
        full = padded[0:length] * kernel[0]
        for j in range(1, m):
            full = full + padded[j:j + length] * kernel[j]
    else:
        windows = take(padded, np.arange(length).reshape(-1, 1) + np.arange(m).reshape(1, -1))
        full = windows @ kernel.astype(dtype)
    if mode == "full":
        result = full
    elif mode == "valid":
        result = full[m - 1:n] if n >= m else full[n - 1:m]
    else:  # centred, as long as the longer array
        start = (m - 1) // 2 if n >= m else n // 2
        result = full[start:start + max(n, m)]
    return result.astype(dtype)


def ediff1d(ary, to_end=None, to_begin=None):
    """NumPy's ``ediff1d``: the differences of the flattened array, with
    ``to_begin`` before and ``to_end`` after."""
    from ._numpy import concatenate
    (ary,) = _lazy(ary)
    flat = ary.reshape(-1)
    pieces = [flat[1:] - flat[:-1]]
    for extra, first in ((to_begin, True), (to_end, False)):
        if extra is not None:
            extra = ary._like(np.asarray(extra).reshape(-1)).astype(ary.dtype)
            pieces.insert(0 if first else len(pieces), extra)
    return concatenate(pieces) if len(pieces) > 1 else pieces[0]


FUNCTIONS = (polyval, vander, convolve, correlate, ediff1d)
