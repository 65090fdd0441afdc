"""``lazyfuse.linalg`` against NumPy's ``linalg``: every norm order over
vectors and matrices, axes, ``keepdims``, dtypes, through ``lf.linalg``
and through ``np.linalg`` on lazy arrays, on cpu and sim."""

import numpy as np
import pytest

import lazyfuse as lf

RNG = np.random.default_rng(3)
M = RNG.standard_normal((4, 5))
T = RNG.standard_normal((2, 3, 4)).astype(np.float32)
I = RNG.integers(-4, 5, (6,)).astype(np.int32)


def check(got, want):
    assert isinstance(got, lf.Array), type(got)
    value, want = np.asarray(got), np.asarray(want)
    assert (value.dtype, value.shape) == (want.dtype, want.shape)
    np.testing.assert_allclose(value, want, rtol=2e-6 if want.dtype == np.float32 else 1e-12)


CASES = [
    (M, {}), (T, {}), (I, {}), (M, {"keepdims": True}),
    *[(I, {"ord": o}) for o in (None, 0, 1, 2, 3, 0.5, -1, np.inf, -np.inf)],
    *[(M, {"ord": o}) for o in (None, "fro", 1, -1, np.inf, -np.inf, 2, -2, "nuc")],
    *[(M, {"ord": o, "axis": 1}) for o in (None, 1, 4, np.inf)],
    (T, {"axis": (0, 2)}), (T, {"axis": (2, 1), "ord": 1}), (T, {"axis": -1, "keepdims": True}),
    (T, {"axis": (0, 1), "ord": -np.inf, "keepdims": True}), (T, {"axis": (1, 2), "ord": "nuc"}),
]


@pytest.mark.parametrize("values, options", CASES, ids=[f"{i}" for i in range(len(CASES))])
def test_norm_is_numpys(backend, values, options):
    want = np.linalg.norm(values, **options)
    check(lf.linalg.norm(values, **options), want)
    check(np.linalg.norm(lf.asarray(values), **options), want)  # __array_function__


def test_vector_and_matrix_norms_and_products(backend):
    check(lf.linalg.vector_norm(T, axis=(0, 1), ord=3), np.linalg.vector_norm(T, axis=(0, 1), ord=3))
    check(lf.linalg.vector_norm(M), np.linalg.vector_norm(M))
    check(lf.linalg.matrix_norm(T, ord=np.inf), np.linalg.matrix_norm(T, ord=np.inf))
    check(np.linalg.matrix_norm(lf.asarray(T), keepdims=True), np.linalg.matrix_norm(T, keepdims=True))
    check(lf.linalg.vecdot(M, M[0]), np.linalg.vecdot(M, M[0]))
    check(lf.linalg.matmul(M, M.T), np.linalg.matmul(M, M.T))
    check(lf.linalg.outer(M[0], M[1]), np.linalg.outer(M[0], M[1]))
    check(lf.linalg.tensordot(T, T, axes=3), np.asarray(np.linalg.tensordot(T, T, axes=3)))
    inverse = np.linalg.inv(lf.asarray(M[:4, :4]))  # LAPACK on computed values, given back
    assert isinstance(inverse, lf.Array)
    np.testing.assert_allclose(inverse, np.linalg.inv(M[:4, :4]))


def test_bad_norms_raise_as_numpys():
    with pytest.raises(ValueError, match="invalid norm order 'fro' for vectors"):
        lf.linalg.norm(I, "fro")
    with pytest.raises(ValueError, match="improper number of dimensions"):
        lf.linalg.norm(T, 1)
    with pytest.raises(ValueError, match="invalid norm order"):
        lf.linalg.norm(M, 3)
    with pytest.raises(ValueError, match="duplicate axes"):
        lf.linalg.norm(M, axis=(1, 1))


@pytest.mark.parametrize("name, operands", [
    ("inv", ("M",)), ("pinv", ("M",)), ("solve", ("M", "b")), ("det", ("M",)),
    ("slogdet", ("M",)), ("lstsq", ("M", "b")), ("matrix_rank", ("M",)), ("cond", ("M",)),
    ("svd", ("M",)), ("svdvals", ("M",)), ("qr", ("M",)), ("cholesky", ("S",)),
    ("eigh", ("S",)), ("eigvalsh", ("S",)),
])
def test_decompositions_and_solvers_are_numpys_as_lazyfuse_arrays(name, operands):
    rng = np.random.default_rng(0)
    M = rng.random((4, 4)) + 3 * np.eye(4)
    values = {"M": M, "b": rng.random(4), "S": M @ M.T}
    mine = getattr(lf.linalg, name)(*(lf.asarray(values[o]) for o in operands))
    theirs = getattr(np.linalg, name)(*(values[o] for o in operands))
    parts = (lambda r: list(r) if isinstance(r, tuple) else [r])
    for m, t in zip(parts(mine), parts(theirs)):
        if isinstance(t, np.ndarray) and t.ndim:
            assert isinstance(m, lf.Array), (name, type(m))
        np.testing.assert_allclose(np.asarray(m), t, rtol=1e-10, atol=1e-12)
    if hasattr(theirs, "_fields"):
        assert type(mine).__name__ == type(theirs).__name__ and mine._fields == theirs._fields


def test_matrix_power_and_multi_dot_are_lazy_products():
    rng = np.random.default_rng(1)
    M = rng.random((5, 5)) + 2 * np.eye(5)
    before = lf.stats()["evaluations"]
    power = lf.linalg.matrix_power(lf.asarray(M), 5)
    A, B, C, v = rng.random((10, 100)), rng.random((100, 5)), rng.random((5, 50)), rng.random(50)
    chain = lf.linalg.multi_dot([A, B, C, v])
    assert lf.stats()["evaluations"] == before
    np.testing.assert_allclose(np.asarray(power), np.linalg.matrix_power(M, 5))
    np.testing.assert_allclose(np.asarray(chain), np.linalg.multi_dot([A, B, C, v]))
    for n in (0, 1, -2):
        np.testing.assert_allclose(np.asarray(lf.linalg.matrix_power(M, n)),
                                   np.linalg.matrix_power(M, n))
    np.testing.assert_allclose(np.asarray(lf.linalg.multi_dot([A[0], B, C])),
                               np.linalg.multi_dot([A[0], B, C]))
    np.testing.assert_allclose(np.asarray(np.linalg.multi_dot([lf.asarray(A), B])), A @ B)
    with pytest.raises(ValueError, match="square"):
        lf.linalg.matrix_power(np.ones((2, 3)), 2)
    with pytest.raises(ValueError, match="at least two"):
        lf.linalg.multi_dot([A])


def test_complex_results_are_complex_arrays():
    rotation = np.array([[0.0, -1.0], [1.0, 0.0]])
    values, vectors = lf.linalg.eig(rotation)
    want_values, want_vectors = np.linalg.eig(rotation)
    assert isinstance(values, lf.ComplexArray) and isinstance(vectors, lf.ComplexArray)
    np.testing.assert_allclose(np.asarray(values), want_values)
    np.testing.assert_allclose(np.asarray(vectors), want_vectors)
    # A complex lazy argument is computed for LAPACK too.
    np.testing.assert_allclose(np.asarray(lf.linalg.inv(lf.asarray(rotation * 1j))),
                               np.linalg.inv(rotation * 1j))
    np.testing.assert_allclose(np.asarray(lf.linalg.eigvals(np.diag([1.0, 2.0]))), [1.0, 2.0])
    assert lf.linalg.LinAlgError is np.linalg.LinAlgError
    with pytest.raises(np.linalg.LinAlgError):
        lf.linalg.inv(np.zeros((2, 2)))
