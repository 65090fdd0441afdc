"""Products and linear algebra of complex arrays against NumPy: ``dot``,
the ``vecdot``/``matvec``/``vecmat`` ufuncs (NumPy conjugates the first
vector of ``vecdot`` and ``vecmat``), and the solvers computed in NumPy,
whose complex results stay complex."""

import numpy as np
import pytest

import lazyfuse as lf

RNG = np.random.default_rng(7)


def _complex(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


M = _complex(3, 3)
V = _complex(3)


@pytest.mark.parametrize("a, b", [(M, M), (M, V), (V, V), (V, M), (M, M.real), (M.real, V),
                                  (2 - 1j, V), (_complex(2, 3, 3), _complex(3, 2))])
def test_dot_of_complex_operands_matches_numpy(backend, a, b):
    lazy = [lf.asarray(x) if isinstance(x, np.ndarray) else x for x in (a, b)]
    for got in (lf.dot(*lazy), np.dot(*lazy)):
        np.testing.assert_allclose(np.asarray(got), np.dot(a, b), rtol=1e-12)
        assert np.asarray(got).dtype == np.complex128


@pytest.mark.parametrize("name, a, b", [("vecdot", M, M), ("vecdot", V, M), ("matvec", M, V),
                                        ("vecmat", V, M), ("vecmat", V, M.real)])
def test_vector_ufuncs_of_complex_operands_conjugate_as_numpy(backend, name, a, b):
    ufunc = getattr(np, name)
    want = ufunc(a, b)
    for got in (getattr(lf, name)(lf.asarray(a), lf.asarray(b)),
                ufunc(lf.asarray(a), lf.asarray(b))):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


def test_solvers_of_complex_matrices_stay_complex_where_values_are_real():
    # solve(A, A) is the identity: complex in NumPy although every value is real.
    a = lf.asarray(M)
    for name, got, want in [("solve", lf.linalg.solve(a, a), np.linalg.solve(M, M)),
                            ("inv", lf.linalg.inv(a) @ a, np.linalg.inv(M) @ M)]:
        values = np.asarray(got)
        assert values.dtype == np.complex128, name
        np.testing.assert_allclose(values, want, atol=1e-12)


def test_eigenvalues_of_a_real_matrix_with_real_values_are_real():
    # NumPy 2.4's (and lazyfuse's) eigvals of a real matrix whose values
    # are real: float64, whatever NumPy 2.5 gives.
    symmetric = np.array([[2.0, 1.0], [1.0, 3.0]])
    got = np.asarray(lf.linalg.eigvals(lf.asarray(symmetric)))
    assert got.dtype == np.float64
    np.testing.assert_allclose(np.sort(got), np.sort(np.linalg.eigvalsh(symmetric)))
    # Of a complex Hermitian matrix they stay complex.
    hermitian = M + M.conj().T
    assert np.asarray(lf.linalg.eigvals(lf.asarray(hermitian))).dtype == np.complex128
