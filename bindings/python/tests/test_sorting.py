"""``sort``, ``ndarray.sort``, ``argsort``, ``median``, ``unique``,
``searchsorted``, ``digitize`` and ``interp`` against NumPy: every axis,
NaNs (sorted last; a median with one is NaN), ties (argsort is stable),
both sides, several dtypes."""

import numpy as np
import pytest

import lazyfuse as lf

RNG = np.random.default_rng(7)
A = RNG.normal(size=(4, 5, 6))
A[1, 2, 3] = A[3, 0, 0] = np.nan
INTS = RNG.integers(-20, 20, (6, 7)).astype(np.int32)


def check(got, want):
    assert isinstance(got, lf.Array), type(got)
    value = np.asarray(got)
    assert (value.dtype, value.shape) == (want.dtype, want.shape)
    np.testing.assert_array_equal(value, want)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_sort_and_median_are_numpys(backend, axis):
    for values in (A, A.astype(np.float32), INTS if axis != 1 else INTS.T, np.abs(A) > 1):
        x = lf.asarray(values)
        check(np.sort(x, axis=axis), np.sort(values, axis=axis))
        check(lf.sort(x * 1, axis=axis), np.sort(values * 1, axis=axis))
        if values.dtype != np.bool_:
            check(np.median(x, axis=axis), np.median(values, axis=axis))
    check(np.median(lf.asarray(A), axis=(0, 2), keepdims=True), np.median(A, axis=(0, 2), keepdims=True))


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_argsort_is_numpys_stable_argsort(backend, axis):
    ties = RNG.integers(0, 4, (5, 8)).astype(np.float32)  # many equal values
    ties[2, 3] = np.nan
    for values in (A, ties, INTS if axis != 1 else INTS.T, np.abs(A) > 1):
        x = lf.asarray(values)
        want = np.argsort(values, axis=axis, kind="stable")
        check(np.argsort(x, axis=axis), want)
        check(x.argsort(axis=axis), want)
        check(lf.argsort(x + 0 if values.dtype != np.bool_ else x, axis=axis, kind="quicksort"), want)
    # Sorted by its own positions: the sorted array.
    x = lf.asarray(A[0])
    for axis in (0, 1, None):
        order = lf.argsort(x, axis=axis)  # lazy positions: one fused gather
        check(np.take_along_axis(x, order, axis=axis), np.sort(A[0], axis=axis))
    positions = np.argsort(A[0], axis=0)
    check(lf.take_along_axis(x, positions[:2], axis=0), np.take_along_axis(A[0], positions[:2], axis=0))
    y, want = lf.asarray(A[0]) * 1, A[0].copy()
    np.put_along_axis(want, positions[:1], -1.0, axis=0)
    np.put_along_axis(y, positions[:1], -1.0, axis=0)
    check(y, want)
    with pytest.raises(ValueError, match="same number of dimensions"):
        lf.take_along_axis(x, positions[0], axis=0)


def test_the_sort_method_sorts_in_place(backend):
    x = lf.asarray(A[0])
    view = x[1:3]
    x.sort(axis=0)
    check(x, np.sort(A[0], axis=0))
    check(view, np.sort(A[0], axis=0)[1:3])  # views see the write


def test_unique_is_numpys(backend):
    values = np.array([3, 1, 3, 0, 1, 7, 0], dtype=np.int16)
    check(np.unique(lf.asarray(values)), np.unique(values))
    with_nans = np.array([np.nan, 1.5, np.nan, -0.5, 1.5])
    check(lf.unique(lf.asarray(with_nans)), np.unique(with_nans))
    got = np.unique(lf.asarray(values), return_counts=True)  # computed in NumPy
    for g, w in zip(got, np.unique(values, return_counts=True)):
        check(g, w)
    check(lf.unique(lf.asarray(np.zeros(0))), np.unique(np.zeros(0)))


def test_bad_sorts_raise():
    with pytest.raises(lf.AxisError):
        np.sort(lf.asarray(A), axis=3)
    with pytest.raises(lf.ArgumentError, match="no fields"):
        np.sort(lf.asarray(A), order="x")


def test_the_median_of_nothing_is_nan():
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        want = np.median(np.zeros((0, 3), np.float32), axis=0)
    check(np.median(lf.asarray(np.zeros((0, 3), np.float32)), axis=0), want)


