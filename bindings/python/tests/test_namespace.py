"""NumPy's namespace over lazy arrays (``lf.exp``, ``lf.nanmax``,
``lf.concatenate``, ``lf.linspace``…), and NumPy's own functions called on
lazyfuse arrays: each against NumPy on the same values (dtype, shape,
values, NaN positions), each result a lazy ``lf.Array``."""

import copy
import pickle
import warnings

import numpy as np
import pytest

import lazyfuse as lf
from lazyfuse import _numpy


def check(got, want, exact=False):
    assert isinstance(got, lf.Array), type(got)
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if exact or want.dtype.kind not in "fc":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-12, equal_nan=True)


def floats(shape=(3, 4), seed=0, dtype=np.float64):
    x = (np.random.default_rng(seed).standard_normal(shape) * 3).astype(dtype)
    x.flat[::5] = np.nan
    x.flat[1] = np.inf
    x.flat[2] = -np.inf
    return x


@pytest.mark.parametrize("name", sorted(_numpy._UFUNCS + tuple(_numpy._ALIASES)))
def test_every_ufunc_of_the_namespace_is_numpys_lazily(name):
    f, npf = getattr(lf, name), getattr(np, _numpy._ALIASES.get(name, name))
    x = np.array([0.5, -1.5, 2.0, 3.0, -0.0, 7.25])
    y = np.array([2.0, 3.0, -1.0, 0.5, 1.0, -2.5])
    # (No integer 0 to invert and no negative integer power: NumPy's are
    # the platform's and an error.)
    i, j = np.array([7, -3, 12, 5, 1, 9]), np.array([2, 5, 4, 3, 1, 2])
    with np.errstate(all="ignore"):
        for args in ([x, y][:npf.nin], [i, j][:npf.nin]):
            try:
                want = npf(*args)
            # NumPy has no such loop (bitwise of floats), or a gufunc's
            # operands lack its core axes (matvec of vectors).
            except (TypeError, ValueError) as error:
                with pytest.raises(TypeError if isinstance(error, TypeError) else ValueError):
                    np.asarray(f(*args))
                continue
            got = f(*args)
            if npf.nout == 2:
                for g, w in zip(got, want):
                    check(g, w)
            else:
                check(got, want)
    # A lazy argument keeps its context; numbers stay weak.
    lazy = lf.asarray(x.astype(np.float32))
    if npf.nin == 2 and npf.nout == 1 and name != "matmul":
        try:
            with np.errstate(all="ignore"):
                want = npf(x.astype(np.float32), 2)
        except (TypeError, ValueError):
            return
        check(f(lazy, 2), want)


def test_binary_operations_come_from_the_cores_table():
    from lazyfuse import _native, _ufuncs
    names = set(_native.binary_operation_names())
    assert names == _ufuncs._BINARY
    # Every binary NumPy ufunc of the namespace that lazyfuse computes as
    # one operation is there under NumPy's name, aliases included; the
    # generator, applied by ``random``, is not.
    for name in ("add", "subtract", "true_divide", "divide", "remainder", "mod", "power",
                 "arctan2", "logaddexp2", "nextafter", "gcd", "lcm", "right_shift",
                 "logical_xor", "greater_equal"):
        assert name in names, name
    assert "philox" not in names


@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmin",
                                  "nanmax"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_nan_reductions_skip_nan_as_numpys(backend, name, dtype):
    x = floats((4, 5), 1)
    x[np.isinf(x)] = 2.0
    x[3] = np.nan  # an all-NaN row
    x = x.astype(dtype) if dtype is not np.int32 else np.arange(20, dtype=dtype).reshape(4, 5)
    for axis in (None, 0, 1, (0, 1)):
        if axis == (0, 1) and name in ("nanmin", "nanmax"):
            continue
        for keepdims in (False, True):
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore", RuntimeWarning)
                want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
            got = getattr(lf, name)(x, axis=axis, keepdims=keepdims)
            check(got, want)
            check(getattr(np, name)(lf.asarray(x), axis=axis, keepdims=keepdims), want)
    mask = np.arange(20).reshape(4, 5) % 3 != 0
    if name not in ("nanmin", "nanmax"):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            check(getattr(lf, name)(x, axis=1, where=mask),
                  getattr(np, name)(x, axis=1, where=mask))


