"""Complex numbers in ``@cuda.jit`` kernels and device functions: complex
arrays and numbers as arguments, complex locals, arithmetic, ``cmath``,
against Python's own complex numbers (issues 46 and 47)."""

import cmath
import itertools
import math

import numpy as np
import pytest

import lazyfuse as lf
from lazyfuse import CompileError, cuda

_SPECIAL = [-0.0, 0.0, 1.0, -1.5, 3.25, math.inf, -math.inf, math.nan]
_VALUES = [complex(x, y) for x, y in itertools.product(_SPECIAL, _SPECIAL)]
_FUNCTIONS = ["exp", "log", "log10", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan",
              "sinh", "cosh", "tanh", "asinh", "acosh", "atanh"]


def _same(got, want, rel):
    """Equal parts: NaN where NaN, the same infinity, else close (and zeros
    of the same sign, as Numba's tests ask)."""
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        if math.isnan(w):
            if not math.isnan(g):
                return False
        elif math.isinf(w) or w == 0:
            if g != w or math.copysign(1, g) != math.copysign(1, w):
                return False
        elif not math.isclose(g, w, rel_tol=rel, abs_tol=1e-300):
            return False
    return True


def _one(name):
    function = getattr(cmath, name)

    @cuda.jit(device=True)
    def apply(z):
        return function(z)

    @cuda.jit
    def kernel(out, values):
        i = cuda.grid(1)
        if i < values.size:
            out[i] = apply(values[i])
    return kernel


@pytest.mark.parametrize("name", _FUNCTIONS)
def test_cmath_functions_of_special_values_are_pythons(backend, name):
    kernel = _one(name)
    values = np.array(_VALUES, np.complex128)
    out = np.zeros_like(values)
    kernel[1, len(values)](out, values)
    for z, got in zip(_VALUES, out):
        try:
            want = getattr(cmath, name)(z)
        except ValueError:  # Python raises where Numba's kernels give a value
            continue
        if _same(complex(got), want, 1e-13):
            continue
        # Numba's algorithms (lazyfuse's) lose a part CPython's tables keep
        # for some NaN inputs (sin(0+nanj) is nan+nanj, not 0+nanj).
        assert cmath.isnan(z) and cmath.isnan(want) and cmath.isnan(complex(got)), (
            name, z, got, want)


def test_arithmetic_locals_and_scalar_arguments(backend):
    @cuda.jit
    def mixed(out, x, y, c):
        i = cuda.grid(1)
        if i < x.size:
            z = x[i] * y[i] + 1j   # a complex local
            w = z / (y[i] - 0.5)
            acc = 0                # complex because of what it is given below
            for k in range(3):
                acc += w ** k
            out[i] = acc.conjugate() + abs(z) - c * cmath.sqrt(y[i]) + complex(x[i].imag, 2)

    x = np.arange(6) + 1j * np.arange(6)[::-1]
    y = np.linspace(-1, 1, 6) - 0.3j
    out = np.zeros(6, np.complex128)
    mixed[1, 8](out, x, y, 2 - 1j)

    def reference(a, b, c=2 - 1j):
        z = a * b + 1j
        w = z / (b - 0.5)
        acc = sum(w ** k for k in range(3))
        return acc.conjugate() + abs(z) - c * cmath.sqrt(b) + complex(a.imag, 2)

    np.testing.assert_allclose(out, [reference(a, b) for a, b in zip(x, y)], rtol=1e-13)


def test_complex64_stays_single_and_a_signature_declares_scalars(backend):
    @cuda.jit("void(complex64[:], complex64)")
    def shift(a, b):
        i = cuda.grid(1)
        a[i] += b * a[i]

    a = np.arange(4, dtype=np.complex64) + 1j
    want = a + np.complex64(0.5j) * a
    shift[1, 4](a, 0.5j)
    assert a.dtype == np.complex64
    np.testing.assert_allclose(a, want, rtol=1e-6)


