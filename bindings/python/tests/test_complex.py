"""Complex arrays and the FFT against NumPy, on every backend: the
complex ufuncs with special values, NEP 50 promotion with Python and NumPy
complex numbers, the boundary (``asarray``, ``np.asarray``,
``lf.compute``), every ``np.fft`` function with odd, prime and padded
lengths, each axis and ``norm``, and fusion (one kernel for a complex
chain on ``sim``)."""

import warnings

import numpy as np
import pytest

import lazyfuse as lf

INF, NAN = np.inf, np.nan


def _values(dtype=np.complex128):
    parts = [-3.5, -1.0, -0.0, 0.0, 0.5, 2.0, 30.0]
    z = np.array([complex(r, i) for r in parts for i in parts], dtype=dtype)
    return z


def _special():
    parts = [0.0, -0.0, 1.0, -2.0, INF, -INF, NAN]
    return np.array([complex(r, i) for r in parts for i in parts])


def _close(got, want, rtol=1e-12, atol=1e-12):
    got = np.asarray(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


UNARY = ["negative", "positive", "conjugate", "absolute", "square", "reciprocal", "sign", "exp",
         "log", "log10", "log2", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "isnan",
         "isinf", "isfinite"]


@pytest.mark.parametrize("name", UNARY)
def test_complex_ufuncs_match_numpy(backend, name):
    a = _values()
    if name in ("log", "log10", "log2", "reciprocal"):
        a = a[a != 0]
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a)
    got = getattr(np, name)(lf.asarray(a))
    rtol = 1e-10 if name in ("tan", "tanh", "sin", "cos", "sinh", "cosh") else 1e-12
    if want.dtype == np.bool_:
        assert np.array_equal(np.asarray(got), want)
    else:
        _close(got, want, rtol=rtol, atol=1e-300)
    # The lazyfuse function of the same name is the same operation.
    if hasattr(lf, name):
        assert np.array_equal(np.asarray(getattr(lf, name)(lf.asarray(a))), np.asarray(got),
                              equal_nan=want.dtype != np.bool_)


@pytest.mark.parametrize("name", ["exp", "sqrt", "absolute", "isnan", "isinf", "isfinite"])
def test_special_values_follow_numpy(name):
    a = _special()
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a)
    got = np.asarray(getattr(np, name)(lf.asarray(a)))
    if name == "exp":
        # NumPy's cexp recovers some infinities the formula gives as NaN
        # (exp(inf + i y) for finite y ≠ 0); the finite inputs and the real
        # axis must agree exactly.
        finite = np.isfinite(a) | (a.imag == 0)
        got, want = got[finite], want[finite]
    if name == "sqrt":
        # glibc's csqrt, which NumPy calls, rounds sqrt(1j) one ulp apart.
        np.testing.assert_allclose(got, want, rtol=1e-15, atol=0, equal_nan=True)
        return
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "power", "equal",
                                "not_equal"])
def test_binary_operations_match_numpy(backend, op):
    a = _values()
    b = a[::-1].copy()
    if op in ("divide", "power"):
        keep = (a != 0) & (b != 0)
        a, b = a[keep], b[keep]
    f = getattr(np, op)
    with np.errstate(all="ignore"):
        want = f(a, b)
    la, lb = lf.asarray(a), lf.asarray(b)
    rtol = 1e-9 if op == "power" else 1e-12
    for got in (f(la, lb), f(la, b), f(a, lb)):
        if want.dtype == np.bool_:
            assert np.array_equal(np.asarray(got), want)
        else:
            _close(got, want, rtol=rtol, atol=1e-300)


def test_division_by_zero_and_integer_powers_are_numpys():
    a = np.array([1 - 1j, 0j, 2 + 0j])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(np.asarray(lf.asarray(a) / 0), a / 0)
    z = lf.asarray(np.array([1 + 1j, 2j, 0.5 - 3j]))
    for n in (0, 1, 2, 3, 7, -1, -4):
        want = np.array([1 + 1j, 2j, 0.5 - 3j]) ** n
        _close(z ** n, want)