def test_reductions_and_shapes_as_functions():
    x = floats((2, 3, 4), 2)
    x[np.isnan(x)] = 1.0
    for name in ("sum", "prod", "min", "max", "amin", "amax", "mean", "var", "std", "argmax",
                 "argmin", "any", "all"):
        check(getattr(lf, name)(x, axis=1), getattr(np, name)(x, axis=1))
    check(lf.cumsum(x, axis=2), np.cumsum(x, axis=2))
    check(lf.count_nonzero(x == 1.0, axis=0), np.count_nonzero(x == 1.0, axis=0))
    check(lf.count_nonzero(x > 0), np.int64(np.count_nonzero(x > 0)))
    check(lf.reshape(x, (4, 6)), np.reshape(x, (4, 6)))
    check(lf.transpose(x, (2, 0, 1)), np.transpose(x, (2, 0, 1)))
    check(lf.moveaxis(x, 0, -1), np.moveaxis(x, 0, -1))
    check(lf.moveaxis(x, [0, 1], [2, 0]), np.moveaxis(x, [0, 1], [2, 0]))
    check(lf.expand_dims(x, (0, -1)), np.expand_dims(x, (0, -1)))
    check(lf.broadcast_to([1.0, 2.0], (3, 2)), np.broadcast_to([1.0, 2.0], (3, 2)))
    check(lf.squeeze(np.ones((1, 3, 1))), np.squeeze(np.ones((1, 3, 1))))
    check(lf.clip(x, -1, 1), np.clip(x, -1, 1))


@pytest.mark.parametrize("decimals", [0, 1, 2, -1, -2])
def test_round_is_half_to_even_at_any_decimals(decimals):
    x = np.array([1.25, 2.5, -0.5, 0.125, 15.0, 25.0, -35.0, 1e300, np.nan, np.inf])
    # (Not near the int32 limits: NumPy rounds those in float64 and its
    # cast back overflows as the platform's does.)
    i = np.array([125, 150, 250, -150, -250, 149, 2**30 + 5, -(2**30) - 15], dtype=np.int32)
    with np.errstate(all="ignore"):
        check(lf.round(x, decimals), np.round(x, decimals), exact=True)
        check(np.round(lf.asarray(x), decimals), np.round(x, decimals), exact=True)
    check(lf.around(i, decimals), np.around(i, decimals))
    check(round(lf.asarray(x.astype(np.float32)), decimals), np.round(x.astype(np.float32),
                                                                     decimals), exact=True)


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_concatenate_and_stack_as_numpys(backend, axis):
    a, b = np.arange(6, dtype=np.int16).reshape(2, 3), floats((2, 3), 3, np.float32)
    c = np.arange(6, dtype=np.int64).reshape(2, 3) * 10
    la = lf.asarray(a) * 1  # a computed piece: fused into its part of the result
    check(lf.concatenate([la, b, c], axis=axis), np.concatenate([a, b, c], axis=axis))
    check(np.concatenate([la, b], axis=axis), np.concatenate([a, b], axis=axis))
    if axis is not None:
        check(lf.stack([la, c, c], axis=axis), np.stack([a, c, c], axis=axis))
        check(np.stack([la, c], axis=axis), np.stack([a, c], axis=axis))
    check(lf.concatenate([a, c], dtype=np.float32), np.concatenate([a, c], dtype=np.float32))
    check(lf.concatenate([np.zeros((0, 3)), a]), np.concatenate([np.zeros((0, 3)), a]))
    check(lf.hstack([a, c]), np.hstack([a, c]))
    check(lf.hstack([[1, 2], [3]]), np.hstack([[1, 2], [3]]))
    check(lf.vstack([[1, 2], [3, 4]]), np.vstack([[1, 2], [3, 4]]))
    check(lf.vstack([a, [7, 8, 9]]), np.vstack([a, [7, 8, 9]]))