def test_escape_time_loop_on_a_complex_local(backend):
    @cuda.jit
    def mandelbrot(counts, grid):
        i, j = cuda.grid(2)
        if i < grid.shape[0] and j < grid.shape[1]:
            c = grid[i, j]
            z = 0j
            n = 0
            while abs(z) <= 2 and n < 50:
                z = z * z + c
                n += 1
            counts[i, j] = n

    re, im = np.meshgrid(np.linspace(-2, 0.5, 12), np.linspace(-1.2, 1.2, 10))
    grid = re + 1j * im
    counts = np.zeros(grid.shape, np.int32)
    mandelbrot[(2, 2), (8, 8)](counts, grid)

    def escape(c):
        z, n = 0j, 0
        while abs(z) <= 2 and n < 50:
            z, n = z * z + c, n + 1
        return n

    np.testing.assert_array_equal(counts, np.vectorize(escape)(grid))


def test_parts_as_arrays_shapes_and_polar(backend):
    @cuda.jit
    def parts(values, radii, angles):
        i = cuda.grid(1)
        if i < len(values):
            r, phi = cmath.polar(values[i])
            radii[i], angles[i] = r, phi
            cuda.atomic.add(values.real, i, 1.0)
            values.imag[i] = values.shape[0]

    values = np.array([3 + 4j, -1 - 1j, 2j], np.complex128)
    original = values.copy()
    radii, angles = np.zeros(3), np.zeros(3)
    parts[1, 3](values, radii, angles)
    np.testing.assert_allclose(radii, np.abs(original))
    np.testing.assert_allclose(angles, np.angle(original))
    np.testing.assert_array_equal(values, original.real + 1 + 3j)


def test_lazy_complex_arrays_stay_lazy_and_in_is_not_written_back(backend):
    @cuda.jit
    def rotate(out, values):
        i = cuda.grid(1)
        if i < values.size:
            out[i] = values[i] * 1j
            values[i] = 0

    values = lf.asarray(np.array([1 + 2j, 3 - 1j]))
    out = lf.asarray(np.zeros(2, np.complex128))
    rotate[1, 2](out, values)
    assert isinstance(out, lf.ComplexArray)
    np.testing.assert_array_equal(np.asarray(out), [-2 + 1j, 1 + 3j])
    np.testing.assert_array_equal(np.asarray(values), [0, 0])

    kept = np.array([1 + 2j, 3 - 1j])
    plain = np.zeros(2, np.complex128)
    rotate[1, 2](plain, cuda.In(kept))
    np.testing.assert_array_equal(kept, [1 + 2j, 3 - 1j])
    np.testing.assert_array_equal(plain, [-2 + 1j, 1 + 3j])


def test_complex_values_where_real_ones_are_needed_are_refused():
    @cuda.jit
    def into_real(out, values):
        out[0] = values[0]

    with pytest.raises(CompileError, match="storing a complex value into an array of real"):
        into_real[1, 1](np.zeros(1), np.ones(1, np.complex128))

    @cuda.jit
    def ordered(out, values):
        if values[0] < values[1]:
            out[0] = 1

    with pytest.raises(CompileError, match="order comparison of complex"):
        ordered[1, 1](np.zeros(1), np.ones(2, np.complex128))


def test_numpy_ufuncs_of_complex_arrays_follow_numpy(backend):
    @cuda.jit
    def apply(a, b, larger, fmin, less, size, root, product, truth):
        np.maximum(a, b, larger)     # NumPy's order: real parts, then imaginary; a NaN wins
        np.fmin(a, b, fmin)          # a NaN loses
        np.less(a, b, less)
        np.absolute(a, size)
        np.sqrt(a, root)
        np.multiply(a, b, product)
        np.logical_and(a, b, truth)

    a = np.array([1 + 2j, 1 + 2j, complex(math.nan, 0), 0j, -3 + 0.5j])
    b = np.array([1 + 3j, 0 + 9j, 2 + 2j, complex(0, math.nan), -3 - 0.5j])
    outs = [np.zeros(5, np.complex128), np.zeros(5, np.complex128), np.zeros(5, np.bool_),
            np.zeros(5), np.zeros(5, np.complex128), np.zeros(5, np.complex128),
            np.zeros(5, np.bool_)]
    apply[1, 1](a, b, *outs)
    with np.errstate(invalid="ignore"):
        wants = [np.maximum(a, b), np.fmin(a, b), np.less(a, b), np.absolute(a), np.sqrt(a),
                 a * b, np.logical_and(a, b)]
    for got, want in zip(outs, wants):
        np.testing.assert_allclose(got, want, rtol=1e-15)


