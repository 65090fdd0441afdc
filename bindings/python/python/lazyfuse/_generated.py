"""NumPy's arrays generated from indices, lazily (computed where they are
used, nothing stored): ``geomspace``, ``tri``, ``fromfunction``, ``ix_``,
the window functions ``bartlett``, ``blackman``, ``hamming``, ``hanning``
and ``kaiser``, the Bessel function ``i0`` (NumPy's Chebyshev series),
and the bit packing of ``packbits`` and ``unpackbits``."""

import operator

import numpy as np

from ._array import Array, where
from ._creation import _one, arange, asarray, ones, zeros
from ._ranges import _below
from ._registry import FUNCTIONS
from .errors import ArgumentError, DTypeError


def _numpy_function(name):
    return FUNCTIONS[name]


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """NumPy's ``geomspace`` of two numbers: ``logspace`` between their
    logarithms, the ends exactly ``start`` and ``stop`` (NumPy's), signs
    kept."""
    from ._statistics import logspace
    if any(isinstance(v, Array) or np.ndim(v) for v in (start, stop)):
        raise ArgumentError("geomspace: lazyfuse takes numbers for start and stop")
    if start == 0 or stop == 0:
        raise ArgumentError("geomspace: Geometric sequence cannot include zero")
    num = operator.index(num)
    dt = np.result_type(start, stop, float(num), np.zeros((), dtype))
    sign = np.sign(start)
    first, last = start / sign, stop / sign
    result = logspace(np.log10(first), np.log10(last), num, endpoint, 10.0, dt)
    if num > 0:
        position = arange(num, dtype=np.int64)
        result = where(position == 0, first, result)
        if num > 1 and endpoint:
            result = where(position == num - 1, last, result)
    result = result * sign
    if axis != 0:
        result = _numpy_function("moveaxis")(result, 0, axis)
    return result if dtype is None else result.astype(dtype)


def tri(N, M=None, k=0, dtype=float, *, like=None):
    """NumPy's ``tri``: ones at and below the ``k``-th diagonal."""
    M = N if M is None else M
    return (_below((N, M), k, zeros((), np.int64)) <= k).astype(dtype)


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """NumPy's ``fromfunction``: ``function`` called once with the lazy
    index arrays of ``shape`` (so that what it computes is lazy too)."""
    from ._compat import indices
    return function(*indices(shape, dtype=dtype), **kwargs)


def ix_(*args):
    """NumPy's ``ix_``: each 1-d sequence (or the positions of a bool one)
    as an array along its own axis, to index a cross product."""
    out = []
    for k, a in enumerate(args):
        a = asarray(a) if not isinstance(a, Array) else a
        if a.ndim != 1:
            raise ArgumentError("ix_: Cross index must be 1 dimensional")
        if a.dtype == np.bool_:
            a = _numpy_function("flatnonzero")(a)
        elif a.size == 0:
            a = a.astype(np.intp)
        elif not np.issubdtype(a.dtype, np.integer):
            raise DTypeError(f"ix_: arrays used as indices must be of integer (or boolean) type, "
                             f"not {a.dtype}")
        out.append(a.reshape((1,) * k + (a.size,) + (1,) * (len(args) - k - 1)))
    return tuple(out)


# --- windows ---------------------------------------------------------------

def _window(M, shape):
    """NumPy's window of ``M`` points from ``shape(n, M)`` of ``n = arange(1
    - M, M, 2)``, with its edge cases (empty below 1 point, ``[1.]`` at 1)."""
    M = float(M)
    if M < 1:
        return arange(0, dtype=np.float64)
    if M == 1:
        return ones(1)
    return shape(arange(1 - M, M, 2), M)


def bartlett(M):
    """NumPy's triangular ``bartlett`` window."""
    return _window(M, lambda n, M: where(n <= 0, 1 + n / (M - 1), 1 - n / (M - 1)))


def blackman(M):
    """NumPy's ``blackman`` window."""
    cos = _numpy_function("cos")
    return _window(M, lambda n, M: 0.42 + 0.5 * cos(np.pi * n / (M - 1))
                   + 0.08 * cos(2.0 * np.pi * n / (M - 1)))


def hamming(M):
    """NumPy's ``hamming`` window."""
    return _window(M, lambda n, M: 0.54 + 0.46 * _numpy_function("cos")(np.pi * n / (M - 1)))


def hanning(M):
    """NumPy's ``hanning`` window."""
    return _window(M, lambda n, M: 0.5 + 0.5 * _numpy_function("cos")(np.pi * n / (M - 1)))


def kaiser(M, beta):
    """NumPy's ``kaiser`` window: ``i0`` of the Kaiser shape over ``i0(beta)``."""
    M = float(M)
    if M == 1:
        return ones(1)
    n = arange(0, M)
    alpha = (M - 1) / 2.0
    shape = beta * _numpy_function("sqrt")(1 - ((n - alpha) / alpha) ** 2.0)
    return i0(shape) / float(np.i0(float(beta)))