def test_operators_with_python_numbers(backend):
    a = _values(np.complex64)
    z = lf.asarray(a)
    for got, want in [(z + 1, a + 1), (2.5 * z, 2.5 * a), (z - 1j, a - 1j), (1j / (z + 100), 1j / (a + 100)),
                      (-z, -a), (abs(z), abs(a)), (z.conj(), a.conj())]:
        _close(got, want, rtol=1e-5, atol=1e-6)


def test_promotion_follows_nep_50():
    f32 = lf.asarray(np.arange(3, dtype=np.float32))
    f64 = lf.asarray(np.arange(3.0))
    i32 = lf.asarray(np.arange(3, dtype=np.int32))
    c64 = lf.asarray(np.ones(3, np.complex64))
    assert (f32 * 1j).dtype == np.complex64
    assert (f64 * 1j).dtype == np.complex128
    assert (i32 + 1j).dtype == np.complex128
    assert (f32 + np.complex128(1j)).dtype == np.complex128  # a NumPy scalar is strong
    assert (c64 * 2.0).dtype == np.complex64
    assert (c64 + f64).dtype == np.complex128
    assert (c64 + i32).dtype == np.complex128
    assert (c64 + lf.asarray(np.ones(3, np.int8))).dtype == np.complex64
    assert (c64 + np.ones(3, np.complex128)).dtype == np.complex128
    assert (f32 * np.ones(3, np.complex64)).dtype == np.complex64
    for got in [f32 * 1j, c64 + f64, i32 + 1j]:
        assert np.asarray(got).dtype == got.dtype


def test_parts_views_and_casts():
    a = np.arange(12).reshape(3, 4) * (1 - 2j)
    z = lf.asarray(a)
    assert isinstance(z, lf.ComplexArray) and z.shape == (3, 4) and z.ndim == 2 and z.size == 12
    np.testing.assert_array_equal(np.asarray(z.real), a.real)
    np.testing.assert_array_equal(np.asarray(z.imag), a.imag)
    np.testing.assert_array_equal(np.asarray(np.real(z)), a.real)
    np.testing.assert_array_equal(np.asarray(np.imag(z)), a.imag)
    np.testing.assert_array_equal(np.asarray(z.T), a.T)
    np.testing.assert_array_equal(np.asarray(z[1:, ::2]), a[1:, ::2])
    np.testing.assert_array_equal(np.asarray(z.reshape(4, 3)), a.reshape(4, 3))
    np.testing.assert_allclose(np.asarray(np.angle(z[1:])), np.angle(a[1:]))
    np.testing.assert_allclose(np.asarray(np.angle(z[1:], deg=True)), np.angle(a[1:], deg=True))
    assert z.astype(np.complex64).dtype == np.complex64
    with pytest.warns(np.exceptions.ComplexWarning):
        real = z.astype(np.float64)
    np.testing.assert_array_equal(np.asarray(real), a.real)
    assert complex(z[1, 1]) == a[1, 1]
    assert np.iscomplexobj(z)
    # A non-contiguous NumPy complex array comes in as its values.
    np.testing.assert_array_equal(np.asarray(lf.asarray(a[:, ::2])), a[:, ::2])
    assert lf.asarray(z) is z
    # Ordered as NumPy orders complex values: real parts, then imaginary parts.
    np.testing.assert_array_equal(np.asarray(z < z.conj()), a < a.conj())


def test_reductions_and_compute(backend):
    a = (np.arange(24).reshape(2, 3, 4) * (0.5 + 1j)).astype(np.complex64)
    z = lf.asarray(a)
    _close(z.sum(), a.sum(), rtol=1e-6)
    _close(z.sum(axis=1), a.sum(axis=1), rtol=1e-6)
    _close(np.sum(z, axis=(0, 2), keepdims=True), a.sum(axis=(0, 2), keepdims=True), rtol=1e-6)
    _close(np.mean(z, axis=-1), a.mean(axis=-1), rtol=1e-6)
    x = lf.asarray(np.arange(3.0))
    zs, xs = lf.compute(z * 2, x + 1)
    _close(zs, a * 2)
    np.testing.assert_array_equal(xs, np.arange(3.0) + 1)