def test_joining_writes_the_result_in_place_piece_after_piece():
    # Each piece's kernel writes the result of the one before, which dies
    # with it: on the CPU nothing is copied to join them. The last kernel
    # writes NumPy's new array: the one copy is the result into it.
    pieces = [np.arange(1000, dtype=np.float64) + k for k in range(4)]
    with lf.use("cpu"):
        before = lf.stats()["argument_copy_bytes"]
        joined = lf.concatenate([lf.asarray(p) for p in pieces]).numpy()
        assert lf.stats()["argument_copy_bytes"] - before <= joined.nbytes
    np.testing.assert_array_equal(joined, np.concatenate(pieces))


def test_joining_errors_name_the_shapes():
    with pytest.raises(lf.ShapeError, match=r"\(2, 3\), \(2, 4\)"):
        lf.concatenate([np.ones((2, 3)), np.ones((2, 4))])
    with pytest.raises(lf.ShapeError):
        lf.stack([np.ones(2), np.ones(3)])
    with pytest.raises(lf.AxisError):
        lf.concatenate([np.ones(2), np.ones(2)], axis=1)
    with pytest.raises(lf.ArgumentError):
        lf.concatenate([np.float64(1.0), np.float64(2.0)])
    with pytest.raises(lf.ArgumentError):
        lf.concatenate([])
    with pytest.raises(TypeError):
        lf.concatenate([np.ones(2), np.ones(2)], dtype=np.int32)


def test_triangles_eye_identity_and_linspace():
    m = floats((2, 4, 5), 4)
    for k in (-2, -1, 0, 1, 3):
        check(lf.tril(m, k), np.tril(m, k))
        check(lf.triu(m, k), np.triu(m, k))
        check(lf.eye(4, 6, k), np.eye(4, 6, k))
        check(np.tril(lf.asarray(m), k), np.tril(m, k))
    check(lf.eye(3, dtype=np.int32), np.eye(3, dtype=np.int32))
    check(lf.identity(4), np.identity(4))
    with pytest.raises(lf.ArgumentError):
        lf.tril(np.ones(3))
    for args, kwargs in [((0, 1), {}), ((0, 1, 7), {}), ((2.5, -1.0, 6), {"endpoint": False}),
                         ((0, 10, 5), {"dtype": np.int32}), ((1, 1, 4), {}), ((0, 1, 1), {}),
                         ((0, 1, 0), {}), ((-3, 0.1, 9), {"dtype": np.float32}),
                         ((0, 1e-300, 3), {}),
                         # Array endpoints: samples along a new axis.
                         (([0, 1], [10, 20], 5), {}), (([0, 1], [10, 20], 5), {"axis": 1}),
                         ((np.zeros((2, 3)), np.ones(3), 3), {"axis": -1}),
                         ((np.array([1, 1]), np.array([1, 2]), 4), {}),
                         ((np.float32([0, 1]), np.float32([1, 3]), 5), {"endpoint": False}),
                         (([0, 10], [5, 20], 4), {"dtype": int}), (([0, 1], [2, 3], 1), {})]:
        check(lf.linspace(*args, **kwargs), np.linspace(*args, **kwargs), exact=True)
    check(lf.linspace(lf.asarray([0.0, 1.0]), 4.0, 3), np.linspace([0.0, 1.0], 4.0, 3), exact=True)
    check(lf.logspace([0, 1], [2, 3], 4), np.logspace([0, 1], [2, 3], 4))
    y, step = lf.linspace(0, 2, 5, retstep=True)
    check(y, np.linspace(0, 2, 5))
    assert step == np.linspace(0, 2, 5, retstep=True)[1]
    with pytest.raises(lf.ArgumentError):
        lf.linspace(0, 1, -1)


