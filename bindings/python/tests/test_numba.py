"""The tutorials' Numba programs with `from lazyfuse import ...`."""

import math

import numpy as np
import pytest

import lazyfuse as lf
from lazyfuse import CompileError, cuda, float32, float64, int64, vectorize


@vectorize(["float32(float32, float32, float32)", "float64(float64, float64, float64)"], target="cuda")
def discriminant(a, b, c):
    return math.sqrt(b ** 2 - 4 * a * c)


def test_vectorize_with_signatures_and_out():
    n = 1000
    a, b, c = (np.random.default_rng(i).random(n).astype(np.float32) for i in range(3))
    b = b + 2.0
    want = np.sqrt(b ** 2 - 4 * a * c)
    got = discriminant(a, b, c)
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    d_out = cuda.device_array_like(a)
    discriminant(a, b, c, out=d_out)
    np.testing.assert_allclose(d_out.copy_to_host(), want, rtol=1e-6)
    host_out = np.empty(n, dtype=np.float32)
    discriminant(a, b, c, out=host_out)
    np.testing.assert_allclose(host_out, want, rtol=1e-6)
    # f64 inputs take the f64 loop.
    assert discriminant(a.astype(np.float64), b.astype(np.float64), c.astype(np.float64)).dtype == np.float64


def test_vectorize_type_objects_and_no_signature():
    @vectorize([float64(float64, float64)])
    def clamp_add(x, y):
        return lf.where(x + y > 1.0, 1.0, x + y)

    assert clamp_add(np.array([0.2, 0.9]), np.array([0.3, 0.4])).numpy().tolist() == [0.5, 1.0]

    @vectorize
    def poly(x):
        return 3 * x ** 2 + max(x, 0.5) - abs(x)

    x = np.array([-1.0, 0.25, 2.0])
    np.testing.assert_allclose(poly(x).numpy(), 3 * x ** 2 + np.maximum(x, 0.5) - np.abs(x))
    assert float32(float32).startswith("float32(")

    @vectorize([int64(int64, int64)])
    def reduced_denominator(p, q):
        return q // math.gcd(p, q) + 0 * math.lcm(p, q)

    p, q = np.array([6, -4, 0, 9]), np.array([8, 6, 5, 0])
    assert reduced_denominator(p, q).numpy().tolist() == (q // np.gcd(p, q)).tolist()

    @vectorize([float64(float64)])
    def next_up(x):
        return math.nextafter(x, math.inf) if x > 0 else x

    x = np.array([1.0, -2.0, 1e300])
    assert next_up(x).numpy().tolist() == np.where(x > 0, np.nextafter(x, np.inf), x).tolist()

    @vectorize([float64(float64, float64)])
    def floor_at(inf, x):  # an argument named as a constant of the expression language
        return max(inf, x) if x == x else -math.inf

    got = floor_at(np.array([1.0, 2.0, 0.0]), np.array([0.0, 3.0, np.nan])).numpy()
    assert got.tolist() == [1.0, 3.0, -np.inf]


def test_vectorize_traces_python_control_flow_on_values():
    def branchy(x, y):
        if x > 1:
            return x * 2
        elif x < -1 and not y > 0:
            t = -x
            t += 0.5
            return t
        z = x
        for i in range(3):
            z = z + i * y
        return z if not (0 < x < 0.5) else 100.0

    x = np.linspace(-3, 3, 25)
    y = np.where(np.arange(25) % 2 == 0, 1.0, -1.0)
    want = [branchy(u, v) for u, v in zip(x, y)]
    for target in ("cpu", "sim"):
        got = vectorize(["float64(float64, float64)"], target=target)(branchy)(x, y)
        np.testing.assert_array_equal(got.numpy(), want)

    limit = 0.5  # a closure's variable

    @vectorize
    def clipped(v):
        return limit if v > limit else v

    np.testing.assert_array_equal(clipped(x).numpy(), np.minimum(x, 0.5))

    @cuda.reduce
    def larger(a, b):
        if a > b:
            return a
        return b

    assert larger(np.array([3.0, 9.0, -1.0, 4.0])) == 9.0


def test_vectorize_refuses_what_it_cannot_trace_naming_the_line():
    with pytest.raises(CompileError, match=r"line \d+: `While` statements"):
        @vectorize
        def spins(x):
            while x > 0:
                x = x - 1
            return x

    with pytest.raises(CompileError, match="bounds must be constants"):
        @vectorize
        def loops(x, n):
            if x > 0:
                for i in range(n):
                    x = x + 1
            return x

    with pytest.raises(CompileError, match="without returning"):
        @vectorize
        def falls_off(x):
            if x > 0:
                return x


@vectorize(["int64(int64, int64)"])
def gcd(a, b):
    while b != 0:
        a, b = b, a % b
    return a


@vectorize([float64(float64, int64)], target="sim")
def exp_series(x, terms):
    """exp(x) by its series, with an early return once the terms vanish."""
    total, term = 1.0, 1.0
    for k in range(1, terms):
        term = term * x / k
        if abs(term) < 1e-300:
            return total
        total += term
    return total


@vectorize(["int32(float64)"])
def collatz_steps(start):
    n = int(start)
    steps = 0
    while n != 1 and n > 0:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def test_vectorize_with_signatures_compiles_loops_from_the_source():
    a, b = np.array([12, 18, 7, 0], np.int32), np.array([8, 12, 0, 5], np.int32)
    got = gcd(a, b)
    assert isinstance(got, lf.Array) and got.dtype == np.int64
    np.testing.assert_array_equal(np.asarray(got), np.gcd(a, b))
    np.testing.assert_array_equal(np.asarray(gcd(lf.asarray(a) * 3, 6)), np.gcd(a * 3, 6))
    x = np.array([0.0, 1.0, -2.5, 20.0])
    np.testing.assert_allclose(np.asarray(exp_series(x, 200)), np.exp(x), rtol=1e-12)
    out = np.zeros(4, np.int32)
    collatz_steps(np.array([1.0, 6.0, 27.0, 7.0]), out=out)
    np.testing.assert_array_equal(out, [0, 8, 111, 16])
    with pytest.raises(CompileError, match="with signatures"):
        @vectorize
        def spins(x):
            while x > 0:
                x = x - 1
            return x


def test_jit_and_njit_compile_scalar_functions():
    @lf.njit
    def hyp(a, b):
        return math.sqrt(a * a + b * b) if a > 0 else 0.0

    assert hyp(3.0, 4.0) == 5.0 and hyp(-3.0, 4.0) == 0.0
    np.testing.assert_allclose(hyp(np.array([3.0, -1.0]), 4.0).numpy(), [5.0, 0.0])
    with pytest.raises(CompileError, match="argument 0 is a dict"):
        hyp({}, 1.0)
    assert lf.jit(forceobj=True)(len)([1, 2]) == 2


def test_cuda_reduce_and_device_arrays():
    @cuda.reduce
    def sum_reduce(a, b):
        return a + b

    @cuda.reduce
    def max_reduce(a, b):
        return max(a, b)

    a = np.arange(1, 1001, dtype=np.float64)
    assert sum_reduce(a) == a.sum()
    assert max_reduce(a, init=-np.inf) == 1000.0
    d = cuda.to_device(a)
    assert sum_reduce(d) == a.sum()
    with cuda.defer_cleanup():
        e = cuda.device_array((4,), np.float32)
        assert e.copy_to_host().tolist() == [0.0] * 4


def test_targets_run_anywhere():
    for target in ("cpu", "parallel", "sim"):
        @vectorize(["float64(float64)"], target=target)
        def twice(x):
            return 2 * x

        assert twice(np.array([1.0, 2.0])).numpy().tolist() == [2.0, 4.0]
    with pytest.raises(ValueError, match="unknown target"):
        vectorize(target="tpu")


@vectorize(["float64(float64, float64, float64, float64, float64)"])
def black_scholes_call(S, K, T, r, sigma):
    """A European call's price: the normal CDF from math.erfc, traced."""
    d1 = (math.log(S / K) + (r + 0.5 * sigma * sigma) * T) / (sigma * math.sqrt(T))
    d2 = d1 - sigma * math.sqrt(T)
    cnd = lambda d: 0.5 * math.erfc(-d / math.sqrt(2.0))  # noqa: E731
    return S * cnd(d1) - K * math.exp(-r * T) * cnd(d2)


@cuda.jit
def gammas(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = math.gamma(x[i])
        out[i, 1] = math.lgamma(x[i])
        out[i, 2] = math.erf(x[i])


def test_special_functions_erf_erfc_gamma_lgamma():
    rng = np.random.default_rng(5)
    S, K = rng.uniform(50, 150, 200), rng.uniform(50, 150, 200)
    T, r, sigma = rng.uniform(0.1, 2, 200), 0.03, rng.uniform(0.1, 0.6, 200)
    erfc = np.vectorize(math.erfc)
    cnd = lambda d: 0.5 * erfc(-d / math.sqrt(2.0))  # noqa: E731
    d1 = (np.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * np.sqrt(T))
    want = S * cnd(d1) - K * np.exp(-r * T) * cnd(d1 - sigma * np.sqrt(T))
    np.testing.assert_allclose(np.asarray(black_scholes_call(S, K, T, r, sigma)), want, rtol=1e-12)
    x = np.array([0.5, 1.0, 2.5, 5.0, -2.5, 30.0])
    for backend in ("cpu", "sim"):
        out = np.zeros((6, 3))
        with lf.use(backend):
            gammas[1, 8](x, out)
        want = [[math.gamma(v), math.lgamma(v), math.erf(v)] for v in x]
        np.testing.assert_allclose(out, want, rtol=1e-13, atol=1e-15)


def test_numba_type_objects_equal_numpys_dtypes_and_one_another():
    # The array API suite looks dtypes up in tuples of the namespace's.
    assert np.dtype("float64") in (lf.float32, lf.float64)
    assert lf.float32 == np.dtype("float32") and np.dtype("int8") == lf.int8
    assert lf.complex64(lf.complex64).args == (lf.complex64,)
    assert lf.float64 != lf.float32 and len({lf.float64, lf.float64}) == 1