def test_a_complex_chain_is_one_kernel_on_sim():
    with lf.use("sim"):
        phase = lf.asarray(np.linspace(0, 1, 1000, dtype=np.float32))
        z = lf.exp(1j * 2 * np.pi * phase)
        w = z * z.conj() + z ** 2
        plan = w.explain()
        kernels = [line for line in plan.splitlines() if line.startswith("  launch k")]
        assert len(kernels) == 1, plan
        p = np.linspace(0, 1, 1000, dtype=np.float32)
        want = np.exp(1j * 2 * np.pi * p)
        _close(w, want * want.conj() + want ** 2, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- the FFT

def _signal(shape, dtype=np.complex128, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _fft_close(got, want, n):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.shape)
    tol = (1e-4 if want.dtype in (np.complex64, np.float32) else 1e-11) * max(1.0, np.log2(max(n, 2)))
    scale = max(1.0, float(np.abs(want).max(initial=0)))
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 12, 17, 31, 64])
@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_one_axis_transforms_match_numpy(backend, n, norm):
    x = _signal((3, n))
    real = x.real.copy()
    lx, lr = lf.asarray(x), lf.asarray(real)
    for name, a, la in [("fft", x, lx), ("ifft", x, lx), ("rfft", real, lr), ("ihfft", real, lr),
                        ("irfft", x, lx), ("hfft", x, lx)]:
        if name in ("irfft", "hfft") and n == 1:
            continue  # NumPy's default output length 2 (n - 1) is 0
        want = getattr(np.fft, name)(a, norm=norm)
        _fft_close(getattr(lf.fft, name)(la, norm=norm), want, n)
        _fft_close(getattr(np.fft, name)(la, norm=norm), want, n)


@pytest.mark.parametrize("axis", [0, 1, -1, 2])
def test_every_axis_cut_and_padded(backend, axis):
    x = _signal((4, 5, 6))
    lx = lf.asarray(x)
    for n in (None, 3, 5, 9):
        _fft_close(lf.fft.fft(lx, n=n, axis=axis), np.fft.fft(x, n=n, axis=axis), 9)
        _fft_close(lf.fft.irfft(lx, n=n, axis=axis), np.fft.irfft(x, n=n, axis=axis), 9)
        _fft_close(lf.fft.rfft(lx.real, n=n, axis=axis), np.fft.rfft(x.real, n=n, axis=axis), 9)


def test_several_axes_match_numpy(backend):
    x = _signal((4, 6, 5))
    r = x.real.copy()
    lx, lr = lf.asarray(x), lf.asarray(r)
    for name in ("fft2", "ifft2", "fftn", "ifftn"):
        _fft_close(getattr(lf.fft, name)(lx), getattr(np.fft, name)(x), 120)
        _fft_close(getattr(lf.fft, name)(lx, s=(3, 8), axes=(0, 2)),
                   getattr(np.fft, name)(x, s=(3, 8), axes=(0, 2)), 120)
    for name in ("rfft2", "rfftn"):
        _fft_close(getattr(lf.fft, name)(lr), getattr(np.fft, name)(r), 120)
    for name in ("irfft2", "irfftn"):
        _fft_close(getattr(lf.fft, name)(lx), getattr(np.fft, name)(x), 120)
        _fft_close(getattr(lf.fft, name)(lx, s=(4, 7)), getattr(np.fft, name)(x, s=(4, 7)), 120)
    _fft_close(lf.fft.fftn(lx, axes=(1,), norm="ortho"), np.fft.fftn(x, axes=(1,), norm="ortho"), 6)


def test_dtypes_follow_numpy():
    for dtype in (np.float16, np.float32, np.float64, np.int8, np.int64, np.bool_):
        a = np.arange(8).astype(dtype)
        assert lf.fft.fft(lf.asarray(a)).dtype == np.fft.fft(a).dtype, dtype
        assert lf.fft.rfft(lf.asarray(a)).dtype == np.fft.rfft(a).dtype, dtype
    a = _signal(16, np.complex64)
    assert lf.fft.ifft(lf.asarray(a)).dtype == np.complex64
    assert lf.fft.irfft(lf.asarray(a)).dtype == np.float32
    _fft_close(lf.fft.fft(lf.asarray(a)), np.fft.fft(a), 16)


