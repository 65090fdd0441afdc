"""CUDA's vector types in ``@cuda.jit`` kernels (``cuda.float32x4``, CUDA
C's aliases ``float4``/``short2``): constructed from numbers and smaller
vectors (converted to the base type), components read as ``.x`` … ``.w``,
vector locals re-bound, loops over tuples of vectors, vectors as kernel
arguments; and on the host (issue 47)."""

import numpy as np
import pytest

from lazyfuse import CompileError, cuda


def test_construct_and_read(backend):
    @cuda.jit
    def kernel(out, s):
        a = cuda.float64x4(1.0, 3.0, 5.0, s)
        b = cuda.short2(10.7, -11)
        c = cuda.uint8x3(b.x, cuda.uint8x2(300, 2))  # uint8: 300 wraps as C converts
        out[0] = a.x + a.y + a.z + a.w
        out[1] = b.x
        out[2] = b.y
        out[3] = c.x + c.y * 1000 + c.z * 100000
        out[4] = cuda.int32x2(7.9, 1).x

    out = np.zeros(5)
    kernel[1, 1](out, 7.5)
    assert out.tolist() == [16.5, 10, -11, 10 + 44 * 1000 + 2 * 100000, 7]


def test_fancy_construction_and_loops(backend):
    @cuda.jit
    def kernel(res):
        one = np.float32(1.0)
        v2 = cuda.float32x2(2.0, 3.0)
        v3 = cuda.float32x3(v2, one)
        j = 0
        for v in (v2, cuda.float32x2(one, v2.y)):
            res[j] = v.x
            res[j + 1] = v.y
            j += 2
        for v in tuple((v3, cuda.float32x3(one, v2))):  # `v` re-bound to vectors of 3
            res[j] = v.x + v.y + v.z
            j += 1
        w = cuda.float4(v3, 4.0)
        res[j] = w.w * 10 + w.z

    res = np.zeros(7, np.float32)
    kernel[1, 1](res)
    assert res.tolist() == [2, 3, 1, 3, 6, 6, 41]


def test_vector_arguments(backend):
    @cuda.jit
    def kernel(v, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = v.x * i + v.y + v.z

    out = np.zeros(4, np.float32)
    kernel[1, 4](cuda.float32x3(2, 1, 0.5), out)
    np.testing.assert_array_equal(out, np.arange(4, dtype=np.float32) * 2 + 1.5)


def test_host_vectors_and_names():
    v = cuda.int16x3(cuda.int16x2(1, 2), 3.9)
    assert (v.x, v.y, v.z) == (1, 2, 3) and v.z.dtype == np.int16
    assert cuda.short3 is cuda.int16x3 and cuda.double2 is cuda.float64x2
    assert cuda.vector_types["float32x4"].num_elements == 4
    assert cuda.vector_types["uint8x1"].base_type == cuda.uint8
    with pytest.raises(TypeError, match="expects 2 elements"):
        cuda.float2(1, 2, 3)


def test_refused():
    @cuda.jit
    def too_many(out):
        out[0] = cuda.float32x2(1, 2, 3).x

    @cuda.jit
    def rebound_in_branch(out):
        v = cuda.float32x2(1, 2)
        if out[0] > 0:
            v = cuda.float32x3(1, 2, 3)
        out[0] = v.x

    @cuda.jit
    def missing_component(out):
        out[0] = cuda.float32x2(1, 2).z

    for kernel, text in [(too_many, "float32x2 of 3 components"),
                         (rebound_in_branch, "inside a branch or a loop"),
                         (missing_component, "component .z of a vector of 2")]:
        with pytest.raises(CompileError, match=text):
            kernel[1, 1](np.zeros(1))
