"""More of Numba's CUDA dialect (issue 47): ``cuda.devicearray``
(``auto_device``), division by zero reported by ``debug=True`` kernels,
``lazyfuse.extending.overload`` and dead branches pruned, checked against
NumPy on every backend."""

import numpy as np
import pytest

from lazyfuse import CompileError, cuda, extending
from lazyfuse.extending import overload


def test_auto_device_copies_numbers_and_contiguous_arrays(backend):
    d, converted = cuda.devicearray.auto_device(2)
    assert converted and d.copy_to_host() == 2
    host = np.arange(6.0).reshape(2, 3)
    d, converted = cuda.devicearray.auto_device(host.T)  # Fortran order: one region
    np.testing.assert_array_equal(d.copy_to_host(), host.T)
    same, converted = cuda.devicearray.auto_device(d)
    assert same is d and not converted
    assert cuda.devicearray.is_cuda_ndarray(d) and not cuda.devicearray.is_cuda_ndarray(host)
    empty, _ = cuda.devicearray.auto_device(host, copy=False)
    assert empty.shape == host.shape and empty.dtype == host.dtype


def test_auto_device_refuses_strided_buffers():
    import lazyfuse.cuda.devicearray as devicearray
    with pytest.raises(ValueError, match="non-contiguous"):
        devicearray.auto_device(np.arange(10.0)[::2])
    # A broadcast axis repeats one element: its core is contiguous.
    d, _ = devicearray.auto_device(np.broadcast_to(np.arange(3.0), (4, 3)))
    np.testing.assert_array_equal(d.copy_to_host(), np.broadcast_to(np.arange(3.0), (4, 3)))


@cuda.jit(device=True)
def _floor_half(a, b):
    return a // b


@cuda.jit(debug=True)
def _divides(r, x, y):
    i = cuda.grid(1)
    if i < r.size:
        # Guarded divisions are checked under their guards only.
        r[i] = y[i] / x[i] if x[i] != 0 else -1.0
        if x[i] != 0 and y[i] % x[i] == 0:
            r[i] += 10
        r[i] += _floor_half(int(y[i]), int(x[i]) + 1)


def test_debug_kernels_report_division_by_zero(backend):
    x, y = np.array([0.0, 1, 2, 4]), np.array([1.0, 2, 3, 8])
    r = np.zeros(4)
    _divides[1, 4](r, x, y)
    want = np.where(x != 0, y / np.where(x != 0, x, 1), -1.0)
    want += np.where((x != 0) & (y % np.where(x != 0, x, 1) == 0), 10, 0)
    want += y.astype(int) // (x.astype(int) + 1)
    np.testing.assert_array_equal(r, want)
    x[2] = -1.0  # the device function divides by int(x) + 1 == 0 in thread 2
    with pytest.raises(ZeroDivisionError, match=r"tid=\[2, 0, 0\].*division by zero") as e:
        _divides[1, 4](np.zeros(4), x, y)
    assert isinstance(e.value, FloatingPointError)  # as Numba's simulator raises


def test_division_by_zero_stops_the_thread(backend):
    @cuda.jit(debug=True)
    def f(r, x, y):
        r[0] = y[0] / x[0]
        r[1] = y[0]
        r[2] //= x[0]

    r = np.zeros(3)
    with pytest.raises(ZeroDivisionError):
        f[1, 1](r, np.zeros(1), np.ones(1))
    assert (r == 0).all()

    @cuda.jit
    def g(r, x, y):  # without debug: IEEE's infinity, and on
        r[0] = y[0] / x[0]
        r[1] = y[0]

    r = np.zeros(2)
    g[1, 1](r, np.zeros(1), np.ones(1))
    assert np.isinf(r[0]) and r[1] == 1


def _apply(value, func):
    return func(value)


def _clipped(x, lo, hi):  # overloaded below with a typer choosing by type
    return min(max(x, lo), hi)


_seen_types = []


@overload(_apply)
def _apply_typer(value, func):
    assert isinstance(func, extending.Function)
    return lambda value, func: func(value)


