"""x[key] = value, and views that share their array's value as NumPy's
share its memory: every step is done to a NumPy array alongside, and the
two must agree after each."""

import numpy as np
import pytest

import lazyfuse as lf
from lazyfuse import cuda, float64, guvectorize, vectorize

BACKENDS = pytest.mark.parametrize("backend", ["cpu", "sim"])


def same(lazy, numpy):
    assert lazy.shape == numpy.shape
    np.testing.assert_array_equal(lazy.numpy(), numpy)


@BACKENDS
def test_item_assignment_follows_numpy(backend):
    with lf.use(backend):
        n = np.arange(24.0).reshape(4, 6)
        x = lf.asarray(n)
        for key, value in [
            (1, 5.0),                                  # a row, a scalar broadcast
            ((slice(None), slice(None, None, 2)), [[-1, -2, -3]]),  # every other column, a row broadcast down
            ((2, slice(1, 4)), np.array([7, 8, 9])),   # part of a row
            ((slice(None, None, -1), 5), np.arange(4.0)),  # a column, counting down
            ((Ellipsis, 0), 0.5),
            ((slice(1, 3), slice(4, 1, -2)), np.array([[1.0], [2.0]])),
            ((-1, -1), np.float32(3.5)),
            ((slice(5, 9),), 100.0),                   # an empty region: nothing changes
            ((None, 0), np.ones((1, 6))),              # a new axis selects nothing more
        ]:
            n[key] = value
            x[key] = value
            same(x, n)
        ints = lf.zeros(3, dtype=np.int32)
        ints[1] = 2.7  # cast as NumPy's assignment casts
        assert ints.tolist() == [0, 2, 0] and ints.dtype == np.int32


@BACKENDS
def test_views_write_their_array_and_see_its_writes(backend):
    with lf.use(backend):
        n = np.arange(12.0).reshape(3, 4)
        x = lf.asarray(n)
        v, nv = x[1:3, ::2], n[1:3, ::2]
        v[0, 0] = 99
        nv[0, 0] = 99
        same(x, n)
        x[2, 2] = -7  # the view sees its array's write
        n[2, 2] = -7
        same(v, nv)
        v += 1  # in place through the view
        nv += 1
        same(x, n)
        np.multiply(v, 2, out=v)
        np.multiply(nv, 2, out=nv)
        same(x, n)
        w, nw = v[1], nv[1]  # a view of a view
        w[:] = 0
        nw[:] = 0
        same(x, n)
        same(v, nv)
        x[0, 1:3] += 10  # Python reads the view, adds, and assigns it back
        n[0, 1:3] += 10
        same(x, n)
        c = v.copy()  # a copy is a value of its own
        c[:] = 1000
        same(x, n)
        x.sum().item()  # still lazy and computable after all that
        assert float(x.sum()) == n.sum()


@cuda.jit
def add_one(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += 1


@vectorize(["float64(float64)"])
def twice(a):
    return 2 * a


@guvectorize([(float64[:], float64[:])], "(n)->(n)")
def cumulative(a, out):
    total = 0.0
    for i in range(a.shape[0]):
        total += a[i]
        out[i] = total


@BACKENDS
def test_kernels_and_ufuncs_write_through_views(backend):
    with lf.use(backend):
        d = cuda.to_device(np.zeros(8))
        add_one[1, 32](d[2:5])
        add_one[1, 32](d[::4])
        assert d.copy_to_host().tolist() == [1, 0, 1, 1, 2, 0, 0, 0]
        twice(np.arange(3.0), out=d[5:8])
        assert d.copy_to_host().tolist() == [1, 0, 1, 1, 2, 0, 2, 4]
        m = cuda.to_device(np.ones((2, 3)))
        cumulative(m[:, 1:], m[:, :2])
        assert m.copy_to_host().tolist() == [[1, 2, 1]] * 2


def test_views_of_one_array_that_overlap_are_refused_as_kernel_arguments():
    @cuda.jit
    def copy(src, dst):
        i = cuda.grid(1)
        if i < dst.size:
            dst[i] = src[i]

    d = cuda.to_device(np.arange(8.0))
    copy[1, 8](d[0:4], d[4:8])  # disjoint: fine
    assert d.copy_to_host().tolist() == [0, 1, 2, 3, 0, 1, 2, 3]
    with pytest.raises(lf.ArgumentError, match="share memory"):
        copy[1, 8](d[0:4], d[2:6])
    with pytest.raises(lf.ArgumentError, match="share memory"):
        copy[1, 8](d, d[2:6])


def test_bad_item_assignments_are_errors():
    x = lf.asarray(np.zeros((3, 4)))
    with pytest.raises(lf.ShapeError, match=r"shape \(2,\) into the indexed shape \(4,\)"):
        x[0] = [1.0, 2.0]
    with pytest.raises(ValueError):
        x[:, 0] = np.ones((3, 2))
    with pytest.raises(IndexError, match="out of bounds"):
        x[3] = 1
    with pytest.raises(IndexError, match="not booleans"):
        x[True] = 1
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0] = 1
    assert x.numpy().tolist() == np.zeros((3, 4)).tolist()  # nothing was written


