"""Complex division, powers and the ``cmath`` functions, written in the
kernel dialect itself and inlined where a kernel calls them
(``_complex_values``): ``cmath.exp(z)`` in a kernel is ``exp`` here.

They are Numba's implementations (``numba/cpython/cmathimpl.py`` and
``numbers.py``, BSD-2-Clause), which follow CPython's ``cmathmodule.c``
and NumPy's ``npy_math_complex.c`` for infinities, NaNs and signed
zeros, so kernels give what Numba's give. Numba's constants for single
precision (``FLT_MAX``) are kept for both precisions, as Numba does.
"""

import cmath
import math

NAN = float("nan")
INF = float("inf")
FLT_MAX = 3.402823466e38
FLT_MIN = 1.175494351e-38
DBL_MAX = 1.7976931348623157e308
LN_4 = 1.3862943611198906
LN_10 = 2.302585092994045684
LN_2 = 0.6931471805599453
PI_12 = 1.5707963267948966
THRES = FLT_MAX / 4
THRES_LARGE = 9.223371869213755e18  # math.sqrt(FLT_MAX / 4)
THRES_SMALL = 1.0842021724855044e-19  # math.sqrt(FLT_MIN)
SQRT_THRES = DBL_MAX / 2.414213562373095  # DBL_MAX / (1 + sqrt(2))


def div(a, b):
    """``a / b``: CPython's algorithm (``_Py_c_quot``); NaNs for a zero
    divisor (kernels raise no ``ZeroDivisionError``)."""
    areal = a.real
    aimag = a.imag
    breal = b.real
    bimag = b.imag
    abs_breal = abs(breal)
    abs_bimag = abs(bimag)
    if abs_breal >= abs_bimag:
        if abs_breal == 0.0:
            return complex(NAN, NAN)
        ratio = bimag / breal
        denom = breal + bimag * ratio
        return complex((areal + aimag * ratio) / denom, (aimag - areal * ratio) / denom)
    if abs_bimag >= abs_breal:
        ratio = breal / bimag
        denom = breal * ratio + bimag
        return complex((areal * ratio + aimag) / denom, (aimag * ratio - areal) / denom)
    return complex(NAN, NAN)


def power(a, b):
    """``a ** b``: a square multiplied out (as Numba), else CPython's
    ``_Py_c_pow``."""
    if b.real == 2.0 and b.imag == 0.0:
        return complex(a.real * a.real - a.imag * a.imag, a.real * a.imag + a.imag * a.real)
    if b.real == 0.0 and b.imag == 0.0:
        return complex(1.0, 0.0)
    if a.real == 0.0 and a.imag == 0.0:
        if b.imag != 0.0 or b.real < 0.0:
            return complex(NAN, NAN)
        return complex(0.0, 0.0)
    vabs = math.hypot(a.real, a.imag)
    length = math.pow(vabs, b.real)
    at = math.atan2(a.imag, a.real)
    phase = at * b.real
    if b.imag != 0.0:
        length = length / math.exp(at * b.imag)
        phase = phase + b.imag * math.log(vabs)
    return complex(length * math.cos(phase), length * math.sin(phase))


def rect(r, phi):
    """``cmath.rect(r, phi)``."""
    if not math.isfinite(phi):
        if r == 0.0:
            return complex(abs(r), 0.0)
        if math.isinf(r):
            return complex(r, phi)
    real = math.cos(phi)
    imag = math.sin(phi)
    if real == 0.0 and math.isinf(r):
        real = real / r
    else:
        real = real * r
    if imag == 0.0 and math.isinf(r):
        imag = imag / r
    else:
        imag = imag * r
    return complex(real, imag)


def exp(z):
    """``cmath.exp(z)``."""
    x = z.real
    y = z.imag
    if math.isfinite(x):
        if math.isfinite(y):
            r = math.exp(x)
            return complex(r * math.cos(y), r * math.sin(y))
        return complex(NAN, NAN)
    if math.isnan(x):
        if y != 0.0:
            return complex(x, x)
        return complex(x, y)
    if x > 0.0:
        if math.isfinite(y):
            real = math.cos(y)
            imag = math.sin(y)
            if real != 0.0:
                real = real * x
            if imag != 0.0:
                imag = imag * x
            return complex(real, imag)
        return complex(x, NAN)
    if math.isfinite(y):
        r = math.exp(x)
        return complex(r * math.cos(y), r * math.sin(y))
    return complex(0.0, 0.0)