def test_frequencies_and_shifts():
    for n in (1, 4, 7):
        np.testing.assert_allclose(np.asarray(lf.fft.fftfreq(n, 0.1)), np.fft.fftfreq(n, 0.1))
        np.testing.assert_allclose(np.asarray(lf.fft.rfftfreq(n, 2.0)), np.fft.rfftfreq(n, 2.0))
    x = np.arange(12.0).reshape(3, 4)
    for axes in (None, 0, (1,), (0, 1)):
        np.testing.assert_array_equal(np.asarray(lf.fft.fftshift(lf.asarray(x), axes)),
                                      np.fft.fftshift(x, axes))
        np.testing.assert_array_equal(np.asarray(lf.fft.ifftshift(lf.asarray(x), axes)),
                                      np.fft.ifftshift(x, axes))
    z = _signal((3, 5))
    np.testing.assert_array_equal(np.asarray(np.fft.fftshift(lf.asarray(z))), np.fft.fftshift(z))


def test_the_optics_loop_matches_numpy(backend):
    rng = np.random.default_rng(1)
    phase = rng.random((16, 16)).astype(np.float32)
    lp = lf.asarray(phase)
    got = np.abs(np.fft.fftshift(np.fft.fft2(np.fft.ifftshift(np.exp(1j * 2 * np.pi * lp))))) ** 2
    want = np.abs(np.fft.fftshift(np.fft.fft2(np.fft.ifftshift(np.exp(1j * 2 * np.pi * phase))))) ** 2
    assert isinstance(got, lf.Array) and got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-3, atol=1e-2)


def test_bad_arguments_raise_clear_errors():
    z = lf.asarray(_signal(4))
    with pytest.raises(lf.LazyfuseError, match="0 points"):
        lf.fft.fft(z, n=0)
    with pytest.raises(lf.LazyfuseError, match="axis 3"):
        lf.fft.fft(z, axis=3)
    with pytest.raises(lf.LazyfuseError, match="norm"):
        lf.fft.fft(z, norm="sideways")
    with pytest.raises(lf.DTypeError, match="complex input"):
        lf.fft.rfft(z)
    with pytest.raises(lf.LazyfuseError, match="one per axis"):
        lf.fft.fftn(z, s=(2, 2), axes=(0,))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.asarray(lf.fft.fft(z))  # no warnings on the way


def test_constructors_make_complex_arrays():
    np.testing.assert_array_equal(np.asarray(lf.zeros(3, np.complex64)), np.zeros(3, np.complex64))
    np.testing.assert_array_equal(np.asarray(lf.ones((2, 2), complex)), np.ones((2, 2), complex))
    got = lf.full(2, 1 - 2j)
    assert got.dtype == np.complex128
    np.testing.assert_array_equal(np.asarray(got), np.full(2, 1 - 2j))


def test_real_arrays_become_complex_where_numpy_makes_them():
    x = lf.asarray(np.arange(3, dtype=np.float32))
    z = x.astype(np.complex64)
    assert isinstance(z, lf.ComplexArray) and z.dtype == np.complex64
    np.testing.assert_array_equal(np.asarray(z), np.arange(3, dtype=np.complex64))
    np.testing.assert_array_equal(np.asarray(lf.eye(3, dtype=np.complex128)), np.eye(3, dtype=complex))
    np.testing.assert_array_equal(np.asarray(lf.full_like(x, 2j, dtype=np.complex64)),
                                  np.full(3, 2j, np.complex64))
    np.testing.assert_array_equal(np.asarray(lf.zeros_like(z)), np.zeros(3, np.complex64))
    # 0-d complex values stay 0-d; a NumPy result that is complex comes back lazy.
    s = lf.asarray(np.complex64(1 - 1j))
    assert s.shape == () and complex(s) == 1 - 1j
    assert isinstance(x._like(np.ones(2, complex)), lf.ComplexArray)
    assert z.device == x.device


@pytest.mark.parametrize("name", ["arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh",
                                  "expm1", "log1p"])
def test_inverse_functions_match_numpy_off_their_branch_points(backend, name):
    a = _values()
    # Away from the branch points, where the functions are infinite.
    a = a[(np.abs(a - 1) > 1e-9) & (np.abs(a + 1) > 1e-9) & (np.abs(a - 1j) > 1e-9)
          & (np.abs(a + 1j) > 1e-9)]
    got = getattr(np, name)(lf.asarray(a))
    _close(got, getattr(np, name)(a), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["arcsin", "arccos", "arcsinh", "arccosh"])
