"""Arrays inside ``@cuda.jit`` kernels (issue 47): ``alignment=`` of shared
and local arrays (refused: the kernel builder places them itself; ``None``
is no alignment)."""

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
