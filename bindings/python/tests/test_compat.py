"""The thin NumPy functions of `_compat` against NumPy: conversions,
questions that compute nothing, the complex helpers on real arrays,
rounding and infinities, NaN-skipping running sums, ``unwrap``, index
arithmetic, ``rollaxis``, ``resize``, ``compress``/``extract``, ``vdot``,
the ``*_like`` constructors, ``choose``, ``lexsort``, ``piecewise``,
``block`` and the other joins, ``place``."""

import numpy as np
import pytest

import lazyfuse as lf
from numpy_versions import numpy_function

RNG = np.random.default_rng(13)
X = RNG.standard_normal((3, 4, 5)) * 3
XI = np.array([-np.inf, -2.5, 0.0, np.nan, 1.5, np.inf])
N = X.copy()
N[0, 1, ::2] = np.nan
I = RNG.integers(-5, 10, (4, 6)).astype(np.int32)
PHASE = np.cumsum(RNG.uniform(-2, 2, (3, 40)), axis=1)


def check(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            check(g, w)
        return
    want = np.asarray(want)
    assert isinstance(got, lf.Array), type(got)
    value = np.asarray(got)
    assert (value.dtype, value.shape) == (want.dtype, want.shape), (value.dtype, value.shape, want.dtype, want.shape)
    np.testing.assert_allclose(value, want, rtol=1e-12, atol=1e-12, equal_nan=True)


CASES = [
    ("asanyarray", (X,), {}), ("ascontiguousarray", (I,), {}), ("ascontiguousarray", (3.0,), {}),
    ("real", (X,), {}), ("imag", (I,), {}), ("conj", (X,), {}), ("conjugate", (I,), {}),
    ("angle", (XI[np.isfinite(XI)],), {}), ("angle", (I,), {"deg": True}),
    ("fix", (X,), {}), ("fix", (I,), {}), ("isposinf", (XI,), {}), ("isneginf", (XI,), {}),
    ("sinc", (X,), {}), ("sinc", (np.array([0.0, 0.5, -1.0]),), {}),
    ("nancumsum", (N,), {}), ("nancumsum", (N,), {"axis": 2}), ("nancumprod", (N[0],), {"axis": 0}),
    ("unwrap", (PHASE,), {}), ("unwrap", (PHASE,), {"axis": 0}), ("unwrap", (PHASE,), {"period": 6.0}),
    ("unwrap", (PHASE,), {"discont": 4.0}),
    ("ravel_multi_index", (([1, 2, 0], [3, 0, 5]), (3, 6)), {}),
    ("ravel_multi_index", (([4, -1], [7, 2]), (3, 6)), {"mode": "wrap"}),
    ("ravel_multi_index", (([4, -1], [7, 2]), (3, 6)), {"mode": "clip"}),
    ("unravel_index", ([22, 41, 6], (7, 6)), {}), ("unravel_index", (17, (3, 4, 5)), {}),
    ("indices", ((2, 3),), {}), ("indices", ((2, 3, 4),), {"sparse": True}),
    ("tril_indices", (4,), {}), ("triu_indices", (4, 1, 5), {}), ("diag_indices", (3,), {}),
    ("rollaxis", (X, 2), {}), ("rollaxis", (X, 0, 3), {}), ("rollaxis", (X, -1, 1), {}),
    ("resize", (I, (5, 7)), {}), ("resize", (X[0, 0], 12), {}), ("resize", (I, (0, 3)), {}),
    ("compress", ([True, False, True], X), {"axis": 0}), ("compress", ([0, 1, 1, 0], I), {"axis": 1}),
    ("compress", (I.reshape(-1) > 3, I), {}), ("extract", (I > 2, I), {}),
    ("vdot", (X, X), {}), ("vdot", (I, I[::-1]), {}),
    ("zeros_like", (X,), {}), ("ones_like", (I,), {"dtype": np.float32}),
    ("empty_like", (I,), {"shape": (2, 3)}), ("full_like", (X, 7), {"order": "K"}),
    ("isreal", (X,), {}), ("iscomplex", (I,), {}), ("real_if_close", (X,), {}),
    ("asarray_chkfinite", (X,), {}), ("tril_indices_from", (I,), {"k": 1}),
    ("triu_indices_from", (I,), {}), ("diag_indices_from", (X[:, :3, :3],), {}),
    ("choose", (np.abs(I) % 3, [I, -I, 10 * I]), {}), ("choose", (I, [X[0, 0, :1], 2.5]), {"mode": "clip"}),
    ("choose", (I, [1, 2, 3]), {"mode": "wrap"}),
    ("lexsort", ((I[0] % 3, I[1] % 2),), {}), ("lexsort", (I % 4,), {}),
    ("lexsort", ((X[0] > 0, X[1].round()),), {"axis": 0}),
    ("piecewise", (X, [X < 0, X > 1], [lambda t: -t, 9.0]), {}),
    ("piecewise", (X, [X < 0], [lambda t: t * 2, lambda t: t + 1]), {}),
    ("matrix_transpose", (X,), {}), ("unstack", (X,), {"axis": 1}), ("row_stack", ([I, I],), {}),
    ("block", ([[I, I], [I, I]],), {}), ("block", ([X[0], X[1]],), {}),
    ("block", ([[X[0, :2]], [X[1]]],), {}), ("block", ([[I[:, :2], np.ones((4, 1), np.int8)]],), {}),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{c[0]}" for i, c in enumerate(CASES)])
def test_functions_are_numpys(backend, case):
    name, args, kwargs = case
    want = numpy_function(name)(*args, **kwargs)
    got = getattr(lf, name)(*args, **kwargs)
    check(got, tuple(want) if isinstance(want, (tuple, list)) else want)
    # (NumPy's conversions do not dispatch to lazy arrays' functions.)
    if any(isinstance(a, np.ndarray) for a in args) and hasattr(np, name) and name not in (
            "ascontiguousarray", "asanyarray", "asarray_chkfinite"):
        lazy = tuple(lf.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
        got = getattr(np, name)(*lazy, **kwargs)  # __array_function__
        check(got, tuple(want) if isinstance(want, (tuple, list)) else want)


def test_what_numpy_2_deprecated_warns_as_there():
    # NumPy 2.5 removed both; lazyfuse keeps them, warning as NumPy 2.0 did.
    with pytest.warns(DeprecationWarning, match="row_stack"):
        lf.row_stack([I, I])
    with pytest.warns(DeprecationWarning, match="2-dimensional vectors"):
        z = lf.cross(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    assert float(z) == -2.0


def test_lazy_coordinates_and_questions_compute_nothing(backend):
    x = lf.asarray(X) + 1
    before = lf.stats()["evaluations"]
    assert not np.iscomplexobj(x) and np.isrealobj(x)
    assert np.broadcast_shapes((3, 1), (4,)) == (3, 4)
    assert not np.shares_memory(x, x) and not np.may_share_memory(x, X)
    rows, cols = lf.unravel_index(lf.asarray(np.array([22, 41, 6])) + 0, (7, 6))
    flat = lf.ravel_multi_index((rows, cols), (7, 6))
    assert lf.stats()["evaluations"] == before  # all lazy so far
    np.testing.assert_array_equal(np.asarray(flat), [22, 41, 6])


def test_the_likes_compute_nothing_and_in_place_functions_write_lazy_arrays(backend):
    x = lf.asarray(X) + 1
    before = lf.stats()["evaluations"]
    likes = [np.zeros_like(x), np.ones_like(x, dtype=np.int8), np.empty_like(x), np.full_like(x, 3)]
    assert all(isinstance(a, lf.Array) for a in likes)
    rows = np.tril_indices_from(x[0])
    assert lf.stats()["evaluations"] == before
    check(likes[3], np.full_like(X, 3))
    check(rows[1], np.tril_indices_from(X[0])[1])
    y, want = lf.asarray(I) * 1, I.copy()
    np.place(y, I > 2, [7, 8])
    np.place(want, I > 2, [7, 8])
    check(y, want)
    assert np.array_equiv(lf.asarray(I[:1]), np.vstack([I[:1], I[:1]])) is True
    assert np.array_equiv(lf.asarray(I), I[:2]) is False
    with pytest.raises(ValueError, match="infs or NaNs"):
        np.asarray_chkfinite(lf.asarray(N))
    with pytest.raises(ValueError, match="invalid entry in choice array"):
        np.choose(lf.asarray(I), [I, I])
    with pytest.raises(ValueError, match="depths are mismatched"):
        lf.block([I, [I]])


def test_copyto_writes_lazy_and_numpy_destinations(backend):
    dst = lf.asarray(I) * 1
    np.copyto(dst, 7, where=I > 2)
    want = I.copy()
    np.copyto(want, 7, where=I > 2)
    check(dst, want)
    out = np.zeros((4, 6))
    lf.copyto(out, lf.asarray(I) * 2)
    np.testing.assert_array_equal(out, I * 2)
    with pytest.raises(TypeError):
        lf.copyto(lf.asarray(I) * 1, X[0, :1, :1] + 0.5, casting="safe")  # float into int32