def log(z):
    """``cmath.log(z)``."""
    return complex(math.log(math.hypot(z.real, z.imag)), math.atan2(z.imag, z.real))


def log_base(z, base):
    """``cmath.log(z, base)``."""
    return cmath.log(z) / cmath.log(base)


def log10(z):
    """``cmath.log10(z)``: better than ``log(z, 10)`` on infinities."""
    w = cmath.log(z)
    return complex(w.real / LN_10, w.imag / LN_10)


def sqrt(z):
    """``cmath.sqrt(z)``: NumPy's algorithm (``npy_csqrt``)."""
    a = z.real
    b = z.imag
    if a == 0.0 and b == 0.0:
        return complex(abs(b), b)
    if math.isinf(b):
        return complex(abs(b), b)
    if math.isnan(a):
        return complex(a, a)
    if math.isinf(a):
        if a < 0.0:
            return complex(abs(b - b), math.copysign(a, b))
        return complex(a, math.copysign(b - b, b))
    scale = abs(a) >= SQRT_THRES or abs(b) >= SQRT_THRES
    if scale:
        a = a * 0.25
        b = b * 0.25
    if a >= 0:
        t = math.sqrt((a + math.hypot(a, b)) * 0.5)
        real = t
        imag = b / (2 * t)
    else:
        t = math.sqrt((-a + math.hypot(a, b)) * 0.5)
        real = abs(b) / (2 * t)
        imag = math.copysign(t, b)
    if scale:
        return complex(real * 2, imag)
    return complex(real, imag)


def cosh(z):
    """``cmath.cosh(z)``."""
    x = z.real
    y = z.imag
    if math.isinf(x):
        if math.isnan(y):
            real = abs(x)
            imag = y
        elif y == 0.0:
            real = abs(x)
            imag = y
        else:
            real = math.copysign(x, math.cos(y))
            imag = math.copysign(x, math.sin(y))
        if x < 0.0:
            imag = -imag
        return complex(real, imag)
    return complex(math.cos(y) * math.cosh(x), math.sin(y) * math.sinh(x))


def cos(z):
    """``cmath.cos(z)`` = ``cosh(z j)``."""
    return cmath.cosh(complex(-z.imag, z.real))


def sinh(z):
    """``cmath.sinh(z)``."""
    x = z.real
    y = z.imag
    if math.isinf(x):
        if math.isnan(y):
            real = x
            imag = y
        else:
            real = math.cos(y)
            imag = math.sin(y)
            if real != 0.0:
                real = real * x
            if imag != 0.0:
                imag = imag * abs(x)
        return complex(real, imag)
    return complex(math.cos(y) * math.sinh(x), math.sin(y) * math.cosh(x))


def sin(z):
    """``cmath.sin(z)`` = ``-j sinh(z j)``."""
    r = cmath.sinh(complex(-z.imag, z.real))
    return complex(r.imag, -r.real)


def tanh(z):
    """``cmath.tanh(z)``: CPython's algorithm (``c_tanh``)."""
    x = z.real
    y = z.imag
    if math.isinf(x):
        real = math.copysign(1.0, x)
        if math.isinf(y):
            imag = 0.0
        else:
            imag = math.copysign(0.0, math.sin(2.0 * y))
        return complex(real, imag)
    tx = math.tanh(x)
    ty = math.tan(y)
    cx = 1.0 / math.cosh(x)
    txty = tx * ty
    denom = 1.0 + txty * txty
    return complex(tx * (1.0 + ty * ty) / denom, ((ty / denom) * cx) * cx)


def tan(z):
    """``cmath.tan(z)`` = ``-j tanh(z j)``."""
    r = cmath.tanh(complex(-z.imag, z.real))
    return complex(r.imag, -r.real)


def acos(z):
    """``cmath.acos(z)``: CPython's algorithm (``c_acos``)."""
    if abs(z.real) > THRES or abs(z.imag) > THRES:
        real = math.atan2(abs(z.imag), z.real)
        imag = math.copysign(math.log(math.hypot(z.real * 0.5, z.imag * 0.5)) + LN_4, -z.imag)
        return complex(real, imag)
    s1 = cmath.sqrt(complex(1.0 - z.real, -z.imag))
    s2 = cmath.sqrt(complex(1.0 + z.real, z.imag))
    real = 2.0 * math.atan2(s1.real, s2.real)
    imag = math.asinh(s2.real * s1.imag - s2.imag * s1.real)
    return complex(real, imag)


