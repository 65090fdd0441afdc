"""NumPy's polynomial and signal helpers, lazily: ``polyval`` (Horner's
rule, one fused kernel), ``vander``, ``convolve`` and ``correlate`` (of
1-d arrays: short kernels as a fused sum of shifted slices, long ones as
a gather of windows and one matrix product), ``ediff1d``, and the
coefficient arithmetic ``polyadd``, ``polysub``, ``polymul`` (a
convolution), ``polyder`` and ``polyint``."""

import operator

import numpy as np

from ._array import Array
from ._creation import _lazy as _lazy_arguments, _one
from ._fancy import take
from ._joins import concatenate
from ._registry import FUNCTIONS
from .errors import ArgumentError

# Kernels up to this length are a fused sum of shifted slices (each slice
# a leaf of the fused kernel); longer ones gather their windows.
_SHIFTED_UP_TO = 32


def _lazy(*values):
    return [_one(v) for v in _lazy_arguments(list(values))]


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
    (ary,) = _lazy(ary)
    flat = ary.reshape(-1)
    pieces = [flat[1:] - flat[:-1]]
    for extra, first in ((to_begin, True), (to_end, False)):
        if extra is not None:
            extra = ary._like(np.asarray(extra).reshape(-1)).astype(ary.dtype)
            pieces.insert(0 if first else len(pieces), extra)
    return concatenate(pieces) if len(pieces) > 1 else pieces[0]


def _coefficients(*values):
    pieces = _lazy(*values)
    return [p.reshape(1) if p.ndim == 0 else p for p in pieces]


def _padded_pair(a1, a2):
    """``a1`` and ``a2`` of one length, the shorter with zeros in front
    (its highest powers)."""
    a1, a2 = _coefficients(a1, a2)
    diff = a2.size - a1.size
    if diff > 0:
        a1 = FUNCTIONS["concatenate"]([a1._like(np.zeros(diff, a1.dtype)), a1])
    elif diff < 0:
        a2 = FUNCTIONS["concatenate"]([a2._like(np.zeros(-diff, a2.dtype)), a2])
    return a1, a2


def polyadd(a1, a2):
    """NumPy's ``polyadd``: the sum of two coefficient arrays (highest
    power first), the shorter padded in front."""
    a1, a2 = _padded_pair(a1, a2)
    return a1 + a2


def polysub(a1, a2):
    """NumPy's ``polysub``: ``a1 - a2`` as polynomials."""
    a1, a2 = _padded_pair(a1, a2)
    return a1 - a2


def polymul(a1, a2):
    """NumPy's ``polymul``: the product's coefficients, a convolution."""
    a1, a2 = _coefficients(a1, a2)
    return convolve(a1, a2)


def polyder(p, m=1):
    """NumPy's ``polyder``: the ``m``-th derivative's coefficients."""
    m = operator.index(m)
    if m < 0:
        raise ArgumentError("polyder: Order of derivative must be positive (see polyint)")
    (p,) = _coefficients(p)
    for _ in range(m):
        n = p.size - 1
        p = p[:-1] * p._like(np.arange(n, 0, -1))
    return p


def polyint(p, m=1, k=None):
    """NumPy's ``polyint``: the ``m``-th antiderivative's coefficients,
    with integration constants ``k`` (zeros by default)."""
    m = operator.index(m)
    if m < 0:
        raise ArgumentError("polyint: Order of integral must be positive (see polyder)")
    constants = np.zeros(m) if k is None else np.atleast_1d(np.asarray(k, dtype=float))
    if constants.size == 1 and m > 1:
        constants = np.full(m, constants[0])
    if constants.size < m:
        raise ArgumentError("polyint: k must be a scalar or a rank-1 array of length 1 or >m.")
    (p,) = _coefficients(p)
    for constant in constants[:m]:
        divided = p / p._like(np.arange(p.size, 0, -1))
        p = FUNCTIONS["concatenate"]([divided, p._like(np.array([constant]))])
    return p


EXPORTED = (polyval, vander, convolve, correlate, ediff1d, polyadd, polysub, polymul, polyder,
             polyint)