def test_inverse_functions_do_not_cancel_far_from_zero(name):
    a = np.array([2.4e-4 + 4000j, -3000 - 2e-3j, 5e3 + 1j, 1e-3 - 7e3j], dtype=np.complex64)
    got = np.asarray(getattr(np, name)(lf.asarray(a)))
    np.testing.assert_allclose(got, getattr(np, name)(a), rtol=1e-5)


def test_joining_choosing_and_matrix_products(backend):
    a = np.array([1 + 2j, 3 - 1j])
    r = np.array([5.0, 6.0])
    z, x = lf.asarray(a), lf.asarray(r)
    for got, want in [(lf.concatenate([z, x]), np.concatenate([a, r])),
                      (np.concatenate([z, z]), np.concatenate([a, a])),
                      (lf.stack([z, x], axis=1), np.stack([a, r], axis=1)),
                      (np.stack([z, z]), np.stack([a, a])),
                      (lf.where(z.real > 1, z, 0), np.where(a.real > 1, a, 0)),
                      (lf.where(x > 5, 1j, x), np.where(r > 5, 1j, r))]:
        assert isinstance(got, lf.ComplexArray)
        _close(got, want)
    m = np.array([[1 + 1j, 2], [0, 1j]])
    lm = lf.asarray(m)
    for got, want in [(lm @ lm, m @ m), (lf.asarray(m.real) @ lm, m.real @ m), (m.real @ lm, m.real @ m),
                      (np.matmul(lm, m), m @ m), (lm @ m.imag, m @ m.imag)]:
        _close(got, want)


def test_tanh_and_tan_of_values_that_are_not_finite_are_numpys():
    parts = [0.0, -0.0, 0.5, -2.0, 30.0, INF, -INF, NAN]
    a = np.array([complex(r, i) for r in parts for i in parts])
    for name in ("tanh", "tan"):
        with np.errstate(all="ignore"):
            want = getattr(np, name)(a)
        got = np.asarray(getattr(np, name)(lf.asarray(a)))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300, equal_nan=True)
        # Signs of zeros too.
        zero = want == 0
        assert np.array_equal(np.signbit(got.imag[zero]), np.signbit(want.imag[zero])), name


_STRUCTURAL = {
    "tile": lambda m, a: m.tile(a, (2, 1)), "repeat": lambda m, a: m.repeat(a, 2, axis=1),
    "flip": lambda m, a: m.flip(a, 0), "roll": lambda m, a: m.roll(a, 1, axis=1),
    "moveaxis": lambda m, a: m.moveaxis(a, 0, 1), "cumsum": lambda m, a: m.cumsum(a, axis=1),
    "diff": lambda m, a: m.diff(a), "trace": lambda m, a: m.trace(a),
    "expand_dims": lambda m, a: m.expand_dims(a, 0), "split": lambda m, a: m.split(a, 3)[1],
    "take": lambda m, a: m.take(a, [2, 0], axis=1), "broadcast_to": lambda m, a: m.broadcast_to(a[0], (3, 4)),
    "prod": lambda m, a: m.prod(a), "prod_axis": lambda m, a: m.prod(a, axis=1),
    "prod_keepdims": lambda m, a: m.prod(a, axis=0, keepdims=True),
    "cumprod": lambda m, a: m.cumprod(a, axis=1), "cumprod_flat": lambda m, a: m.cumprod(a),
    "sort": lambda m, a: m.sort(a, axis=1), "sort_columns": lambda m, a: m.sort(a, axis=0),
    "sort_flat": lambda m, a: m.sort(a, axis=None), "argsort": lambda m, a: m.argsort(a, axis=1),
}