# Cephes' Chebyshev coefficients of exp(-x) i0(x), on [0, 8] and (8, inf)
# (NumPy's `_i0A` and `_i0B`).
_I0_LOW = [
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-09,
    -1.30002500998624804212e-08, 6.04699502254191894932e-08, -2.67079385394061173391e-07,
    1.11738753912010371815e-06, -4.41673835845875056359e-06, 1.64484480707288970893e-05,
    -5.75419501008210370398e-05, 1.88502885095841655729e-04, -5.76375574538582365885e-04,
    1.63947561694133579842e-03, -4.32430999505057594430e-03, 1.05464603945949983183e-02,
    -2.37374148058994688156e-02, 4.93052842396707084878e-02, -9.49010970480476444210e-02,
    1.71620901522208775349e-01, -3.04682672343198398683e-01, 6.76795274409476084995e-01,
]
_I0_HIGH = [
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
    3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
    1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
    -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
    7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
    -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
    3.39623202570838634515e-09, 2.26666899049817806459e-08, 2.04891858946906374183e-07,
    2.89137052083475648297e-06, 6.88975834691682398426e-05, 3.36911647825569408990e-03,
    8.04490411014108831608e-01,
]


def _chebyshev(x, coefficients):
    """Cephes' ``chbevl``: the Chebyshev series at ``x``, fused."""
    b0, b1, b2 = coefficients[0], 0.0, 0.0
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


def i0(x):
    """NumPy's ``i0``, the modified Bessel function of the first kind of
    order 0: its two Chebyshev series (below and above 8), fused."""
    x = _one(x)
    if x.dtype.kind not in "f":
        x = x.astype(np.float64)
    x = abs(x)
    exp, sqrt = _numpy_function("exp"), _numpy_function("sqrt")
    low = exp(x) * _chebyshev(x / 2.0 - 2, _I0_LOW)
    # Above 8 only; elsewhere `high` is not used (0 would divide by 0).
    above = where(x <= 8.0, 16.0, x)
    high = exp(x) * _chebyshev(32.0 / above - 2.0, _I0_HIGH) / sqrt(above)
    return where(x <= 8.0, low, high)


# --- bits ------------------------------------------------------------------

def _bit_weights(bitorder, like):
    if bitorder not in ("big", "little"):
        raise ArgumentError("packbits: 'order' must be either 'little' or 'big'")
    shifts = np.arange(8, dtype=np.uint8)
    return like._like(shifts[::-1].copy() if bitorder == "big" else shifts)


def packbits(a, axis=None, bitorder="big"):
    """NumPy's ``packbits``: each 8 elements along ``axis`` (flattened
    when None; padded with zeros) as the bits of one ``uint8``, lazily."""
    a = _one(a)
    if a.dtype.kind not in "biu":
        raise DTypeError("packbits: Expected an input array of integer or boolean data type")
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = operator.index(axis) % max(a.ndim, 1)
    moved = _numpy_function("moveaxis")(a != 0, axis, -1).astype(np.uint8)
    length = moved.shape[-1]
    padding = -length % 8
    if padding:
        zeros = _numpy_function("zeros_like")(moved[..., :1])
        moved = _numpy_function("concatenate")([moved] + [zeros] * padding, axis=-1)
    groups = moved.reshape(moved.shape[:-1] + ((length + padding) // 8, 8))
    packed = (groups << _bit_weights(bitorder, a)).sum(axis=-1, dtype=np.uint8)
    return _numpy_function("moveaxis")(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """NumPy's ``unpackbits``: the bits of each ``uint8`` as 8 elements
    along ``axis`` (flattened when None), the first ``count`` kept (or
    zeros added), lazily."""
    a = _one(a)
    if a.dtype != np.uint8:
        raise DTypeError(f"unpackbits: Expected an input array of unsigned byte data type, "
                         f"not {a.dtype}")
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = operator.index(axis) % max(a.ndim, 1)
    moved = _numpy_function("moveaxis")(a, axis, -1)
    bits = (moved[..., None] >> _bit_weights(bitorder, a)) & np.uint8(1)
    bits = bits.reshape(moved.shape[:-1] + (moved.shape[-1] * 8,))
    if count is not None:
        count = operator.index(count)
        total = bits.shape[-1]
        keep = count if count >= 0 else max(total + count, 0)
        if keep <= total:
            bits = bits[..., :keep]
        else:
            zeros = _numpy_function("zeros")(bits.shape[:-1] + (keep - total,), np.uint8)
            bits = _numpy_function("concatenate")([bits, zeros], axis=-1)
    return _numpy_function("moveaxis")(bits, -1, axis)


EXPORTED = (geomspace, tri, fromfunction, ix_, bartlett, blackman, hamming, hanning, kaiser,
             i0, packbits, unpackbits)
