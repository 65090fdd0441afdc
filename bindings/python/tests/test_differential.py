"""NumPy differential: every element-wise operation and reduction lazyfuse
has, applied through NumPy's own functions to lazyfuse arrays (which stay
lazy), against NumPy on the same values: random shapes that broadcast,
every dtype the two share, NaN, infinities and zeros among the values.

Results must have NumPy's dtype and shape, the same NaN positions, and the
same values: exactly for integers, bools and exactly rounded float
operations, within a few ulp for the transcendental functions (lazyfuse's
own float16 math rounds once from float32; NumPy's is close to that). Where
NumPy refuses a dtype (`bitwise_and` of floats), lazyfuse raises TypeError.
"""

import os
import zlib

import numpy as np
import pytest

import lazyfuse as lf

# Another seed draws other values: LAZYFUSE_TEST_SEED=7 pytest ...
SEED = int(os.environ.get("LAZYFUSE_TEST_SEED", "0"))

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, np.float16, np.float32, np.float64]

UNARY = [np.negative, np.positive, np.absolute, np.sign, np.sqrt, np.cbrt, np.square,
         np.reciprocal, np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p, np.sin,
         np.cos, np.tan, np.arcsin, np.arccos, np.arctan, np.sinh, np.cosh, np.tanh,
         np.arcsinh, np.arccosh, np.arctanh, np.floor, np.ceil, np.trunc, np.rint,
         np.deg2rad, np.rad2deg, np.degrees, np.radians, np.fabs, np.signbit, np.isnan, np.isinf,
         np.isfinite, np.invert, np.logical_not, np.spacing, np.bitwise_count]

BINARY = [np.add, np.subtract, np.multiply, np.true_divide, np.floor_divide, np.remainder,
          np.power, np.maximum, np.minimum, np.fmax, np.fmin, np.less, np.less_equal,
          np.greater, np.greater_equal, np.equal, np.not_equal, np.logical_and,
          np.logical_or, np.logical_xor, np.bitwise_and, np.bitwise_or, np.bitwise_xor,
          np.left_shift, np.right_shift, np.arctan2, np.hypot, np.copysign, np.fmod,
          np.logaddexp, np.logaddexp2, np.heaviside, np.float_power, np.nextafter, np.gcd,
          np.lcm, np.ldexp]

# Functions whose float results may differ from NumPy's by rounding.
INEXACT = {"sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
           "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
           "arctanh", "deg2rad", "rad2deg", "degrees", "radians", "power", "float_power",
           "arctan2", "hypot", "true_divide", "reciprocal", "logaddexp", "logaddexp2"}

SHAPES = [((5,), (5,)), ((3, 4), (4,)), ((2, 1, 3), (4, 1)), ((), (3,)), ((0, 3), (3,)),
          ((4, 1), (1, 5))]


def values(rng, dtype, shape):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        low, high = max(info.min, -50), min(info.max, 50)
        x = rng.integers(low, high + 1, shape).astype(dtype)
        if x.size:  # an extreme value now and then: overflow must wrap as NumPy's does
            x.flat[0] = info.max if rng.random() < 0.5 else info.min
        return x
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    if x.size >= 4:
        x.flat[:4] = np.array([np.nan, np.inf, -0.0, 0.5], dtype)[: x.size]
        rng.shuffle(x.reshape(-1))
    return x


def ulps(dtype):
    return {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 4e-6,
            np.dtype(np.float64): 1e-13}.get(np.dtype(dtype), 0)


def check(name, got, want, inexact):
    got = np.asarray(got)
    assert got.dtype == want.dtype, f"{name}: dtype {got.dtype}, NumPy's {want.dtype}"
    assert got.shape == want.shape, f"{name}: shape {got.shape}, NumPy's {want.shape}"
    if want.dtype.kind == "f":
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{name}: NaN positions")
        tol = ulps(want.dtype) if inexact else 0
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True, err_msg=name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)


def numpy_or_error(f, *args):
    with np.errstate(all="ignore"):
        try:
            return f(*args), None
        except (TypeError, ValueError) as e:
            return None, e


@pytest.mark.parametrize("ufunc", UNARY, ids=lambda f: f.__name__)
def test_unary_functions_match_numpy(ufunc):
    rng = np.random.default_rng(zlib.crc32(ufunc.__name__.encode()) + SEED)
    for dtype in DTYPES:
        for shape in [(7,), (2, 3), (), (0,)]:
            a = values(rng, dtype, shape)
            if ufunc is np.reciprocal and a.dtype.kind in "iu":
                a[a == 0] = 1  # NumPy's integer 1 // 0 is the platform's (lazyfuse: 0)
            want, error = numpy_or_error(ufunc, a)
            if error is not None:
                with pytest.raises((TypeError, ValueError)):
                    np.asarray(ufunc(lf.asarray(a)))
                continue
            check(f"{ufunc.__name__}({a.dtype}{shape})", ufunc(lf.asarray(a)), want,
                  ufunc.__name__ in INEXACT)