def test_closeness_equality_and_cleaning():
    a = floats((3, 4), 5)
    b = a + np.where(np.arange(12).reshape(3, 4) % 2 == 0, 1e-9, 1e-3)
    for equal_nan in (False, True):
        check(lf.isclose(a, b, equal_nan=equal_nan), np.isclose(a, b, equal_nan=equal_nan))
        check(np.isclose(lf.asarray(a), b, equal_nan=equal_nan), np.isclose(a, b, equal_nan=equal_nan))
        assert lf.allclose(a, a, equal_nan=equal_nan) == np.allclose(a, a, equal_nan=equal_nan)
        assert lf.array_equal(a, a, equal_nan) == np.array_equal(a, a, equal_nan)
    check(lf.isclose(np.arange(5), np.arange(5) + 1e-9), np.isclose(np.arange(5), np.arange(5) + 1e-9))
    check(lf.isclose(np.arange(5), 2), np.isclose(np.arange(5), 2))
    assert lf.allclose(a, b, atol=1e-2, equal_nan=True)
    assert not lf.array_equal(a, a[:2])
    assert isinstance(lf.allclose(a, a), bool)
    for dtype in (np.float16, np.float32, np.float64):
        x = a.astype(dtype)
        check(lf.nan_to_num(x), np.nan_to_num(x), exact=True)
        check(lf.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0),
              np.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0), exact=True)
    check(lf.nan_to_num(np.arange(3)), np.nan_to_num(np.arange(3)))


def test_products():
    a, b = floats((2, 3), 6), floats((3, 4), 7)
    a[~np.isfinite(a)], b[~np.isfinite(b)] = 1.0, 2.0
    check(lf.dot(a, b), np.dot(a, b))
    check(lf.dot(a[0], b[:, 0]), np.dot(a[0], b[:, 0]))
    check(lf.dot(a, 2.0), np.dot(a, 2.0))
    c = np.arange(2 * 3 * 5, dtype=np.float64).reshape(2, 3, 5)
    check(lf.dot(a, c), np.dot(a, c))
    check(lf.dot(np.ones((4, 2, 3)), c), np.dot(np.ones((4, 2, 3)), c))
    check(np.dot(lf.asarray(a), b), np.dot(a, b))
    check(lf.matmul(a, b), np.matmul(a, b))
    check(lf.outer([1, 2, 3], np.arange(4.0)), np.outer([1, 2, 3], np.arange(4.0)))
    with pytest.raises(lf.ShapeError):
        lf.dot(a, np.ones((2, 4, 5)))


def test_the_namespace_keeps_builtins_and_refuses_unknown_names():
    import lazyfuse
    assert callable(lf.sum) and lf.sum is not sum
    assert "nanmax" in dir(lf) and "concatenate" in dir(lf)
    with pytest.raises(AttributeError, match="no_such_function"):
        lf.no_such_function
    from lazyfuse import exp, nanmean  # noqa: F401
    # The package's own code still sees the builtins.
    check(lazyfuse.arange(2**60, 2**60 + 3, dtype=np.int64),
          np.arange(2**60, 2**60 + 3, dtype=np.int64))


def test_numpy_2s_array_api_names_and_constants(backend):
    a = np.array([[3, 1, 2], [3, 1, 7]])
    x = lf.asarray(a)
    for name in ("unique_counts", "unique_inverse", "unique_all"):
        got, want = getattr(lf, name)(x), getattr(np, name)(a)
        assert type(got).__name__ == type(want).__name__ and got._fields == want._fields
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.asarray(g), w)
        got = getattr(np, name)(x)  # NumPy's function on a lazy array comes here
        np.testing.assert_array_equal(np.asarray(got[0]), want[0])
    # (The order is unspecified: NumPy's is a hash table's, lazyfuse's sorted.)
    np.testing.assert_array_equal(np.asarray(lf.unique_values(x)), np.sort(np.unique_values(a)))
    np.testing.assert_array_equal(np.asarray(lf.concat([x, x], axis=1)), np.concat([a, a], axis=1))
    np.testing.assert_array_equal(np.asarray(np.permute_dims(x, (1, 0))), a.T)
    for name in ("acos", "asinh", "atan", "bitwise_invert", "bitwise_left_shift", "atan2"):
        f, args = getattr(lf, name), (x, x) if name in ("bitwise_left_shift", "atan2") else (x,)
        want = getattr(np, name)(*[a for _ in args])
        with np.errstate(all="ignore"):
            check(f(*args), want)
    assert lf.newaxis is None and lf.pi == np.pi and np.isnan(lf.nan) and lf.inf == np.inf
    assert lf.finfo(lf.float32).eps == np.finfo(np.float32).eps and lf.iinfo(np.int8).max == 127
    # Numba's type objects are dtypes too.
    assert lf.zeros(2, dtype=lf.int16).dtype == np.int16 and np.dtype(lf.float64) == np.float64
    assert lf.isdtype(x.dtype, "integral") and lf.can_cast(x.dtype, np.float64)