@BACKENDS
def test_transposes_and_reshapes_are_views_where_numpys_are(backend):
    with lf.use(backend):
        n = np.arange(12.0).reshape(3, 4)
        x = lf.asarray(n)
        steps = [
            # (how to make the view, the key written, the value)
            (lambda a: a.T, (0, 1), 100.0),
            (lambda a: a.reshape(2, 6), 1, -5.0),
            (lambda a: a[None], (0, 2, 3), 7.0),
            (lambda a: a[:, 1:3].T, 1, 0.0),           # a view of a view
            (lambda a: a[1:].ravel(), 0, 42.0),        # rows in order: a view
            (lambda a: a[None].squeeze(), (2, 0), 9.0),
            (lambda a: a.swapaxes(0, 1).reshape(4, 1, 3), (3, 0, 1), 11.0),  # adds an axis only
        ]
        for make, key, value in steps:
            lazy, numpy = make(x), make(n)
            assert np.shares_memory(numpy, n)
            lazy[key] = value
            numpy[key] = value
            same(x, n)
            x[0, 0] += 1  # and the view sees its array's writes
            n[0, 0] += 1
            same(lazy, numpy)
        # Where NumPy's reshape copies, and flatten: values of their own.
        for make in [lambda a: a.T.reshape(-1), lambda a: a[:, 1:].ravel(), lambda a: a.flatten()]:
            lazy, numpy = make(x), make(n)
            assert not np.shares_memory(numpy, n)
            lazy[0] = -100.0
            same(x, n)
        np.multiply(x.T, 2, out=x.T)  # out= through a transpose
        n *= 2
        same(x, n)


@BACKENDS
def test_keys_that_only_add_axes_are_views_as_numpys(backend):
    # None, ... and whole-axis slices alone: a reshape (the short way).
    with lf.use(backend):
        n = np.arange(24.0).reshape(2, 3, 4)
        x = lf.asarray(n)
        for key in [None, (None,), (slice(None), None), (Ellipsis, None),
                    (None, Ellipsis, None), (slice(None), None, slice(None)),
                    (slice(None), slice(None), slice(None), None),
                    (Ellipsis, None, slice(None)), (None, None, slice(None), None)]:
            same(x[key], n[key])
        v = x[:, None]
        v[1, 0, 2, 3] = -5.0  # writes go to the array, as NumPy's view's do
        n[:, None][1, 0, 2, 3] = -5.0
        same(x, n)
        with pytest.raises(IndexError):
            x[:, :, :, :, None]


@BACKENDS
def test_keys_of_ints_and_slices_read_as_numpys(backend):
    """Keys of Python ints and slices take one native call; every other
    key the Python resolver. Both must read what NumPy's would, raise
    where NumPy's raises, and make views that write their array."""
    with lf.use(backend):
        n = np.arange(60.0).reshape(3, 4, 5)
        x = lf.asarray(n)
        for key in [
            1, -1, slice(None), slice(1, None), (1, 2), (-3, slice(None, None, -2)),
            (slice(1, -1), slice(1, -1), slice(1, -1)), (0, 0, 0), (slice(5, 9),),
            (slice(None, None, 3), 2, slice(4, 0, -1)), (np.int64(2), slice(1, 3)),
            (Ellipsis, 1), (1, None), (slice(0, 2), Ellipsis, -1),
        ]:
            same(x[key], n[key])
        for key in [3, -4, (0, 4), (0, 0, 5), (0, 0, 0, 0), (1.5,), (slice(None), "a")]:
            with pytest.raises(IndexError):
                n[key]
            with pytest.raises(IndexError):
                x[key]
        for key in [(True,), (1, False)]:  # NumPy's boolean scalar keys are not taken
            with pytest.raises(IndexError, match="not booleans"):
                x[key]
        v, nv = x[1:, ::2, -1], n[1:, ::2, -1]
        v[1, 0] = -1.0
        nv[1, 0] = -1.0
        same(x, n)