@pytest.mark.parametrize("ufunc", BINARY, ids=lambda f: f.__name__)
def test_binary_functions_match_numpy_with_broadcasting(ufunc):
    rng = np.random.default_rng(zlib.crc32(ufunc.__name__.encode()) + SEED)
    pairs = [(d, d) for d in DTYPES] + [
        (np.int8, np.float32), (np.uint8, np.int16), (np.int32, np.float64), (np.bool_, np.int64),
        (np.float16, np.float32), (np.uint32, np.int32), (np.uint64, np.float64)]
    for left, right in pairs:
        for sa, sb in SHAPES:
            a, b = values(rng, left, sa), values(rng, right, sb)
            if ufunc in (np.left_shift, np.right_shift) and b.dtype.kind in "iu":
                b = np.abs(b) % (8 * b.dtype.itemsize)  # NumPy's shifts past the width vary
            if ufunc is np.power and np.result_type(a, b).kind in "biu":
                b = (np.abs(b) % 5).astype(b.dtype)  # NumPy refuses negative integer powers
            want, error = numpy_or_error(ufunc, a, b)
            what = f"{ufunc.__name__}({a.dtype}{sa}, {b.dtype}{sb})"
            if error is not None:
                with pytest.raises((TypeError, ValueError)):
                    np.asarray(ufunc(lf.asarray(a), lf.asarray(b)))
                continue
            check(what, ufunc(lf.asarray(a), lf.asarray(b)), want, ufunc.__name__ in INEXACT)
            # A Python scalar on either side is weak (NEP 50).
            if a.dtype.kind in "if" and ufunc not in (np.left_shift, np.right_shift):
                want, error = numpy_or_error(ufunc, a, 3)
                if error is None:
                    check(what + " with 3", ufunc(lf.asarray(a), 3), want,
                          ufunc.__name__ in INEXACT)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int16, np.bool_])
def test_ldexp_and_frexp_are_exact_at_the_edges_of_the_exponent_range(backend, dtype):
    rng = np.random.default_rng(zlib.crc32(b"ldexp") + SEED)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -3.0, 5e-324, 1e-40, 1e-310, 1e308, 3e38]
    x = np.concatenate([special, rng.standard_normal(300) * np.logspace(-300, 300, 300)])
    with np.errstate(all="ignore"):
        x = x.astype(dtype)
    for n in (rng.integers(-1200, 1200, x.size).astype(np.int32),
              np.resize(np.array([2 ** 40, -2 ** 40, -1075, 1074, -1022, 1023, -150, 128]), x.size),
              rng.integers(-128, 128, x.size).astype(np.int8)):
        with np.errstate(all="ignore"):
            want = np.ldexp(x, n)
        check(f"ldexp({x.dtype}, {n.dtype})", np.ldexp(lf.asarray(x), n), want, False)
    with np.errstate(all="ignore"):
        fraction, exponent = np.frexp(lf.asarray(x))
        want_fraction, want_exponent = np.frexp(x)
    check(f"frexp({x.dtype}) fraction", fraction, want_fraction, False)
    check(f"frexp({x.dtype}) exponent", exponent, want_exponent, False)
    np.testing.assert_array_equal(np.signbit(np.asarray(fraction)), np.signbit(want_fraction))


REDUCTIONS = ["sum", "prod", "min", "max", "mean", "any", "all", "argmax", "argmin", "var",
              "std", "cumsum", "cumprod"]


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions_match_numpy_over_axes(name):
    rng = np.random.default_rng(len(name) + SEED)
    for dtype in DTYPES:
        for shape, axis, keepdims in [((6,), None, False), ((3, 4), 0, False), ((3, 4), -1, True),
                                      ((2, 3, 4), (0, 2), False), ((2, 3, 4), None, True),
                                      ((0, 3), 1, False)]:
            if name in ("argmax", "argmin", "cumsum", "cumprod") and (
                    isinstance(axis, tuple) or keepdims):
                continue
            a = values(rng, dtype, shape)
            if dtype is np.float16 and name in ("sum", "prod", "mean", "var", "std", "cumsum",
                                                "cumprod"):
                a = np.clip(np.nan_to_num(a), -2, 2).astype(dtype)  # float16's range is small
            kwargs = {"axis": axis}
            if keepdims:
                kwargs["keepdims"] = True
            f = getattr(np, name)
            want, error = numpy_or_error(lambda x: f(x, **kwargs), a)
            what = f"{name}({a.dtype}{shape}, {kwargs})"
            if error is not None:
                with pytest.raises((TypeError, ValueError)):
                    np.asarray(f(lf.asarray(a), **kwargs))
                continue
            want = np.asarray(want)
            got = f(lf.asarray(a), **kwargs)
            inexact = name in ("sum", "prod", "mean", "var", "std", "cumsum", "cumprod")
            if want.dtype.kind == "f" and inexact:
                got = np.asarray(got)
                assert got.dtype == want.dtype and got.shape == want.shape, what
                tol = {np.float16: 1e-2, np.float32: 1e-5}.get(want.dtype.type, 1e-12)
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True,
                                           err_msg=what)
            else:
                check(what, got, want, False)