def test_where_of_a_condition_alone_is_nonzero():
    i = np.array([[1, 5], [7, 0]])
    for got in (lf.where(lf.asarray(i) > 2), np.where(lf.asarray(i) > 2)):
        assert len(got) == 2
        for g, w in zip(got, np.where(i > 2)):
            assert isinstance(g, lf.Array)
            np.testing.assert_array_equal(np.asarray(g), w)
    with pytest.raises(ValueError, match="both or neither"):
        lf.where(i > 2, i)


def test_ufunc_names_are_ufuncs_with_numpys_methods(backend):
    x = floats((3, 4))
    lazy = lf.asarray(x)
    before = lf.stats()["evaluations"]
    reduced = [lf.add.reduce(x), lf.maximum.reduce(lazy, axis=1), lf.multiply.reduce(x, axis=None),
               lf.logical_or.reduce(x > 0, axis=0), lf.add.reduce(x, dtype=np.float32)]
    running = [lf.add.accumulate(x, axis=1), lf.minimum.accumulate(lazy)]
    outer = lf.subtract.outer(x[0], [1.0, 2.0])
    assert lf.stats()["evaluations"] == before  # all lazy
    with np.errstate(all="ignore"):
        check(reduced[0], np.add.reduce(x))
        check(reduced[1], np.maximum.reduce(x, axis=1))
        check(reduced[2], np.multiply.reduce(x, axis=None))
        check(reduced[3], np.logical_or.reduce(x > 0, axis=0))
        check(reduced[4], np.add.reduce(x, dtype=np.float32))
        check(running[0], np.add.accumulate(x, axis=1))
        check(running[1], np.minimum.accumulate(x))
        check(outer, np.subtract.outer(x[0], [1.0, 2.0]))
        check(lf.add.reduceat(x[0], [0, 2]), np.add.reduceat(x[0], [0, 2]))
    target = lf.zeros(4)
    lf.add.at(target, [0, 0, 3], 1.5)
    np.testing.assert_array_equal(np.asarray(target), [3.0, 0.0, 0.0, 1.5])
    assert (lf.add.nin, lf.add.nout, lf.add.identity, lf.divmod.nout) == (2, 1, 0, 2)
    assert lf.add.__name__ == "add" and "add" in repr(lf.add) and isinstance(lf.add, lf.ufunc)
    assert copy.deepcopy(lf.add).nin == 2 and pickle.loads(pickle.dumps(lf.maximum)).__name__ == "maximum"
    check(lf.add(x, 1.0), x + 1.0)


def test_arange_of_an_integer_dtype_with_a_fractional_step_is_numpys():
    # NumPy's rule: the first two values in the dtype, their difference the step.
    for args in [(0, 5, 0.5), (1.5, 10, 2.5), (-2.5, 3, 0.7), (10, 0, -1.5), (0.5, 0.5, 1)]:
        for dtype in (np.int64, np.int8, np.uint8):
            if dtype is np.uint8 and args[0] < 0:
                continue
            check(lf.arange(*args, dtype=dtype), np.arange(*args, dtype=dtype), exact=True)


def test_namespace_functions_become_module_attributes_but_builtins_stay_unshadowed():
    exp = lf.exp
    assert vars(lf)["exp"] is exp  # the next lookup is a plain attribute
    x = lf.asarray(np.array([1.0, 2.0]))
    assert float(lf.sum(x)) == 3.0 and float(lf.max(x)) == 2.0
    # Inside the package `sum`, `max`, `abs`… remain Python's builtins.
    assert "sum" not in vars(lf) and "max" not in vars(lf) and "abs" not in vars(lf)
    assert {"exp", "sum", "concatenate"} <= set(dir(lf))