@pytest.mark.parametrize("name", sorted(_STRUCTURAL))
def test_moving_repeating_sorting_and_products_stay_lazy_and_match_numpy(backend, name):
    z = np.array([[1 + 2j, 3 - 1j, 0.5j, 2], [2, -1 - 1j, 4 + 4j, 1j],
                  [NAN, 1, 1 - 1j, 1 + 1j]], np.complex128)
    f = _STRUCTURAL[name]
    got, want = f(lf, lf.asarray(z)), f(np, z)
    assert isinstance(got, (lf.ComplexArray, lf.Array))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    assert np.asarray(got).dtype == want.dtype


def test_item_assignment_lists_of_arrays_and_norms_of_complex_arrays():
    z = lf.asarray(np.array([1 + 1j, 2, 3j], np.complex64))
    view = np.asarray(z)
    z[1] = 5 - 2j
    z[0:2] = lf.asarray(np.array([7j, 8], np.complex64))
    z[2] = 4
    np.testing.assert_array_equal(np.asarray(z), [7j, 8, 4])
    np.testing.assert_array_equal(view, [1 + 1j, 2, 3j])  # a value handed out never changes
    stacked = lf.asarray([z, z])
    assert isinstance(stacked, lf.ComplexArray) and stacked.shape == (2, 3)
    a = np.array([[1 + 2j, 3 - 1j], [2, -1j]], np.complex64)
    b = np.array([[1j, 2], [3, 1 + 1j]], np.complex64)
    np.testing.assert_allclose(np.asarray(lf.linalg.vecdot(lf.asarray(a), lf.asarray(b))),
                               np.linalg.vecdot(a, b), rtol=1e-6)
    for ord in (2, 1, 0, np.inf):
        got = lf.linalg.vector_norm(lf.asarray(a), ord=ord)
        assert got.dtype == np.float32
        np.testing.assert_allclose(np.asarray(got), np.linalg.vector_norm(a, ord=ord), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(lf.linalg.matrix_norm(lf.asarray(a))),
                               np.linalg.matrix_norm(a), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(lf.linalg.norm(lf.asarray(a))), np.linalg.norm(a), rtol=1e-6)
    empty = lf.prod(lf.asarray(np.zeros((2, 0), np.complex64)), axis=1)
    np.testing.assert_array_equal(np.asarray(empty), [1, 1])


def test_order_extremes_and_comparisons_are_numpys(backend):
    a = np.array([1 + 2j, 1 + 3j, NAN + 0j, 2 - 1j, 1 + 1j, complex(1, NAN)])
    b = np.array([1 + 2.5j, 9j, 1 + 1j, complex(0, NAN), 1 + 1j, 1])
    la, lb = lf.asarray(a), lf.asarray(b)
    with np.errstate(invalid="ignore"):
        for f in (np.maximum, np.minimum, np.fmax, np.fmin, np.less, np.less_equal,
                  np.greater, np.greater_equal):
            np.testing.assert_array_equal(np.asarray(f(la, lb)), f(a, b), err_msg=f.__name__)
        np.testing.assert_array_equal(np.asarray(1 + 2j < la), 1 + 2j < a)
    finite = a[[0, 1, 3, 4]]
    assert complex(np.asarray(lf.asarray(finite).max())) == finite.max()
    assert complex(np.asarray(np.min(lf.asarray(finite)))) == finite.min()
    assert np.isnan(complex(np.asarray(la.max())))
    m = np.array([[1 + 2j, 3 - 1j, 0.5j], [2, -1 - 1j, 4 + 4j]])
    np.testing.assert_array_equal(np.asarray(lf.asarray(m).max(axis=1)), m.max(axis=1))
    np.testing.assert_array_equal(np.asarray(lf.asarray(m).min(axis=0, keepdims=True)),
                                  m.min(axis=0, keepdims=True))


def test_argmax_and_argmin_follow_numpys_order_and_nans(backend):
    rng = np.random.default_rng(0)
    z = (rng.integers(-3, 3, (4, 7)) + 1j * rng.integers(-3, 3, (4, 7))).astype(np.complex64)
    w = z.copy()
    w[1, 3], w[2, 5] = NAN, complex(1, NAN)
    for values in (z, w):
        lazy = lf.asarray(values)
        for axis in (None, 0, 1):
            np.testing.assert_array_equal(np.asarray(lazy.argmax(axis=axis)), values.argmax(axis=axis))
            np.testing.assert_array_equal(np.asarray(np.argmin(lazy, axis=axis)),
                                          np.argmin(values, axis=axis))
    assert np.asarray(lf.asarray(z).argmax(axis=1, keepdims=True)).shape == (4, 1)


