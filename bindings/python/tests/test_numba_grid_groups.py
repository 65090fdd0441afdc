"""Cooperative groups in ``@cuda.jit`` kernels (``cuda.cg.this_grid()``,
``g.sync()``): a grid of one block synchronises through the block's
barrier; a larger cooperative launch is refused (issue 47)."""

import numpy as np
import pytest

from lazyfuse import CompileError, cuda, int32
from lazyfuse.errors import ArgumentError


def _sequential_rows(M):
    col = cuda.grid(1)
    g = cuda.cg.this_grid()
    for row in range(1, M.shape[0]):
        opposite = M.shape[1] - col - 1
        M[row, col] = M[row - 1, opposite] + 1
        g.sync()


@cuda.jit(device=True)
def _barrier():
    cuda.cg.this_grid().sync()


def test_grid_sync_orders_rows(backend):
    kernel = cuda.jit((int32[:, ::1],))(_sequential_rows)
    m = np.zeros((16, 16), np.int32)
    kernel[1, 16](m)
    np.testing.assert_array_equal(m, np.tile(np.arange(16), (16, 1)).T)
    assert kernel.overloads[(int32[:, ::1],)].max_cooperative_grid_blocks((4, 4)) == 1


def test_grid_sync_in_a_device_function(backend):
    @cuda.jit
    def kernel(a, out):
        i = cuda.grid(1)
        a[i] = i
        _barrier()
        out[i] = a[a.shape[0] - 1 - i]

    a, out = np.zeros(8), np.zeros(8)
    kernel[1, 8](a, out)
    np.testing.assert_array_equal(out, np.arange(8)[::-1])


def test_more_than_one_block_is_refused():
    kernel = cuda.jit(_sequential_rows)
    with pytest.raises(ArgumentError, match="one block"):
        kernel[2, 8](np.zeros((4, 16), np.int32))


def test_a_grid_group_used_as_a_value_is_refused():
    @cuda.jit
    def kernel(a):
        g = cuda.cg.this_grid()
        a[0] = g

    with pytest.raises(CompileError, match="grid group 'g'"):
        kernel[1, 1](np.zeros(1))
