"""NumPy's reduction keywords (dtype=, out=, initial=, where=), the ufunc
methods (reduce, accumulate, outer, reduceat, at) and call keywords
(dtype=, signature=, casting=, where=), matmul (@), divmod and the shape methods,
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
    # Running extremes (scans), NaN once met kept; any dtype kept.
    B = np.where(MASK, A, np.nan)
    for ufunc in (np.maximum, np.minimum):
        for axis in (0, 1, 2):
            check(ufunc.accumulate(lf.asarray(B), axis=axis), ufunc.accumulate(B, axis=axis))
        ints = (A * 40).astype(np.int16)
        check(ufunc.accumulate(lf.asarray(ints), axis=-1), ufunc.accumulate(ints, axis=-1))
    check(np.logical_and.accumulate(x > -1, axis=1), np.logical_and.accumulate(A > -1, axis=1))
    check(np.logical_or.accumulate(lf.asarray(A * MASK)), np.logical_or.accumulate(A * MASK))
    assert "cummax" in np.maximum.accumulate(x).explain()


def test_moments_take_a_given_mean_and_the_array_apis_correction(backend):
    x = lf.asarray(A)
    mean = A.mean(axis=(0, 2), keepdims=True)
    for name in ("var", "std"):
        method = getattr(np, name)
        check(method(x, axis=(0, 2), mean=mean), method(A, axis=(0, 2), mean=mean))
        check(method(x, axis=1, correction=1), method(A, axis=1, correction=1))
        check(method(x, axis=0, where=MASK, mean=A.mean(axis=0, keepdims=True)),
              method(A, axis=0, where=MASK, mean=A.mean(axis=0, keepdims=True)))
        with pytest.raises(ValueError, match="ddof and correction"):
            method(x, ddof=1, correction=1)


def test_astype_takes_numpys_keywords(backend):
    x = lf.asarray(A)
    assert x.astype(np.float64, copy=False) is x
    check(x.astype(np.float32, casting="same_kind"), A.astype(np.float32))
    with pytest.raises(TypeError, match="according to the rule 'same_kind'"):
        x.astype(np.int8, casting="same_kind")
    check(x.astype(np.int8, order="C"), A.astype(np.int8))


def test_other_ufunc_methods(backend):
    x, v = lf.asarray(A), A[0, 0]
    check(np.add.outer(lf.asarray(v), v[:3]), np.add.outer(v, v[:3]))
    check(np.less.outer(v, lf.asarray(A[0])), np.less.outer(v, A[0]))
    check(np.multiply.outer(x, 2.0), np.multiply.outer(A, 2.0))
    # Without a kernel of lazyfuse's: NumPy on the computed values.
    check(np.add.reduceat(lf.asarray(v), [0, 2]), np.add.reduceat(v, [0, 2]))
    check(np.subtract.accumulate(x, axis=2), np.subtract.accumulate(A, axis=2))
    counts, want = lf.zeros(5), np.zeros(5)
    np.add.at(counts, [0, 0, 3], 1.0)
    np.add.at(want, [0, 0, 3], 1.0)
    check(counts, want)


def test_ufunc_call_keywords_follow_numpy(backend):
    a = np.array([1, 2, 3], np.int8)
    x = lf.asarray(a)
    check(np.add(x, x, dtype=np.int16), np.add(a, a, dtype=np.int16))
    check(np.add(x, 300, dtype=np.int16), np.add(a, 300, dtype=np.int16))
    check(np.sqrt(x, dtype=np.float32), np.sqrt(a, dtype=np.float32))
    check(np.less(x, 2, dtype=bool), np.less(a, 2, dtype=bool))
    check(np.add(x, x, signature=(None, None, np.float64)), np.add(a, a, signature=(None, None, np.float64)))
    check(np.add(x * 1.5, 1, dtype=np.int8, casting="unsafe"),
          np.add(a * 1.5, 1, dtype=np.int8, casting="unsafe"))
    for bad in (lambda m, y: m.less(y, y, dtype=np.float64), lambda m, y: m.add(y * 1.5, 1, dtype=np.int8)):
        with pytest.raises(TypeError):
            bad(np, a)
        with pytest.raises(TypeError):
            bad(np, x)
    out, want = np.full(3, 9, np.int8), np.full(3, 9, np.int8)
    assert np.add(x, 1, where=x > 1, out=out) is out
    np.add(a, 1, where=a > 1, out=want)
    np.testing.assert_array_equal(out, want)
    lazy_out = lf.zeros(3, np.int8)
    np.add(x, x, where=[True, False, True], out=lazy_out)
    check(lazy_out, np.array([2, 0, 6], np.int8))
    check(np.add(x, 1, where=x > 1), np.array([0, 3, 4], np.int8))  # NumPy's 0s are garbage
    q, r = np.divmod(x, 2, dtype=np.float32)
    check(q, np.divmod(a, 2, dtype=np.float32)[0])
    check(np.add(x, 1, order="C", subok=True), a + 1)


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
        x.ravel(order="X")
