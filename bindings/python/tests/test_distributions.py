"""``lazyfuse.random``'s distributions beyond uniform and normal values:
each has NumPy's distribution (a two-sample Kolmogorov–Smirnov statistic
against NumPy's own draws, fixed seeds: deterministic), array parameters
broadcast, the edge parameters NumPy allows give NumPy's values, bad ones
raise NumPy's errors, and the transforms stay lazy and fused."""

import numpy as np
import pytest

import lazyfuse as lf

#: Draws per distribution in the comparisons.
N = 100_000
#: The two-sample KS statistic's bound at significance 1e-6 for N and N:
#: sqrt(-log(1e-6 / 2) / 2) * sqrt(2 / N).
KS_BOUND = 2.69 * (2 / N) ** 0.5

CASES = [
    ("standard_exponential", ()), ("lognormal", (0.5, 0.7)), ("laplace", (1.0, 2.0)),
    ("logistic", (1.0, 2.0)), ("gumbel", (1.0, 2.0)), ("weibull", (1.5,)),
    ("pareto", (3.0,)), ("power", (2.5,)), ("rayleigh", (2.0,)), ("standard_cauchy", ()),
    ("triangular", (0.0, 1.0, 3.0)), ("wald", (1.0, 2.0)), ("geometric", (0.2,)),
    ("geometric", (0.9,)), ("standard_gamma", (0.5,)), ("standard_gamma", (3.0,)),
    ("gamma", (2.0, 3.0)), ("chisquare", (3,)), ("beta", (0.5, 2.0)), ("f", (3, 7)),
    ("standard_t", (4,)), ("noncentral_chisquare", (3, 2.0)), ("noncentral_chisquare", (0.5, 1.0)),
    ("poisson", (3.5,)), ("poisson", (1e5,)), ("binomial", (20, 0.3)),
    ("binomial", (10 ** 6, 0.4)), ("negative_binomial", (2.5, 0.3)),
    ("hypergeometric", (30, 20, 15)), ("logseries", (0.9,)), ("zipf", (2.0,)),
    ("vonmises", (0.0, 2.0)),
]


def ks_statistic(a, b):
    a, b = np.sort(np.ravel(a)).astype(float), np.sort(np.ravel(b)).astype(float)
    at = np.concatenate([a, b])
    return np.abs(np.searchsorted(a, at, "right") / a.size
                  - np.searchsorted(b, at, "right") / b.size).max()


@pytest.mark.parametrize("name, args", CASES, ids=[f"{n}{a}" for n, a in CASES])
def test_each_distribution_is_numpys(name, args):
    mine = np.asarray(getattr(lf.random.default_rng(1), name)(*args, size=N))
    theirs = getattr(np.random.default_rng(1), name)(*args, size=N)
    assert mine.shape == theirs.shape and mine.dtype == theirs.dtype
    assert ks_statistic(mine, theirs) < KS_BOUND


def test_array_parameters_broadcast_and_each_column_has_its_distribution():
    rng = lf.random.default_rng(3)
    shapes = np.array([0.3, 1.0, 5.0])
    for draw in (rng.standard_gamma(shapes, (N, 3)), rng.gamma(lf.asarray(shapes), 2.0, (N, 3)) / 2):
        values = np.asarray(draw)
        assert values.shape == (N, 3) and (values >= 0).all()
        np.testing.assert_allclose(values.mean(axis=0), shapes, rtol=0.02)
        np.testing.assert_allclose(values.var(axis=0), shapes, rtol=0.04)
    counts = np.asarray(rng.poisson([1.0, 10.0], (N, 2)))  # NumPy's generator: computed
    np.testing.assert_allclose(counts.mean(axis=0), [1.0, 10.0], rtol=0.02)
    assert np.asarray(rng.binomial([10, 20], 0.5, (3, 2))).shape == (3, 2)
    assert np.asarray(rng.laplace([0.0, 10.0], 1.0)).shape == (2,)


