"""Whole programs written as NumPy users write them, on lazyfuse arrays
through NumPy's own functions, against NumPy on every backend; and
`lazyfuse.compute`, which demands several results as one program."""

import numpy as np
import pytest

import lazyfuse as lf

A = (0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429)


def black_scholes(S, X, T, r=0.02, v=0.3):
    def cnd(d):
        k = 1.0 / (1.0 + 0.2316419 * np.abs(d))
        poly = k * (A[0] + k * (A[1] + k * (A[2] + k * (A[3] + k * A[4]))))
        w = 1.0 - 0.3989422804014327 * np.exp(-0.5 * d * d) * poly
        return np.where(d < 0, 1.0 - w, w)
    sqrt_t = np.sqrt(T)
    d1 = (np.log(S / X) + (r + 0.5 * v * v) * T) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    exp_rt = np.exp(-r * T)
    cnd1, cnd2 = cnd(d1), cnd(d2)
    return S * cnd1 - X * exp_rt * cnd2, X * exp_rt * (1.0 - cnd2) - S * (1.0 - cnd1)


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True),)


def standardise(x):
    return ((x - x.mean(axis=0)) / x.std(axis=0),)


def kmeans_assign(p, c):
    return (((p[:, None, :] - c[None]) ** 2).sum(-1).argmin(1),)


def logsumexp(x):
    m = x.max(axis=1)
    return (m + np.log(np.exp(x - m[:, None]).sum(axis=1)),)


def layer_norm(x, g, b):
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return ((x - mean) / np.sqrt(var + 1e-5) * g + b,)


def heat_step(u):
    inner = u[1:-1, 1:-1]
    return (inner + 0.1 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                           - 4.0 * inner),)


def masked_mean(x):
    keep = x > 0.25
    return (np.where(keep, x, 0.0).sum() / keep.sum(),)


def pairwise(a, b):
    return (np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)),)


def _inputs(rng):
    f = np.float32
    return {
        black_scholes: (rng.uniform(5, 30, 999).astype(f), rng.uniform(1, 100, 999).astype(f),
                        rng.uniform(0.25, 10, 999).astype(f)),
        softmax: (rng.standard_normal((7, 300)).astype(f),),
        standardise: (rng.standard_normal((200, 9)).astype(f),),
        kmeans_assign: (rng.standard_normal((300, 8)).astype(f),
                        rng.standard_normal((16, 8)).astype(f)),
        logsumexp: (rng.standard_normal((5, 257)),),
        layer_norm: (rng.standard_normal((6, 64)).astype(f), rng.standard_normal(64).astype(f),
                     rng.standard_normal(64).astype(f)),
        heat_step: (rng.standard_normal((33, 20)).astype(f),),
        masked_mean: (rng.uniform(-1, 1, 1001).astype(f),),
        pairwise: (rng.standard_normal((20, 8)), rng.standard_normal((30, 8))),
    }


PROGRAMS = list(_inputs(np.random.default_rng(0)))


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_programs_agree_with_numpy(backend, program):
    args = _inputs(np.random.default_rng(1))[program]
    want = program(*args)
    got = lf.compute(*program(*[lf.asarray(a) for a in args]))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert isinstance(g, np.ndarray)
        assert g.dtype == np.asarray(w).dtype and g.shape == np.shape(w)
        if program is kmeans_assign:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)


def test_black_scholes_call_and_put_are_one_launch_on_a_device():
    S, X, T = _inputs(np.random.default_rng(2))[black_scholes]
    with lf.use("sim") as cx:
        lazy = [lf.asarray(a) for a in (S, X, T)]
        call, put = black_scholes(*lazy)
        before = cx.stats()
        got_call, got_put = lf.compute(call, put)
        after = cx.stats()
    assert after["kernel_launches"] - before["kernel_launches"] == 1
    # Three inputs and two results: no buffer for a shared value.
    assert after["device_allocations"] - before["device_allocations"] == 5
    want_call, want_put = black_scholes(S, X, T)
    np.testing.assert_allclose(got_call, want_call, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(got_put, want_put, rtol=1e-5, atol=1e-4)


def test_reading_call_then_put_computes_the_shared_work_once(backend):
    # `np.asarray(call)` keeps what `put` still reads and is costly to
    # compute again (cnd(d1), cnd(d2), exp(-rT)): `put` then computes no
    # logarithm and no exponential.
    S, X, T = _inputs(np.random.default_rng(4))[black_scholes]
    with lf.use(backend):
        call, put = black_scholes(*(lf.asarray(a) for a in (S, X, T)))
        assert "= log(" in put.explain()
        got_call = np.asarray(call)
        listing = put.explain()
        assert "= log(" not in listing and "= exp(" not in listing, listing
        got_put = np.asarray(put)
    want_call, want_put = black_scholes(S, X, T)
    np.testing.assert_allclose(got_call, want_call, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(got_put, want_put, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("program", [softmax, layer_norm])
def test_softmax_and_layer_norm_are_one_launch_on_a_device(program):
    # A row program: the reductions and the work reading them back over
    # the rows are one kernel, a block per row.
    args = _inputs(np.random.default_rng(3))[program]
    with lf.use("sim") as cx:
        lazy = [lf.asarray(a) for a in args]
        before = cx.stats()
        (got,) = lf.compute(*program(*lazy))
        after = cx.stats()
    assert after["kernel_launches"] - before["kernel_launches"] == 1
    (want,) = program(*args)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


def test_compute_passes_other_arguments_through(backend):
    x = lf.asarray(np.arange(4.0))
    doubled, total, plain, number = lf.compute(x * 2, x.sum(), np.ones(2), 3)
    np.testing.assert_array_equal(doubled, [0.0, 2.0, 4.0, 6.0])
    assert total.shape == () and total == 6.0
    np.testing.assert_array_equal(plain, [1.0, 1.0])
    assert number == 3
    assert lf.compute() == ()
    # The same array twice, a computed one, a bool one: each comes back.
    y = x + 1
    y.eval()
    again, kept, mask = lf.compute(y, y, x > 1)
    np.testing.assert_array_equal(again, kept)
    np.testing.assert_array_equal(mask, [False, False, True, True])
    # Results are new arrays of their own: writing one changes nothing else.
    first, second = lf.compute(x * 1, x * 1)
    first[0] = 99.0
    np.testing.assert_array_equal(second, [0.0, 1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(x), [0.0, 1.0, 2.0, 3.0])


def test_compute_of_arrays_of_two_contexts():
    with lf.use("cpu"):
        a = lf.asarray(np.arange(3.0)) + 1
    with lf.use("sim"):
        b = lf.asarray(np.arange(3.0)) * 2
    got_a, got_b = lf.compute(a, b)
    np.testing.assert_array_equal(got_a, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(got_b, [0.0, 2.0, 4.0])
