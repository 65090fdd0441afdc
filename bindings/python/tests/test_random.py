"""``lazyfuse.random``: seeded draws repeat, calls draw fresh streams, the
values are the same on every backend, have the distributions asked for
(moments and bounds of large samples, fixed seeds: deterministic), stay
lazy and fuse with their consumers, and bad arguments raise NumPy's kinds
of errors."""

import numpy as np
import pytest

import lazyfuse as lf


def values(x):
    assert isinstance(x, lf.Array), type(x)
    return np.asarray(x)


def test_seeded_generators_repeat_and_each_call_draws_a_new_stream(backend):
    a, b = lf.random.default_rng(7), lf.random.default_rng(7)
    first = values(a.random(1000))
    np.testing.assert_array_equal(first, values(b.random(1000)))
    second = values(a.random(1000))
    assert not np.array_equal(first, second)
    assert not np.array_equal(first, values(lf.random.default_rng(8).random(1000)))
    lf.random.seed(3)
    legacy = values(lf.random.rand(4, 5))
    lf.random.seed(3)
    np.testing.assert_array_equal(legacy, values(lf.random.rand(4, 5)))
    assert legacy.shape == (4, 5)


def test_every_backend_draws_the_same_values():
    draws = {}
    for backend in ("cpu", "sim", "reference"):
        with lf.use(backend):
            rng = lf.random.default_rng(11)
            draws[backend] = [values(rng.random((3, 50), dtype=np.float32)),
                              values(rng.integers(-5, 5, 100)), values(rng.standard_normal(200))]
    for got in (draws["sim"], draws["reference"]):
        np.testing.assert_array_equal(got[0], draws["cpu"][0])
        np.testing.assert_array_equal(got[1], draws["cpu"][1])
        np.testing.assert_allclose(got[2], draws["cpu"][2], rtol=1e-12, atol=1e-12)


def test_distributions_have_their_moments_and_bounds(backend):
    rng = lf.random.default_rng(2024)
    n = 200_000
    u = values(rng.random(n))
    assert u.dtype == np.float64 and u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    assert values(rng.random(10, dtype=np.float32)).dtype == np.float32
    z = values(rng.normal(3.0, 2.0, n))
    assert abs(z.mean() - 3.0) < 0.03 and abs(z.std() - 2.0) < 0.03
    w = values(rng.uniform(-2.0, 6.0, (n,)))
    assert w.min() >= -2 and w.max() < 6 and abs(w.mean() - 2.0) < 0.05
    e = values(rng.exponential(0.5, n))
    assert e.min() >= 0 and abs(e.mean() - 0.5) < 0.01
    for dtype, low, high in [(np.int64, -3, 4), (np.uint8, 0, 256), (np.int8, -128, 128),
                             (np.int64, -2 ** 63, 2 ** 63), (np.uint64, 0, 2 ** 64)]:
        k = values(rng.integers(low, high, n, dtype=dtype))
        assert k.dtype == dtype and k.min() >= low and k.max() <= high - 1
        if high - low <= 256:  # every value, about equally often
            counts = np.bincount((k.astype(np.int64) - low), minlength=high - low)
            assert counts.min() > 0.8 * n / (high - low)
    assert set(values(rng.integers(1, 3, 1000, endpoint=True)).tolist()) == {1, 2, 3}
    assert values(rng.integers(0, 2, 10, dtype=bool)).dtype == np.bool_
    spread = values(rng.integers(np.zeros(4), np.array([1, 10, 100, 1000]), (1000, 4)))
    assert (spread >= 0).all() and (spread.max(axis=0) < [1, 10, 100, 1000]).all()


def test_permutations_shuffles_and_choices(backend):
    rng = lf.random.default_rng(5)
    perm = values(rng.permutation(100))
    assert sorted(perm.tolist()) == list(range(100)) and perm.tolist() != list(range(100))
    rows = np.arange(12).reshape(4, 3)
    shuffled = values(rng.permutation(rows))
    assert sorted(map(tuple, shuffled.tolist())) == sorted(map(tuple, rows.tolist()))
    columns = values(rng.permutation(rows, axis=1))
    assert (np.sort(columns, axis=1) == rows).all()
    x = lf.asarray(np.arange(50.0))
    rng.shuffle(x)
    assert sorted(values(x).tolist()) == list(range(50))
    host = np.arange(20)
    rng.shuffle(host)
    assert sorted(host.tolist()) == list(range(20))
    drawn = values(rng.choice(5, 10_000))
    assert set(drawn.tolist()) == set(range(5))
    unique = values(rng.choice(np.arange(10.0) * 2, (2, 3), replace=False))
    assert len(set(unique.ravel().tolist())) == 6
    weighted = values(rng.choice(3, 30_000, p=[0.2, 0.0, 0.8]))
    freq = np.bincount(weighted, minlength=3) / weighted.size
    assert abs(freq[0] - 0.2) < 0.01 and freq[1] == 0 and abs(freq[2] - 0.8) < 0.01


def test_draws_stay_lazy_and_fuse_with_their_consumers():
    with lf.use("cpu"):
        rng = lf.random.default_rng(0)
        before = lf.stats()["evaluations"]
        square_mean = (rng.standard_normal(1_000_000) ** 2).mean()
        assert lf.stats()["evaluations"] == before
        plan = square_mean.explain()
        assert "source" not in plan  # generated in the kernel: nothing uploaded
        assert abs(square_mean.item() - 1.0) < 0.01


def test_bad_arguments_raise():
    rng = lf.random.default_rng(1)
    with pytest.raises(ValueError):
        lf.random.default_rng(-1)
    with pytest.raises(ValueError, match="low >= high"):
        rng.integers(5, 5)
    with pytest.raises(ValueError, match="out of bounds"):
        rng.integers(0, 300, dtype=np.uint8)
    with pytest.raises(TypeError):
        rng.random(3, dtype=np.int32)
    with pytest.raises(TypeError):
        rng.integers(0, 3, dtype=np.float64)
    with pytest.raises(ValueError, match="scale < 0"):
        rng.normal(0, -1.0)
    with pytest.raises(ValueError, match="larger sample"):
        rng.choice(3, 5, replace=False)
    with pytest.raises(ValueError, match="negative dimensions"):
        rng.random((-1, 2))


def test_random_state_has_numpys_legacy_methods():
    a, b = lf.random.RandomState(5), lf.random.RandomState(5)
    np.testing.assert_array_equal(values(a.rand(3, 2)), values(b.rand(3, 2)))
    assert values(a.randn(4)).shape == (4,)
    drawn = values(a.randint(2, 5, size=1000))
    assert drawn.min() >= 2 and drawn.max() <= 4
    inclusive = values(a.random_integers(3, size=1000))
    assert set(inclusive.tolist()) == {1, 2, 3}
    assert values(a.random_sample((2, 2))).shape == (2, 2)
    assert values(a.poisson(2.0, 10)).dtype == np.int64  # every distribution too
    a.seed(5)
    b.seed(5)
    np.testing.assert_array_equal(values(a.rand(4)), values(b.rand(4)))
    with pytest.raises(ValueError, match="counters"):
        a.get_state()
    lf.random.seed(9)
    first = values(lf.random.random_integers(1, 6, 20))
    lf.random.seed(9)
    np.testing.assert_array_equal(values(lf.random.random_integers(1, 6, 20)), first)
