"""Advanced indexing, its assignment, ``take``, ``put`` and ``putmask``
against NumPy: integer and boolean array indices, alone or several, with
ints, slices, ``...`` and ``None`` around them, every mode, and the
errors NumPy raises."""

import numpy as np
import pytest

import lazyfuse as lf


def check(got, want):
    assert isinstance(got, lf.Array), type(got)
    value = np.asarray(got)
    assert value.dtype == want.dtype, (value.dtype, want.dtype)
    assert value.shape == want.shape, (value.shape, want.shape)
    np.testing.assert_array_equal(value, want)


X = np.arange(60, dtype=np.float32).reshape(3, 4, 5)


KEYS = [
    [2, 0, -1],
    np.array([[1, 1], [0, 2]]),
    (slice(None), [3, 0]),
    (slice(None), slice(1, 3), np.array([4, -5, 0])),
    (Ellipsis, [1]),
    ([2], Ellipsis),
    (slice(None, None, -1), np.array([0, 3])),
    [],
    X[:, 0, 0] > 10,
    X[..., 0] % 20 == 0,
    (slice(None), X[0, :, 0] > 6),
    X > 30,
    np.array(True),
    # Several array indices, and ints beside them (0-d indices).
    ([0, 2], [1, 3]),
    ([[0], [2]], [1, 3]),
    ([-1, 0], [[0], [3]], np.array([4, 0])),
    ([0, 0, 2], [1, 1, 3]),  # repeated: the last assigned value lands
    (0, [1, 3]),
    (np.array(1), [0, -2]),
    (slice(None), [1, 3], [0, -1]),
    (slice(1, 3), 0, [4, 0, 2]),
    (Ellipsis, [0, 1], 3),
    ([], []),
    # Not next to each other: the indexed axes go in front.
    ([1, 2], slice(None), [0, 4]),
    (0, slice(None), [1, 2]),
    ([[2], [1]], slice(None, None, 2), 3),
    # With `None`, and masks beside other indices.
    (None, [0, 2], slice(None), 1),
    ([2, 0], None, [1, 1]),
    (X[:, 0, 0] > 10, [1, 2]),
    ([1], X[0, :, 0] > 6, slice(None, None, 2)),
    (slice(None), X[0] > 7),
    (X[:, :, 0] > 7, 1),
]


def key_id(key):
    return repr(key)[:40]


@pytest.mark.parametrize("key", KEYS, ids=key_id)
def test_array_indices_are_numpys(backend, key):
    check(lf.asarray(X)[key], X[key])
    check((lf.asarray(X) * 2)[key], (X * 2)[key])  # a computed array


def test_lazy_integer_indices_stay_lazy_and_wrap(backend):
    x = lf.asarray(X[0])
    index = lf.asarray(np.array([0, 3, 1])) + 0  # computed, not checked
    check(x[index], X[0][[0, 3, 1]])
    check(x[:, index + 5], X[0][:, [0, 3, 1]])  # out of bounds: wraps (CuPy)
    mask = lf.asarray(X[0, :, 0]) > 5  # computed: its values set the shape
    check(x[mask], X[0][X[0, :, 0] > 5])


def test_several_lazy_indices_stay_lazy_and_wrap(backend):
    rows, cols = np.array([[0], [2]]), np.array([3, -1, 9])
    want = X[:, :, 0][rows % 3, cols % 4]
    lazy_rows, lazy_cols = lf.asarray(rows) + 0, lf.asarray(cols) + 0  # computed, not checked
    x = lf.asarray(X[:, :, 0])
    check(x[lazy_rows, lazy_cols], want)
    check(x[rows, lazy_cols], want)  # known rows checked, lazy columns wrapped
    check(lf.asarray(X)[lazy_rows, 1:3, lazy_cols], X[rows % 3, 1:3, cols % 5])
    x[lazy_rows, lazy_cols] = 0.5
    expected = X[:, :, 0].copy()
    expected[rows % 3, cols % 4] = 0.5
    check(x, expected)


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_take_in_every_mode_is_numpys(mode, axis):
    indices = np.array([[0, 2], [-1, 1]]) if mode == "raise" else np.array([[0, 7], [-9, 1]])
    check(lf.take(lf.asarray(X), indices, axis=axis, mode=mode),
          np.take(X, indices, axis=axis, mode=mode))
    check(np.take(lf.asarray(X), indices, axis=axis, mode=mode),
          np.take(X, indices, axis=axis, mode=mode))
    check(lf.asarray(X).take(indices, axis=axis, mode=mode),
          X.take(indices, axis=axis, mode=mode))
    for dtype in (np.int8, np.uint16, np.int64, np.bool_):
        values = np.arange(12).astype(dtype).reshape(3, 4)
        check(lf.take(values, [2, 0], axis=1, mode=mode), np.take(values, [2, 0], axis=1))


def test_take_writes_out_and_takes_a_scalar_index():
    out = np.empty((3, 5), np.float32)
    lf.take(X, 2, axis=1, out=out)
    np.testing.assert_array_equal(out, np.take(X, 2, axis=1))
    check(lf.take(X, 7), np.take(X, 7))


