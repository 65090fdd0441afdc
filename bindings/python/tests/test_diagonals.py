"""Diagonals (``diagonal``, ``trace``, ``diag``, ``diagflat``,
``fill_diagonal``) and the two-output ufuncs (``modf`` lazily, others
computed) against NumPy."""

import numpy as np
import pytest

import lazyfuse as lf

A = np.arange(60, dtype=np.float32).reshape(3, 4, 5)


def check(got, want):
    assert isinstance(got, lf.Array), type(got)
    value = np.asarray(got)
    assert (value.dtype, value.shape) == (want.dtype, want.shape)
    np.testing.assert_array_equal(value, want)
    np.testing.assert_array_equal(np.signbit(value), np.signbit(want))  # -0.0 too


@pytest.mark.parametrize("offset", [-4, -1, 0, 2, 6])
@pytest.mark.parametrize("axes", [(0, 1), (1, 2), (2, 0), (-1, -2)])
def test_diagonal_and_trace_are_numpys(backend, offset, axes):
    x = lf.asarray(A)
    check(np.diagonal(x, offset, *axes), np.diagonal(A, offset, *axes))
    check(x.diagonal(offset, *axes), A.diagonal(offset, *axes))
    check(np.trace(x, offset, *axes), np.trace(A, offset, *axes))
    check(np.trace(x * 2, offset, *axes, dtype=np.int64), np.trace(A * 2, offset, *axes, dtype=np.int64))


@pytest.mark.parametrize("k", [-3, 0, 2])
def test_diag_diagflat_and_fill_diagonal_are_numpys(backend, k):
    v = np.arange(1, 5, dtype=np.int16)
    check(np.diag(lf.asarray(v), k), np.diag(v, k))
    check(lf.diag(lf.asarray(A[1]), k), np.diag(A[1], k))
    check(lf.diagflat(lf.asarray(v.reshape(2, 2)), k), np.diagflat(v.reshape(2, 2), k))
    for shape, wrap in [((5, 3), False), ((7, 3), True), ((3, 6), False), ((3, 3, 3), False)]:
        want = np.zeros(shape)
        got = lf.asarray(want)
        np.fill_diagonal(want, [k, 7], wrap)
        np.fill_diagonal(got, [k, 7], wrap)
        check(got, want)


def test_modf_is_lazy_and_numpys(backend):
    values = np.array([-3.5, -3.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 2.25, 1e300])
    x = lf.asarray(values) * 1
    fraction, whole = np.modf(x)
    assert not fraction._a.is_materialized
    for got, want in zip((fraction, whole), np.modf(values)):
        check(got, want)
    for dtype in (np.int8, np.int32, np.float32, np.bool_):
        ints = np.arange(-2, 3).astype(dtype)
        for got, want in zip(lf.modf(lf.asarray(ints)), np.modf(ints)):
            check(got, want)
    out = (np.empty(9), np.empty(9))
    np.modf(x, out=out)
    np.testing.assert_array_equal(out[0], np.modf(values)[0])


def test_other_two_output_ufuncs_run_on_computed_values(backend):
    values = np.array([3.0, 0.1, -0.0, 1e-310])
    for got, want in zip(np.frexp(lf.asarray(values)), np.frexp(values)):
        check(got, want)


def test_bad_diagonals_raise():
    with pytest.raises(lf.ArgumentError, match="at least 2 axes"):
        np.diagonal(lf.asarray(np.arange(3)))
    with pytest.raises(lf.ArgumentError, match="cannot be the same"):
        np.diagonal(lf.asarray(A), 0, 1, 1)
    with pytest.raises(lf.AxisError):
        np.trace(lf.asarray(A), 0, 0, 3)
    with pytest.raises(lf.ArgumentError, match="1 or 2 axes"):
        lf.diag(lf.asarray(A))
    with pytest.raises(lf.ArgumentError, match="equal length"):
        np.fill_diagonal(lf.asarray(A), 1)