def test_edge_parameters_give_numpys_values():
    rng = lf.random.default_rng(4)
    np.testing.assert_array_equal(np.asarray(rng.weibull(0, 4)), np.zeros(4))
    np.testing.assert_array_equal(np.asarray(rng.geometric(1.0, 4)), np.ones(4, np.int64))
    np.testing.assert_array_equal(np.asarray(rng.binomial(7, 1.0, 3)), [7, 7, 7])
    np.testing.assert_array_equal(np.asarray(rng.binomial(7, 0.0, 3)), [0, 0, 0])
    np.testing.assert_array_equal(np.asarray(rng.poisson(0, 3)), [0, 0, 0])
    np.testing.assert_array_equal(np.asarray(rng.logseries(0, 3)), [1, 1, 1])
    np.testing.assert_array_equal(np.asarray(rng.standard_gamma(0.0, 3)), [0, 0, 0])
    assert (np.asarray(rng.geometric(1e-300, 3)) >= 1).all()  # far tails stay integers


def test_vectors_permutations_and_bytes():
    rng = lf.random.default_rng(5)
    cov = [[2.0, 0.5], [0.5, 1.0]]
    for method in ("svd", "eigh", "cholesky"):
        m = np.asarray(rng.multivariate_normal([1.0, 2.0], cov, N, method=method))
        assert m.shape == (N, 2)
        np.testing.assert_allclose(m.mean(axis=0), [1.0, 2.0], atol=0.02)
        np.testing.assert_allclose(np.cov(m.T), cov, atol=0.03)
    d = np.asarray(rng.dirichlet([1.0, 2.0, 3.0], N))
    np.testing.assert_allclose(d.sum(axis=1), 1.0)
    np.testing.assert_allclose(d.mean(axis=0), [1 / 6, 2 / 6, 3 / 6], atol=0.005)
    rows = np.arange(12).reshape(3, 4)
    shuffled = np.asarray(rng.permuted(rows, axis=1))
    np.testing.assert_array_equal(np.sort(shuffled, axis=1), rows)
    flat = np.asarray(rng.permuted(rows))
    assert sorted(flat.ravel().tolist()) == list(range(12)) and flat.shape == (3, 4)
    target = lf.asarray(rows)
    assert rng.permuted(rows, axis=0, out=target) is target
    np.testing.assert_array_equal(np.sort(np.asarray(target), axis=0), rows)
    assert isinstance(rng.bytes(10), bytes) and len(rng.bytes(10)) == 10


def test_dtypes_and_out():
    rng = lf.random.default_rng(6)
    assert np.asarray(rng.standard_gamma(2.0, 3, dtype=np.float32)).dtype == np.float32
    assert np.asarray(rng.standard_exponential(3, dtype=np.float32)).dtype == np.float32
    out = np.empty(5)
    assert rng.standard_gamma(2.0, out=out) is out and (out > 0).all()
    with pytest.raises(TypeError):
        rng.standard_gamma(2.0, 3, dtype=np.int32)


def test_the_legacy_functions_draw_from_the_global_generator():
    lf.random.seed(4)
    first = np.asarray(lf.random.poisson(3, 5))
    lf.random.seed(4)
    np.testing.assert_array_equal(np.asarray(lf.random.poisson(3, 5)), first)
    for name in ("gamma", "beta", "binomial", "standard_t", "lognormal", "zipf", "dirichlet"):
        assert callable(getattr(lf.random, name)), name
    assert np.asarray(lf.random.chisquare(2.0, (2, 3))).shape == (2, 3)


def test_transforms_stay_lazy_and_fuse_with_their_consumers():
    with lf.use("cpu"):
        rng = lf.random.default_rng(0)
        before = lf.stats()["evaluations"]
        mean = (rng.gamma(2.0, 3.0, 200_000) + rng.laplace(0.0, 1.0, 200_000)).mean()
        assert lf.stats()["evaluations"] == before
        assert "source" not in mean.explain()  # generated in the kernels: nothing uploaded
        assert abs(mean.item() - 6.0) < 0.05