def test_bad_array_indices_raise_as_numpys():
    x = lf.asarray(X)
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 3"):
        x[[0, 3]]
    with pytest.raises(IndexError, match="out of bounds"):
        x[:, [-5]]
    with pytest.raises(IndexError, match="integer or boolean"):
        x[np.array([0.5])]
    with pytest.raises(IndexError, match="boolean index did not match"):
        x[np.array([True, False])]
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 4"):
        x[[0], [4]]
    with pytest.raises(IndexError, match="out of bounds for axis 2 with size 5"):
        x[0, :, [1, -6]]
    with pytest.raises(IndexError, match=r"could not be broadcast together with shapes \(2,\) \(3,\)"):
        x[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match="only integers, slices"):
        x[[0], 1.5]
    with pytest.raises(IndexError, match="integer or boolean"):
        x[[0], np.array([0.5])]
    with pytest.raises(IndexError, match="boolean index did not match"):
        x[[0], np.array([True, False])]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., [0], ...]
    with pytest.raises(IndexError, match="too many indices"):
        x[:, :, :, [0]]
    with pytest.raises(IndexError, match="out of bounds"):
        lf.take(X, [60])
    with pytest.raises(lf.ArgumentError, match="mode"):
        lf.take(X, [0], mode="nearest")
    with pytest.raises(IndexError, match="cannot do a non-empty take from an empty axes"):
        lf.take(np.zeros((0, 2)), [0])


@pytest.mark.parametrize("key", KEYS, ids=key_id)
def test_array_index_assignment_is_numpys(backend, key):
    indexed = X[key].shape
    values = [
        -1.5,  # one value (for a mask, a lazy `where`)
        np.arange(np.prod(indexed), dtype=np.float64).reshape(indexed) + 100,  # cast to f32
        np.arange(indexed[-1] if indexed else 1, dtype=np.int32) - 50,  # broadcast
        np.full((1, 1) + indexed, 7.0),  # leading length-1 axes dropped
    ]
    for value in values:
        want = X.copy()
        try:
            want[key] = value
        except TypeError:
            continue  # NumPy takes only 0-d or 1-d values for a mask alone
        x = lf.asarray(X) * 1  # computed: may be written in place
        x[key] = value
        check(x, want)
        x = lf.asarray(X)
        x[key] = lf.asarray(value)
        check(x, want)


def test_assignment_through_views_and_lazy_masks(backend):
    want, x = X.copy(), lf.asarray(X)
    row = x[1]  # a view: writing it writes x
    row[[0, 3]] = 5
    want[1][[0, 3]] = 5
    check(x, want)
    mask = x > 40  # lazy: stays lazy for one value
    x[mask] = 0
    want[want > 40] = 0
    assert not mask._a.is_materialized
    check(x, want)
    y = lf.asarray(X[0]) + 0
    y[lf.asarray(np.array([3, 1])) + 0] = np.array([[9], [8]])  # lazy indices
    w = X[0].copy()
    w[[3, 1]] = np.array([[9], [8]])
    check(y, w)
    y[[0, 2, -4]] = np.array([[1], [2], [3]])  # a repeated index: the last lands, as NumPy's
    w[[0, 2, -4]] = np.array([[1], [2], [3]])
    check(y, w)
    y[y > 50] = np.arange(int((y > 50).sum()))  # a mask and many values: computed
    w[w > 50] = np.arange((w > 50).sum())
    check(y, w)


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_put_and_putmask_are_numpys(backend, mode):
    indices = [0, -1, 5] if mode == "raise" else [0, 61, -70]
    for v in (3.5, [1, 2], [1, 2, 3, 4]):
        want, x = X.copy(), lf.asarray(X)
        np.put(want, indices, v, mode=mode)
        np.put(x, indices, v, mode=mode)
        check(x, want)
        x = lf.asarray(X)
        x.put(np.array(indices), lf.asarray(np.asarray(v, np.float32)), mode=mode)
        check(x, want)
    for v in (-2, [10, 20, 30]):
        want, x = X.copy(), lf.asarray(X)
        np.putmask(want, want % 7 == 0, v)
        np.putmask(x, x % 7 == 0, v)
        check(x, want)
    plain = X.copy()
    np.put(plain, [0], lf.asarray(np.array([-1.0])))  # into NumPy's own array
    assert plain[0, 0, 0] == -1


def test_bad_assignments_raise_as_numpys():
    x = lf.asarray(X)
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 4"):
        x[:, [4]] = 0
    with pytest.raises(ValueError, match="could not broadcast"):
        x[[0, 1]] = np.ones(3)
    with pytest.raises(IndexError, match="boolean index did not match"):
        x[np.array([True, False])] = 1
    with pytest.raises(IndexError, match="boolean index did not match"):
        x[np.array([True, False])] = [1, 2]
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 3"):
        x[[3], [1]] = 1
    with pytest.raises(ValueError, match="could not broadcast"):
        x[[0, 1], 2] = np.ones((3, 5))
    with pytest.raises(IndexError, match="out of bounds"):
        np.put(x, [60], 1)
    with pytest.raises(ValueError, match="same size"):
        np.putmask(x, [True], 1)
    check(x, X)  # nothing was written