@pytest.mark.parametrize("target", ["cpu", "sim"])
def test_guvectorize_over_complex_arguments(target):
    @lf.guvectorize(["void(complex64[:], complex64, complex64[:])",
                     "void(complex128[:], complex128, complex128[:])"], "(n),()->(n)",
                    target=target)
    def turned_running_sum(x, turn, out):
        acc = 0
        for i in range(x.shape[0]):
            acc += x[i] * turn
            out[i] = acc * cmath.exp(1j * i)

    @lf.guvectorize(["void(complex128[:], float64[:])"], "(n)->()", target=target)
    def largest_size(x, res):
        best = 0.0
        for i in range(x.shape[0]):
            best = max(best, abs(x[i]))
        res[0] = best

    x = np.arange(12).reshape(3, 4) + 1j * np.arange(12)[::-1].reshape(3, 4)
    want = np.cumsum(x * 0.5j, axis=1) * np.exp(1j * np.arange(4))
    got = turned_running_sum(x, 0.5j)
    assert isinstance(got, lf.ComplexArray)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)
    single = np.asarray(turned_running_sum(x.astype(np.complex64), np.complex64(0.5j)))
    assert single.dtype == np.complex64
    np.testing.assert_allclose(single, want, rtol=1e-5)
    out = np.zeros_like(x)
    turned_running_sum(x, 0.5j, out)
    np.testing.assert_allclose(out, want, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(largest_size(x)), np.abs(x).max(axis=1))


def test_guvectorize_refuses_a_parameter_complex_in_one_signature_only():
    with pytest.raises(lf.ArgumentError, match="complex in some signatures"):
        lf.guvectorize(["void(complex64[:], float32[:])", "void(float64[:], float64[:])"],
                       "(n)->(n)")(lambda x, out: None)


CONST_Z = (np.arange(12).reshape(3, 4) * (1 + 0.5j)).astype(np.complex64)


def test_complex_global_arrays_frozen(backend):
    @cuda.jit
    def kernel(out):
        c = cuda.const.array_like(CONST_Z)
        i, j = cuda.grid(2)
        if i < out.shape[0] and j < out.shape[1]:
            out[i, j] = c[i, j] * 2 + CONST_Z[i, j].imag + abs(CONST_Z[0, 1])

    out = np.zeros((3, 4), np.complex128)
    kernel[1, (3, 4)](out)
    want = CONST_Z * 2 + CONST_Z.imag + abs(CONST_Z[0, 1])
    np.testing.assert_allclose(out, want, rtol=1e-6)


@pytest.mark.parametrize("target", ["cpu", "sim"])
def test_vectorize_with_complex_loops_and_branches_compiles_from_the_source(target):
    # Tracing cannot follow a `while` on complex values or a branch on a
    # value: with signatures, the body runs as a kernel, one element per
    # thread, as real ones do.
    @lf.vectorize(["int32(complex128)", "int32(complex64)"], target=target)
    def escape(c):
        z = 0j
        n = 0
        while abs(z) <= 2 and n < 50:
            z = z * z + c
            n += 1
        return n

    @lf.vectorize(["complex128(complex128, float64)"], target=target)
    def turned(c, t):
        if t > 0:
            return c * t
        return c - 1j

    def escape_count(c):
        z, n = 0j, 0
        while abs(z) <= 2 and n < 50:
            z, n = z * z + c, n + 1
        return n

    c = (np.linspace(-2, 1, 7)[:, None] + 1j * np.linspace(-1.2, 1.2, 5)).ravel()
    got = np.asarray(escape(c))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [escape_count(v) for v in c])
    np.testing.assert_array_equal(np.asarray(escape(c.astype(np.complex64))),
                                  [escape_count(complex(np.complex64(v))) for v in c])
    t = np.linspace(-1, 1, c.size)
    np.testing.assert_allclose(np.asarray(turned(c, t)), np.where(t > 0, c * t, c - 1j))
    # Without signatures such a function cannot be typed: the error says why.
    untyped = lf.vectorize(escape_count)
    with pytest.raises(CompileError, match="without signatures"):
        untyped(c)
