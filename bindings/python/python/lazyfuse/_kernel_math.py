"""Functions of kernels that are written in the kernel dialect itself and
inlined where a kernel calls them, like a ``@cuda.jit(device=True)``
function (``_jit.Translator.library_call``): Python's ``round(x, ndigits)``
and ``math.modf``, ``frexp``, ``ldexp`` and ``remainder``. Each follows
CPython's algorithm (as Numba's implementations do), computing in float64.
They run on every backend as the kernel's own code does.

This module imports nothing of the package: the translator reads the
functions' source.
"""

import math

import numpy as np


def round_ndigits(x, ndigits):
    """``round(x, ndigits)``: CPython's ``double_round`` without strings
    (scale by a power of ten, round half to even, scale back); ``x`` itself
    where it is not finite or the scaled value overflows."""
    value = float(x)
    result = value
    if not (math.isinf(value) or math.isnan(value)):
        pow2 = 1.0
        if ndigits >= 0:
            if ndigits > 22:
                # 10 ** ndigits in two factors, each without overflow.
                pow1 = 10.0 ** (ndigits - 22)
                pow2 = 1e22
            else:
                pow1 = 10.0 ** ndigits
            y = (value * pow1) * pow2
        else:
            pow1 = 10.0 ** (-ndigits)
            y = value / pow1
        if not math.isinf(y):
            z = np.rint(y)
            if math.fabs(y - z) == 0.5:
                z = 2.0 * np.rint(y / 2.0)
            if ndigits >= 0:
                result = (z / pow2) / pow1
            else:
                result = z * pow1
    return result


def modf(x):
    """``math.modf(x)``: the fractional and the integral part, both with
    the sign of ``x`` (``modf(inf)`` is ``(0.0, inf)``, NaN gives NaNs)."""
    whole = math.trunc(x)
    fraction = x - whole
    if math.isinf(x):
        fraction = 0.0
    return math.copysign(fraction, x), whole


def frexp(x):
    """``math.frexp(x)``: ``(m, e)`` with ``x == m * 2**e`` and
    ``0.5 <= |m| < 1``; zero, infinities and NaN give ``(x, 0)``."""
    value = float(x)
    mantissa = value
    exponent = 0
    if value != 0.0 and not math.isinf(value) and not math.isnan(value):
        exponent = int(math.floor(math.log2(math.fabs(value)))) + 1
        mantissa = ldexp(value, -exponent)
        # log2 of a value next to a power of two may round across it.
        if math.fabs(mantissa) >= 1.0:
            mantissa = mantissa * 0.5
            exponent = exponent + 1
        if math.fabs(mantissa) < 0.5:
            mantissa = mantissa * 2.0
            exponent = exponent - 1
    return mantissa, exponent


def ldexp(x, exponent):
    """``math.ldexp(x, e)``: ``x * 2**e``, in at most three exact steps
    so that no power of two overflows or underflows on the way."""
    value = float(x)
    e = int(exponent)
    while e > 1000:
        value = value * 2.0 ** 1000
        e = e - 1000
    while e < -1000:
        value = value * 2.0 ** -1000
        e = e + 1000
    return value * 2.0 ** e


def remainder(x, y):
    """``math.remainder(x, y)``: IEEE 754's remainder, ``x - n*y`` for the
    integer ``n`` nearest ``x / y`` (ties to even): CPython's algorithm,
    exact through ``fmod``. NaN where ``x`` is infinite or ``y`` zero."""
    a = float(x)
    b = float(y)
    result = math.nan
    if math.isnan(a):
        result = a
    elif math.isnan(b):
        result = b
    elif math.isinf(b) and not math.isinf(a):
        result = a
    elif not math.isinf(a) and b != 0.0:
        absx = math.fabs(a)
        absy = math.fabs(b)
        m = math.fmod(absx, absy)
        c = absy - m
        if m < c:
            r = m
        elif m > c:
            r = -c
        else:
            r = m - 2.0 * math.fmod(0.5 * (absx - m), absy)
        result = math.copysign(1.0, a) * r
    return result
