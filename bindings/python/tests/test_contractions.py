"""``einsum``, ``tensordot``, ``inner`` and the product gufuncs
(``vecdot``, ``matvec``, ``vecmat``) against NumPy: every kind of
subscript (implicit and explicit output, ``...``, repeated labels, one to
four operands, broadcast length-1 axes), both calling forms, the dtypes,
``out=``/``dtype=``, and the errors."""

import numpy as np
import pytest

import lazyfuse as lf

RNG = np.random.default_rng(7)


def r(*shape, dtype=np.float64):
    values = RNG.standard_normal(shape) * 4
    return values.astype(dtype) if np.issubdtype(dtype, np.floating) else values.round().astype(dtype)


def check(got, want):
    assert isinstance(got, lf.Array), type(got)
    value = np.asarray(got)
    assert value.dtype == want.dtype, (value.dtype, want.dtype)
    assert value.shape == want.shape, (value.shape, want.shape)
    tolerance = 1e-4 if want.dtype == np.float32 else 1e-10
    np.testing.assert_allclose(value, want, rtol=tolerance, atol=tolerance)


CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ij,kj->ik", [(3, 4), (5, 4)]),
    ("ji,jk->ki", [(4, 3), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,jk->bik", [(2, 3, 4), (4, 5)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij,ij->", [(3, 4), (3, 4)]),
    ("ij,ij", [(3, 4), (3, 4)]),
    ("i,i", [(6,), (6,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,j", [(3,), (4,)]),
    ("ij,j->i", [(3, 4), (4,)]),
    ("ijk,kj->i", [(2, 3, 4), (4, 3)]),
    ("ijk,jl->kil", [(2, 3, 4), (3, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ij,jk,k->i", [(2, 3), (3, 4), (4,)]),
    ("a,b,c,d->abcd", [(2,), (3,), (1,), (2,)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("iij->j", [(3, 3, 2)]),
    ("iji->ij", [(3, 2, 3)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ijk->kj", [(2, 3, 4)]),
    ("ij", [(3, 4)]),
    ("ji", [(3, 4)]),
    ("...j,jk->...k", [(2, 3, 4), (4, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("...ij,...jk", [(2, 1, 3, 4), (3, 4, 5)]),
    ("i...->...", [(3, 2, 4)]),
    ("...,...", [(2, 3), (3,)]),
    ("ij,ij->i", [(3, 1), (3, 4)]),  # a length-1 axis broadcasts
    ("ij,jk->ik", [(3, 1), (4, 5)]),  # ... also a contracted one
    ("ii,ij->j", [(3, 3), (3, 2)]),
    (" ij , jk -> ik ", [(3, 4), (4, 5)]),
]


@pytest.mark.parametrize("spec, shapes", CASES, ids=[c[0] for c in CASES])
def test_einsum_is_numpys(backend, spec, shapes):
    operands = [r(*shape) for shape in shapes]
    want = np.einsum(spec, *operands)
    check(lf.einsum(spec, *operands), want)
    check(np.einsum(spec, *[lf.asarray(x) for x in operands]), want)  # __array_function__


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8])
def test_einsum_keeps_numpys_dtypes(backend, dtype):
    a, b = r(3, 4, dtype=dtype), r(4, 2, dtype=dtype)
    for spec in ("ij,jk->ik", "ij,ij->i", "ij->j", "ij,ik->jk"):
        operands = (a, b) if spec == "ij,jk->ik" else (a, a) if spec.count(",") else (a,)
        check(lf.einsum(spec, *operands), np.einsum(spec, *operands))
    mixed = (r(3, 4, dtype=dtype), r(4, 2, dtype=np.float32))
    check(lf.einsum("ij,jk", *mixed), np.einsum("ij,jk", *mixed))


def test_einsum_interleaved_form_out_and_dtype(backend):
    a, b, c = r(3, 4), r(4, 5), r(5)
    check(lf.einsum(a, [0, 1], b, [1, 2], [0, 2]), np.einsum(a, [0, 1], b, [1, 2], [0, 2]))
    check(lf.einsum(a, [0, 1], b, [1, 2], c, [2]), np.einsum(a, [0, 1], b, [1, 2], c, [2]))
    x, m = r(2, 3, 4), r(5, 4)
    check(lf.einsum(x, [Ellipsis, 1], m, [2, 1], [Ellipsis, 2]),
          np.einsum(x, [Ellipsis, 1], m, [2, 1], [Ellipsis, 2]))
    out = np.empty((3, 5))
    lf.einsum("ij,jk->ik", a, b, out=out)
    np.testing.assert_allclose(out, a @ b)
    lazy_out = lf.zeros((3, 5))
    assert lf.einsum("ij,jk->ik", a, b, out=lazy_out) is lazy_out
    np.testing.assert_allclose(lazy_out.numpy(), a @ b)
    ints = r(3, 4, dtype=np.int32)
    check(lf.einsum("ij->i", ints, dtype=np.float64), np.einsum("ij->i", ints, dtype=np.float64))
    with pytest.raises(TypeError, match="cannot cast"):
        lf.einsum("ij->i", a, dtype=np.int32)


def test_einsum_stays_lazy_and_contracts_by_matrix_product(backend):
    a, b = lf.asarray(r(30, 40)), lf.asarray(r(40, 50))
    result = lf.einsum("ij,jk->ik", a * 2, b)  # nothing runs yet
    assert "matmul" in result.explain()
    check(result, np.einsum("ij,jk->ik", a.numpy() * 2, b.numpy()))
    fused = lf.einsum("ij,ij->i", a, a + 1)  # dots: a fused product and sum
    assert "matmul" not in fused.explain()
    check(fused, np.einsum("ij,ij->i", a.numpy(), a.numpy() + 1))


def test_tensordot_and_inner_are_numpys(backend):
    a, b = r(2, 3, 4), r(3, 4, 5)
    for axes in (2, 1, 0, ([1, 2], [0, 1]), ([2, 1], [1, 0]), (1, 0), ([-1], [1])):
        bb = b if axes != 1 else r(4, 5)
        check(lf.tensordot(a, bb, axes), np.tensordot(a, bb, axes))
    check(np.tensordot(lf.asarray(a), b), np.tensordot(a, b))
    x, y = r(3, 4), r(5, 4)
    check(lf.inner(x, y), np.inner(x, y))
    check(np.inner(lf.asarray(x), y), np.inner(x, y))
    v, w = r(4), r(4)
    check(lf.inner(v, w), np.asarray(np.inner(v, w)))
    check(lf.inner(lf.asarray(v), 2.0), np.inner(v, 2.0))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8, np.int64, np.bool_])
def test_vecdot_matvec_and_vecmat_are_numpys(backend, dtype):
    def given(*shape):
        return (r(*shape) > 0) if dtype is np.bool_ else r(*shape, dtype=dtype) * 16
    stack, vector, row = given(4, 2, 3), given(3), given(2)
    for f, a, b in [(np.vecdot, stack, vector), (np.vecdot, vector, stack[0]),
                    (np.matvec, stack, vector), (np.vecmat, row, stack)]:
        want = f(a, b)
        check(f(lf.asarray(a), b), want)  # NumPy's ufunc, on a lazy array
        check(getattr(lf, f.__name__)(a, lf.asarray(b)), want)
        out = np.empty_like(want)
        assert f(lf.asarray(a), b, out=out) is out
        np.testing.assert_allclose(out, want, rtol=1e-4)
    check(lf.vecdot(stack, stack[:1]), np.vecdot(stack, stack[:1]))  # broadcast loop axes
    check(np.vecdot(lf.asarray(stack), stack[:, 0], axis=0), np.vecdot(stack, stack[:, 0], axis=0))
    check(lf.linalg.vecdot(stack, stack[:, 0], axis=0),
          np.linalg.vecdot(stack, stack[:, 0], axis=0))
    assert "matmul" in lf.matvec(stack, vector).explain()


def test_bad_gufunc_operands_raise_as_numpys():
    with pytest.raises(ValueError, match="mismatch in its core dimension 0"):
        lf.vecdot(r(3), r(4))
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        lf.vecdot(r(3), 2.0)
    with pytest.raises(ValueError, match=r"signature \(m,n\),\(n\)->\(m\)"):
        lf.matvec(r(3), r(3))
    with pytest.raises(ValueError, match="could not be broadcast|matmul"):
        lf.vecmat(r(3), r(4, 2))


def test_bad_contractions_raise_as_numpys():
    a, b = r(3, 4), r(5, 6)
    with pytest.raises(ValueError, match="could not be broadcast"):
        lf.einsum("ij,jk", a, b)
    with pytest.raises(ValueError, match="2 operands"):
        lf.einsum("ij,jk", a)
    with pytest.raises(ValueError, match="never appeared"):
        lf.einsum("ij->iz", a)
    with pytest.raises(ValueError, match="more than once"):
        lf.einsum("ij->ii", a)
    with pytest.raises(ValueError, match="name 3"):
        lf.einsum("ijk", a)
    with pytest.raises(ValueError, match="invalid subscript"):
        lf.einsum("i1", a)
    with pytest.raises(ValueError, match="no '...'"):
        lf.einsum("...j->j", r(2, 3))
    with pytest.raises(ValueError, match="collapsing index 'i' don't match"):
        lf.einsum("ii", a)
    with pytest.raises(ValueError, match="shape mismatch"):
        lf.tensordot(a, b, 1)
    with pytest.raises(ValueError, match="expected the same last axis"):
        lf.inner(a, b)