SORTED = np.array([-3.0, -1.0, 0.0, 0.0, 2.5, 7.0, 7.0, np.nan])
PROBES = np.array([[0.0, 7.0, -9.0], [2.0, np.nan, 100.0]])


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_and_digitize_are_numpys(backend, side):
    a = lf.asarray(SORTED)
    want = np.searchsorted(SORTED, PROBES, side=side)
    check(lf.searchsorted(a, PROBES, side=side), want)
    check(np.searchsorted(a, lf.asarray(PROBES), side=side), want)
    check(a.searchsorted(PROBES * 1, side=side), want)
    check(lf.searchsorted(a, 2.5, side=side), np.asarray(np.searchsorted(SORTED, 2.5, side=side)))
    shuffled = np.array([7.0, -1.0, 2.5, -3.0])
    sorter = np.argsort(shuffled)
    check(lf.searchsorted(shuffled, [0.0, 7.0], side=side, sorter=sorter),
          np.searchsorted(shuffled, [0.0, 7.0], side=side, sorter=sorter))
    check(lf.searchsorted(INTS[0] * 0 + np.arange(7), [2, 2.5], side=side),
          np.searchsorted(np.arange(7, dtype=np.int32), [2, 2.5], side=side))
    right = side == "right"
    for bins in (np.array([0.0, 1.0, 2.5, 4.0]), np.array([4.0, 2.5, 1.0, 0.0])):
        x = np.array([-1.0, 0.0, 1.0, 3.0, 4.0, 9.0])
        check(lf.digitize(x, bins, right=right), np.digitize(x, bins, right=right))


def test_interp_is_numpys(backend):
    xp = np.array([0.0, 1.0, 1.5, 4.0])
    fp = np.array([2.0, -1.0, -1.0, 3.0])
    x = np.array([-2.0, 0.0, 0.3, 1.0, 1.2, 2.0, 4.0, 5.0, np.nan])
    check(lf.interp(x, xp, fp), np.interp(x, xp, fp))
    check(np.interp(lf.asarray(x), xp, fp, left=-9.0, right=9.0), np.interp(x, xp, fp, left=-9.0, right=9.0))
    check(lf.interp(x, xp[:1], fp[:1]), np.interp(x, xp[:1], fp[:1]))
    check(lf.interp(x.astype(np.float32), xp, fp.astype(np.int32)),
          np.interp(x.astype(np.float32), xp, fp.astype(np.int32)))
    # Periodic: NumPy's documented example, and points out of order.
    angles = np.array([-180.0, -170, -185, 185, -10, -5, 0, 365])
    points, values = np.array([190.0, -190, 350, -350]), np.array([5.0, 10, 3, 4])
    check(lf.interp(angles, points, values, period=360),
          np.interp(angles, points, values, period=360))
    check(np.interp(lf.asarray(x[:-1]), xp, fp, period=-3.0), np.interp(x[:-1], xp, fp, period=-3.0))


def test_bad_searches_raise():
    with pytest.raises(ValueError, match="side"):
        lf.searchsorted(SORTED, 1.0, side="middle")
    with pytest.raises(ValueError, match="expected 1-d"):
        lf.searchsorted(np.ones((2, 2)), 1.0)
    with pytest.raises(ValueError, match="monotonically"):
        lf.digitize([1.0], [0.0, 2.0, 1.0])
    with pytest.raises(ValueError, match="same length"):
        lf.interp([1.0], [0.0, 1.0], [1.0])
    with pytest.raises(ValueError, match="non-zero"):
        lf.interp([1.0], [0.0, 1.0], [1.0, 2.0], period=0)


@pytest.mark.parametrize("values", [np.array([[3, 1], [1, 2]]), np.arange(24).reshape(4, 6) % 5,
                                    np.array([np.nan, 1.0, np.nan, 0.5, 1.0]), np.zeros(0),
                                    np.array([2.0])])
def test_unique_with_every_option_is_numpys(backend, values):
    import itertools
    for index, inverse, counts, equal_nan in itertools.product([False, True], repeat=4):
        options = dict(return_index=index, return_inverse=inverse, return_counts=counts,
                       equal_nan=equal_nan)
        want = np.unique(values, **options)
        got = lf.unique(lf.asarray(values), **options)
        want, got = (want,) if not isinstance(want, tuple) else want, (got,) if not isinstance(got, tuple) else got
        assert len(got) == len(want)
        for g, w in zip(got, want):
            g = np.asarray(g)
            assert g.shape == w.shape and g.dtype == w.dtype, options
            np.testing.assert_array_equal(g, w)