def test_the_backends_draw_the_same_values():
    draws = {}
    for backend in ("cpu", "sim"):
        with lf.use(backend):
            rng = lf.random.default_rng(9)
            draws[backend] = [np.asarray(rng.gamma(0.7, 1.0, 50)),
                              np.asarray(rng.poisson(4.0, 50)), np.asarray(rng.laplace(size=50))]
    for cpu, sim in zip(draws["cpu"], draws["sim"]):
        np.testing.assert_allclose(sim, cpu, rtol=1e-12)


@pytest.mark.parametrize("call, message", [
    (lambda g: g.poisson(-1.0), "lam < 0"),
    (lambda g: g.poisson(np.nan), "lam is NaN"),
    (lambda g: g.binomial(5, 1.5), "p < 0, p > 1"),
    (lambda g: g.binomial(-1, 0.5), "n < 0"),
    (lambda g: g.gamma(-1.0), "shape < 0"),
    (lambda g: g.gamma(1.0, -2.0), "scale < 0"),
    (lambda g: g.beta(0.0, 1.0), "a <= 0"),
    (lambda g: g.hypergeometric(2, 3, 10), "ngood \\+ nbad < nsample"),
    (lambda g: g.zipf(1.0), "a <= 1"),
    (lambda g: g.triangular(2.0, 1.0, 3.0), "left > mode"),
    (lambda g: g.geometric(0.0), "p <= 0"),
    (lambda g: g.laplace(0.0, -1.0), "scale < 0"),
    (lambda g: g.dirichlet([[1.0]]), "expected 1-d"),
    (lambda g: g.multivariate_normal([0.0], [[1.0, 0.0]]), "expected \\(n,\\) and \\(n, n\\)"),
])
def test_bad_parameters_raise_numpys_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call(lf.random.default_rng(0))


def test_choice_without_replacement_follows_the_weights_as_numpys():
    p = np.array([0.5, 0.3, 0.15, 0.05, 0.0])
    rng = lf.random.default_rng(8)
    assert np.asarray(rng.choice(5, (2, 2), replace=False, p=p)).shape == (2, 2)
    firsts, seconds = [], []
    for _ in range(2000):
        pair = np.asarray(rng.choice(5, 2, replace=False, p=p))
        assert pair[0] != pair[1] and 4 not in pair
        firsts.append(pair[:1])
        seconds.append(pair[1:])
    first = np.concatenate(firsts)
    # NumPy draws one value after another: the first with the chances p,
    # the second with the chances of what is left.
    second_chances = [sum(p[j] * p[k] / (1 - p[j]) for j in range(5) if j != k) for k in range(5)]
    second = np.concatenate(seconds)
    for k in range(5):
        assert abs(np.mean(first == k) - p[k]) < 0.03, k
        assert abs(np.mean(second == k) - second_chances[k]) < 0.03, k
    with pytest.raises(ValueError, match="fewer non-zero entries"):
        rng.choice(5, 5, replace=False, p=p)


def test_gamma_candidates_make_all_rejected_rarer_than_promised():
    # Marsaglia and Tsang's acceptance, integrated numerically over the
    # normal candidate, against the bound 0.05 / a the count relies on.
    from lazyfuse._distributions import GAMMA_ALL_REJECTED, _gamma_tries
    for a in (1.0, 1.3, 2.0, 3.0, 10.0, 100.0, 1e4):
        d = a - 1 / 3
        c = 1 / np.sqrt(9 * d)
        x = np.linspace(-1 / c + 1e-12, 60, 400_001)
        v = (1 + c * x) ** 3
        with np.errstate(all="ignore"):
            keep = np.minimum(1, np.exp(0.5 * x * x + d - d * v + d * np.log(v)))
        accepted = np.trapezoid(np.exp(-x * x / 2) / np.sqrt(2 * np.pi) * keep, x)
        assert 1 - accepted < 0.05 / a, a
        assert (1 - accepted) ** _gamma_tries(a) < GAMMA_ALL_REJECTED, a
    assert [_gamma_tries(a) for a in (1, 3, 100)] == [12, 9, 5]
