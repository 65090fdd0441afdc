"""Arrays inside ``@cuda.jit`` kernels (issue 47): ``alignment=`` of shared
and local arrays (refused: the kernel builder places them itself; ``None``
is no alignment), ``a.shape[i]`` with an index known when running,
``a.reshape(shape)`` (a view in C order, ``-1`` inferred, written
through) and ``a.copy()`` (a local array), checked against NumPy."""

import numpy as np
import pytest

from lazyfuse import CompileError, cuda


def test_alignment_refused_none_accepted(backend):
    @cuda.jit
    def local_aligned(out):
        a = cuda.local.array(1, dtype=np.uint8, alignment=16)
        a[0] = 1
        out[0] = a[0]

    @cuda.jit
    def shared_aligned(out):
        a = cuda.shared.array(4, dtype=np.float32, alignment=64)
        a[0] = 1
        out[0] = a[0]

    @cuda.jit
    def unaligned(out):
        a = cuda.local.array(2, dtype=np.float64, alignment=None)
        a[1] = 2.5
        out[0] = a[1]

    @cuda.jit
    def misspelt(out):
        a = cuda.local.array(2, dtype=np.float64, align=16)
        out[0] = a[1]

    for kernel in (local_aligned, shared_aligned):
        with pytest.raises(CompileError, match="alignment is not supported"):
            kernel[1, 1](np.zeros(1))
    with pytest.raises(CompileError, match="keyword align="):
        misspelt[1, 1](np.zeros(1))
    out = np.zeros(1)
    unaligned[1, 1](out)
    assert out[0] == 2.5


def test_shape_at_run_time_index(backend):
    @cuda.jit(debug=True)
    def lengths(a, out):
        i = cuda.threadIdx.x
        out[i] = a.shape[i - 3]  # -3, -2, -1, 0, 1, 2

    a = np.zeros((2, 3, 4))
    out = np.zeros(6, np.int64)
    lengths[1, 6](a, out)
    assert out.tolist() == [2, 3, 4, 2, 3, 4]

    @cuda.jit(debug=True)
    def outside(a, out):
        x = cuda.threadIdx.x
        out[x] = a.shape[-x]

    with pytest.raises(IndexError, match="tuple index out of range"):
        outside[1, 3](np.zeros(2), np.zeros(3, np.int64))


GLOBAL = np.array([1, 2, 3])[::-1]


def test_reshape_reads_and_writes_through(backend):
    @cuda.jit
    def kernel(a, shape, got):
        y = a.reshape(shape)
        z = y.reshape(-1)
        for i in range(y.shape[0]):
            for j in range(y.shape[1]):
                got[i, j] = y[i, j]
        z[0] = y.size + len(z) * 100
        y[y.shape[0] - 1, y.shape[1] - 1] = -1

    a = np.arange(24.0).reshape(2, 1, 12)
    for shape in [(4, 6), (-1, 3), (12, -1)]:
        want_a = a.copy()
        want = want_a.reshape(shape).copy()
        want_a.reshape(-1)[0] = 24 + 2400
        want_a.reshape(shape)[-1, -1] = -1
        got_a, got = a.copy(), np.zeros(want.shape)
        kernel[1, 1](got_a, shape, got)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got_a, want_a)


def test_copy_of_known_shapes(backend):
    @cuda.jit
    def kernel(out):
        q = GLOBAL.copy()
        s = cuda.local.array((2, 2), np.int32)
        for i in range(2):
            for j in range(2):
                s[i, j] = i * 2 + j
        t = s.copy()
        s[0, 0] = 7
        q[0] = q[0] * 10
        for i in range(len(out) - 2):
            out[i] = q[i]
        out[3] = t[0, 0] + t[1, 1]
        out[4] = GLOBAL[0]

    out = np.zeros(5)
    kernel[1, 1](out)
    assert out.tolist() == [30, 2, 1, 3, 3]


def test_copy_of_an_argument_refused():
    @cuda.jit
    def kernel(a):
        b = a.copy()
        a[0] = b[0]

    with pytest.raises(CompileError, match="known only when running"):
        kernel[1, 1](np.zeros(3))


def test_datetime_arrays_and_numbers(backend):
    @cuda.jit
    def kernel(dates, target, delta, matches, shifted, gaps):
        i = cuda.grid(1)
        if i < dates.size:
            matches[i] = dates[i] == target
            shifted[i] = dates[i] - delta
            gaps[i] = dates[i] - dates[0]

    dates = np.arange("2005-02", "2005-04", dtype="datetime64[D]")
    target, delta = dates[5], np.timedelta64(3, "D")
    matches = np.zeros(dates.size, np.bool_)
    shifted = np.zeros_like(dates)
    gaps = np.zeros(dates.size, "timedelta64[D]")
    kernel[1, 64](dates, target, delta, matches, shifted, gaps)
    assert matches.nonzero()[0].tolist() == [5]
    np.testing.assert_array_equal(shifted, dates - delta)
    np.testing.assert_array_equal(gaps, dates - dates[0])

    with pytest.raises(CompileError, match="different units"):
        kernel[1, 1](dates, target, np.timedelta64(3, "h"), matches, shifted, gaps)
