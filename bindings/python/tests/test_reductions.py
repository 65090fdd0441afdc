"""NumPy's reduction keywords (dtype=, out=, initial=, where=), the ufunc
methods np.add.reduce/accumulate, matmul (@), divmod and the shape methods,
against NumPy on the same values: results and dtypes equal, and lazy."""

import numpy as np
import pytest

import lazyfuse as lf

RNG = np.random.default_rng(1)
A = RNG.standard_normal((3, 4, 5))
MASK = RNG.random((3, 4, 5)) > 0.3


def check(got, want):
    assert isinstance(got, lf.Array), type(got)  # stayed lazy
    got = got.numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert got.dtype == np.asarray(want).dtype, (got.dtype, np.asarray(want).dtype)


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "any", "all"])
@pytest.mark.parametrize("axis", [None, 0, (0, 2), -1])
def test_reductions_take_where_and_keepdims(backend, name, axis):
    x = lf.asarray(A)
    check(getattr(x, name)(axis=axis, where=MASK), getattr(A, name)(axis=axis, where=MASK))
    check(getattr(np, name)(x, axis=axis, keepdims=True), getattr(np, name)(A, axis=axis, keepdims=True))


def test_initial_dtype_and_out(backend):
    x = lf.asarray(A)
    for name in ["min", "max"]:
        check(getattr(x, name)(axis=1, where=MASK, initial=0.5), getattr(A, name)(axis=1, where=MASK, initial=0.5))
        check(getattr(x, name)(initial=0.5), getattr(A, name)(initial=0.5))
    check(lf.zeros((0, 3)).min(axis=0, initial=5.0), np.zeros((0, 3)).min(axis=0, initial=5.0))
    check(x.sum(initial=10), A.sum(initial=10))
    check(x.sum(axis=0, dtype=np.float32), A.sum(axis=0, dtype=np.float32))
    small = np.arange(60, dtype=np.int8).reshape(3, 4, 5)
    check(lf.asarray(small).sum(dtype=np.int8), small.sum(dtype=np.int8))  # wraps, as NumPy's
    check(lf.asarray(small).mean(axis=2, dtype=np.float32), small.mean(axis=2, dtype=np.float32))
    check(x.cumsum(axis=1, dtype=np.float32), A.cumsum(axis=1, dtype=np.float32))
    check(x.argmax(axis=1, keepdims=True), A.argmax(axis=1, keepdims=True))

    out = np.zeros((4, 5))
    assert np.sum(x, axis=0, out=out) is out
    np.testing.assert_allclose(out, A.sum(axis=0))
    ints = np.zeros((4, 5), dtype=np.int64)  # reductions cast unsafely into out, as NumPy's
    np.sum(x, axis=0, out=ints)
    assert ints.tolist() == A.sum(axis=0).astype(np.int64).tolist()


@pytest.mark.parametrize("name", ["var", "std"])
def test_moments_over_several_axes_and_masks(backend, name):
    x = lf.asarray(A)
    check(getattr(x, name)(axis=(0, 2), ddof=1, keepdims=True), getattr(A, name)(axis=(0, 2), ddof=1, keepdims=True))
    check(getattr(x, name)(axis=1, where=MASK), getattr(A, name)(axis=1, where=MASK))


def test_ufunc_reduce_and_accumulate(backend):
    x = lf.asarray(A)
    check(np.add.reduce(x), np.add.reduce(A))  # axis=0 by default, as NumPy's
    check(np.add.reduce(x, axis=None), np.add.reduce(A, axis=None))
    check(np.multiply.accumulate(x, axis=1), np.multiply.accumulate(A, axis=1))
    check(np.maximum.reduce(x, axis=2), np.maximum.reduce(A, axis=2))
    check(np.logical_or.reduce(x > 1), np.logical_or.reduce(A > 1))


@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
                                    ((2, 1, 3, 4), (5, 4, 2)), ((2, 3, 4), (4, 2))])
def test_matmul_follows_numpy_shapes(backend, shapes):
    a, b = (RNG.standard_normal(s) for s in shapes)
    check(lf.asarray(a) @ lf.asarray(b), a @ b)
    check(a @ lf.asarray(b), a @ b)
    check(np.matmul(lf.asarray(a), b), a @ b)


def test_matmul_dtypes_and_errors(backend):
    i = RNG.integers(-5, 5, (3, 4)).astype(np.int32)
    j = RNG.integers(-5, 5, (4, 2)).astype(np.int32)
    check(lf.asarray(i) @ j, i @ j)
    check(lf.asarray(i > 0) @ (j > 0), (i > 0) @ (j > 0))
    product = lf.asarray(np.ones((50, 60))) @ lf.asarray(np.ones((60, 70)))
    assert "lf_matmul_f64" in product.explain()  # one launch of the product's kernel
    np.testing.assert_array_equal(product.numpy(), np.full((50, 70), 60.0))
    with pytest.raises(lf.ShapeError, match=r"shapes \(3, 4\) and \(3, 3\)"):
        lf.asarray(i) @ lf.asarray(np.ones((3, 3)))
    with pytest.raises(ValueError, match="scalar"):
        lf.asarray(np.float64(2.0)) @ lf.asarray(i)


def test_divmod_and_shape_methods(backend):
    i = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
    for q, r in [divmod(lf.asarray(i), 3), np.divmod(lf.asarray(i), 3), divmod(7, lf.asarray(i + 10))]:
        assert q.dtype == np.int32
    q, r = divmod(lf.asarray(i), 3)
    check(q, i // 3)
    check(r, i % 3)

    x = lf.asarray(A)
    ones = lf.asarray(np.ones((1, 3, 1)))
    check(ones.squeeze(), np.ones(3))
    check(np.squeeze(ones, axis=0), np.ones((3, 1)))
    with pytest.raises(lf.ShapeError, match="does not have length 1"):
        ones.squeeze(axis=1)
    check(x.ravel(), A.ravel())
    check(x.flatten(), A.flatten())
    check(np.ravel(x), A.ravel())
    check(x.swapaxes(0, 2), A.swapaxes(0, 2))
    check(x.clip(-0.5, 0.5), A.clip(-0.5, 0.5))
    check(np.clip(x, -0.5, 0.5), np.clip(A, -0.5, 0.5))
    check(x.clip(max=0), A.clip(max=0))
    copy = x.copy()
    copy += 1  # changes the copy only
    check(x, A)
    assert x.tolist() == A.tolist()


def test_misuse_is_an_error():
    x = lf.asarray(A)
    with pytest.raises(lf.ArgumentError, match="needs initial="):
        x.min(where=MASK)
    with pytest.raises(lf.ShapeError, match="does not broadcast"):
        x.sum(where=np.ones((2, 2), dtype=bool))
    with pytest.raises(lf.AxisError):
        x.squeeze(axis=5)
    with pytest.raises(lf.ArgumentError, match="order="):
        x.ravel(order="F")