def test_ufunc_out_writes_lazy_and_numpy_arrays_as_numpy_does(backend):
    z = _values(np.complex64).reshape(7, 7)
    a, b = lf.asarray(z), lf.asarray(z[::-1])
    out = lf.zeros((7, 7), dtype=np.complex64)
    assert np.add(a, b, out=out) is out
    _close(out, z + z[::-1], 1e-6, 1e-6)
    # A NumPy out, broadcast up, and a NumPy operand.
    wide = np.zeros((2, 7, 7), np.complex64)
    assert np.multiply(a, z, out=wide) is wide
    _close(wide, np.broadcast_to(z * z, (2, 7, 7)), 1e-5, 1e-5)
    # A wider complex out; a real result into a complex out.
    _close(np.exp(a, out=lf.zeros((7, 7), np.complex128)), np.exp(z).astype(np.complex128),
           1e-5, 1e-5)
    _close(np.abs(a, out=lf.zeros((7, 7), np.complex64)), np.abs(z).astype(np.complex64),
           1e-6, 1e-6)
    # NumPy's same_kind rule: no complex result into a real out.
    with pytest.raises(lf.DTypeError, match="same_kind"):
        np.add(a, b, out=np.zeros((7, 7), np.float32))


def test_reduction_out_is_numpys(backend):
    z = _values().reshape(7, 7)
    a = lf.asarray(z)
    for name in ("sum", "mean", "prod", "max", "min"):
        out = np.zeros(7, np.complex128)
        getattr(a, name)(axis=0, out=out)
        _close(out, getattr(z, name)(axis=0), 1e-9, 1e-9)
    lazy = lf.zeros(7, np.complex128)
    assert a.sum(axis=1, out=lazy) is lazy
    _close(lazy, z.sum(axis=1))
    positions = np.zeros(7, np.int32)
    a.argmax(axis=1, out=positions)
    np.testing.assert_array_equal(positions, z.argmax(axis=1))
    cumulative = np.zeros(49, np.complex128)
    a.cumsum(out=cumulative)
    _close(cumulative, z.cumsum())
    # Unsafe casting, as NumPy's reductions: the imaginary part goes,
    # with NumPy's warning.
    real = np.zeros(7)
    with pytest.warns(np.exceptions.ComplexWarning):
        a.sum(axis=0, out=real)
    np.testing.assert_allclose(real, z.sum(axis=0).real)
    with pytest.raises(lf.ShapeError, match="shape"):
        a.sum(axis=0, out=np.zeros((1, 7), np.complex128))
    with pytest.raises(lf.DTypeError, match="integer"):
        a.argmin(axis=0, out=np.zeros(7))


def test_vectorize_on_complex_values_is_numbas(backend):
    import cmath

    @lf.vectorize
    def shifted(z, w):
        return z * w + 1j

    @lf.vectorize(["complex64(complex64, complex64)", "complex128(complex128, complex128)"])
    def mixed(z, w):
        return cmath.exp(z) * w.conjugate() + abs(z)

    z = _values(np.complex64)[:20]
    lazy = lf.asarray(z)
    _close(shifted(lazy, z[::-1]), z * z[::-1] + 1j, 1e-6, 1e-6)
    # Real arguments of a function that meets complex numbers.
    real = np.arange(20.0)
    _close(shifted(real, 2.0), real * 2.0 + 1j)
    # Signatures: the first that the arguments cast to safely.
    got = mixed(z, lazy)
    assert got.dtype == np.complex64
    want = (np.exp(z) * z.conj() + np.abs(z)).astype(np.complex64)
    _close(got, want, 1e-5, 1e-4)
    assert mixed(z.astype(np.complex128), z).dtype == np.complex128
    out = np.zeros(20, np.complex64)
    assert mixed(z, z, out=out) is out
    _close(out, want, 1e-5, 1e-4)
    with pytest.raises(lf.CompileError, match="no signature"):
        mixed(z.astype(np.complex128), np.int64(1) + z.astype(np.complex128), np.zeros(1))