def acosh(z):
    """``cmath.acosh(z)``: CPython's algorithm (``c_acosh``)."""
    if abs(z.real) > THRES or abs(z.imag) > THRES:
        real = math.log(math.hypot(z.real * 0.5, z.imag * 0.5)) + LN_4
        imag = math.atan2(z.imag, z.real)
        return complex(real, imag)
    s1 = cmath.sqrt(complex(z.real - 1.0, z.imag))
    s2 = cmath.sqrt(complex(z.real + 1.0, z.imag))
    real = math.asinh(s1.real * s2.real + s1.imag * s2.imag)
    imag = 2.0 * math.atan2(s1.imag, s2.real)
    return complex(real, imag)


def asinh(z):
    """``cmath.asinh(z)``: CPython's algorithm (``c_asinh``)."""
    if abs(z.real) > THRES or abs(z.imag) > THRES:
        real = math.copysign(math.log(math.hypot(z.real * 0.5, z.imag * 0.5)) + LN_4, z.real)
        imag = math.atan2(z.imag, abs(z.real))
        return complex(real, imag)
    s1 = cmath.sqrt(complex(1.0 + z.imag, -z.real))
    s2 = cmath.sqrt(complex(1.0 - z.imag, z.real))
    real = math.asinh(s1.real * s2.imag - s2.real * s1.imag)
    imag = math.atan2(z.imag, s1.real * s2.real - s1.imag * s2.imag)
    return complex(real, imag)


def asin(z):
    """``cmath.asin(z)`` = ``-j asinh(z j)``."""
    r = cmath.asinh(complex(-z.imag, z.real))
    return complex(r.imag, -r.real)


def atanh(z):
    """``cmath.atanh(z)``: CPython's algorithm (``c_atanh``)."""
    x = z.real
    y = z.imag
    negate = x < 0.0
    if negate:
        x = -x
        y = -y
    ay = abs(y)
    if math.isnan(x) or x > THRES_LARGE or ay > THRES_LARGE:
        if math.isinf(y):
            real = math.copysign(0.0, x)
        elif math.isinf(x):
            real = 0.0
        else:
            h = math.hypot(x * 0.5, y * 0.5)
            real = x / 4.0 / h / h
        imag = -math.copysign(PI_12, -y)
    elif x == 1.0 and ay < THRES_SMALL:
        if ay == 0.0:
            real = INF
            imag = y
        else:
            real = -math.log(math.sqrt(ay) / math.sqrt(math.hypot(ay, 2.0)))
            imag = math.copysign(math.atan2(2.0, -ay) / 2, y)
    else:
        sqay = ay * ay
        zr1 = 1 - x
        real = math.log1p(4.0 * x / (zr1 * zr1 + sqay)) * 0.25
        imag = -math.atan2(-2.0 * y, zr1 * (1 + x) - sqay) * 0.5
    if math.isnan(y):
        imag = NAN
    if negate:
        return complex(-real, -imag)
    return complex(real, imag)


def atan(z):
    """``cmath.atan(z)`` = ``-j atanh(z j)``."""
    r = cmath.atanh(complex(-z.imag, z.real))
    if math.isinf(z.real) and math.isnan(z.imag):
        return complex(r.imag, r.real)
    return complex(r.imag, -r.real)


def log2(z):
    """``np.log2`` of a complex value."""
    w = cmath.log(z)
    return complex(w.real / LN_2, w.imag / LN_2)


def _has_nan(z):
    return math.isnan(z.real) or math.isnan(z.imag)


def _greater_equal(a, b):
    return a.real > b.real or (a.real == b.real and a.imag >= b.imag)


def _less_equal(a, b):
    return a.real < b.real or (a.real == b.real and a.imag <= b.imag)


def maximum(a, b):
    """``np.maximum`` of complex values: NumPy's order, a NaN wins."""
    if _has_nan(a) or _greater_equal(a, b):
        return a
    return b


def minimum(a, b):
    """``np.minimum`` of complex values: NumPy's order, a NaN wins."""
    if _has_nan(a) or _less_equal(a, b):
        return a
    return b


def fmax(a, b):
    """``np.fmax`` of complex values: NumPy's order, a NaN loses."""
    if _has_nan(b) or _greater_equal(a, b):
        return a
    return b


def fmin(a, b):
    """``np.fmin`` of complex values: NumPy's order, a NaN loses."""
    if _has_nan(b) or _less_equal(a, b):
        return a
    return b