@overload(_clipped)
def _clipped_typer(x, lo, hi):
    _seen_types.append((x, lo, hi))
    if isinstance(lo, extending.Computed) or isinstance(hi, extending.Computed):
        return None  # only bounds known when compiling

    def impl(x, lo, hi):
        if x < lo:
            return lo
        if x > hi:
            return hi
        return x
    return impl


def test_overload_inlines_the_implementation_its_typer_gives(backend):
    @cuda.jit
    def kernel(out, a):
        i = cuda.grid(1)
        if i < a.size:
            def triple(v):
                return 3 * v
            out[i] = _apply(a[i], triple) + _clipped(a[i], 2, 5)

    a = np.arange(8.0)
    out = np.zeros(8)
    kernel[1, 8](out, a)
    np.testing.assert_array_equal(out, 3 * a + np.clip(a, 2, 5))
    assert _seen_types[-1][1:] == (cuda.int64, cuda.int64)  # numbers known when compiling
    assert isinstance(_seen_types[-1][0], extending.Computed)
    assert _apply(2, lambda v: v + 1) == 3  # outside kernels: the Python function


def test_overload_without_implementation_is_refused():
    @cuda.jit
    def kernel(out, a):
        out[0] = _clipped(a[0], a[1], 5)

    with pytest.raises(CompileError, match="no implementation"):
        kernel[1, 1](np.zeros(1), np.arange(2.0))


def test_dead_branches_of_known_tests_are_pruned(backend):
    @cuda.jit
    def kernel(out):
        def total(*z):
            if len(z) == 1:
                tmp = z[0]
            elif len(z) == 2:
                tmp = z[0] + z[1]  # z[1] of a 1-tuple: never translated
            else:
                tmp = -1
            return tmp
        out[0] = total(4)
        out[1] = total(4, 5)
        out[2] = total(1, 2, 3)

    out = np.zeros(3, np.int64)
    kernel[1, 1](out)
    np.testing.assert_array_equal(out, [4, 9, -1])


def test_views_reinterpret_integer_bytes(backend):
    @cuda.jit
    def kernel(b, words, out16, out8, start):
        i = cuda.grid(1)
        if i < out16.size:
            out16[i] = b[start:start + 12].view(np.int16)[i]  # two bytes each
            narrow = words.view(np.uint8)
            out8[i] = narrow[i]  # a byte of a wider element
            if i == 0:
                wide = b.view(np.uint32)
                wide[1] = 0xDEADBEEF  # four bytes written
                w = words.view(np.int64)
                w[0] += 1

    b = np.arange(200, 216, dtype=np.uint8)
    words = np.array([-2, 0x01020304], dtype=np.int32)
    out16, out8 = np.zeros(6, np.int16), np.zeros(6, np.uint8)
    want_b, want_words = b.copy(), words.copy()
    want16 = want_b[3:15].view(np.int16).copy()
    want8 = want_words.view(np.uint8)[:6].copy()
    want_b.view(np.uint32)[1] = 0xDEADBEEF
    want_words.view(np.int64)[0] += 1
    kernel[1, 6](b, words, out16, out8, 3)
    np.testing.assert_array_equal(out16, want16)
    np.testing.assert_array_equal(out8, want8)
    np.testing.assert_array_equal(b, want_b)
    np.testing.assert_array_equal(words, want_words)


def test_views_refused_where_bits_cannot_be_cast():
    @cuda.jit
    def as_float(out, a):
        out[0] = a.view(np.float32)[0]

    with pytest.raises(CompileError, match="bit cast"):
        as_float[1, 1](np.zeros(1, np.float32), np.zeros(4, np.int32))

    @cuda.jit
    def narrowing_write(a):
        a.view(np.uint8)[1] = 7

    with pytest.raises(CompileError, match="narrower"):
        narrowing_write[1, 1](np.zeros(2, np.int32))


def test_cusource_holds_its_source_and_linking_is_refused():
    source = cuda.CUSource('extern "C" __device__ int times2(int *out, int a) { *out = 2 * a; return 0; }')
    assert "times2" in source.data and source.kind == "cu"
    with pytest.raises(CompileError, match="declare_device\\('times2'\\): linking external device"):
        cuda.declare_device("times2", "int32(int32)", link=source)
