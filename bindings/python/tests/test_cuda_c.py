"""CUDA C kernels through CuPy's and PyCUDA's interfaces (issue 48):
``RawKernel``/``RawModule``, ``ElementwiseKernel``, ``ReductionKernel``
and ``SourceModule`` translate their C into lazyfuse's kernel dialect and
run on every backend under test — with C's meaning (integer division
truncating, unsigned arithmetic wrapping, the usual arithmetic
conversions), against NumPy."""

import numpy as np
import pytest

import lazyfuse as lf
from lazyfuse import CompileError, _c_combine
from lazyfuse._c_translate import Unit

SAXPY = r"""
#define SHIFT 4
__device__ float square(float v) { return v * v; }

extern "C" __global__ void saxpy(float a, const float* __restrict__ x, float* y, int n) {
    // A grid-stride loop: any grid covers the array.
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += blockDim.x * gridDim.x) {
        y[k] = a * x[k] + square(y[k]) - (k / 3) % SHIFT;
    }
}
"""


def test_raw_kernel_runs_cuda_c_on_lazyfuse_and_numpy_arrays(backend):
    kernel = lf.RawKernel(SAXPY, "saxpy")
    xs = np.arange(10, dtype=np.float32)
    want = 2 * xs + 4 - (np.arange(10) // 3) % 4
    x, y = lf.asarray(xs), lf.full(10, 2.0, dtype=np.float32)
    kernel((1,), (4,), (np.float32(2.0), x, y, np.int32(10)))
    np.testing.assert_array_equal(np.asarray(y), want)
    # A NumPy array is copied in and back; a 2-D array is its elements in
    # order (CuPy passes a pointer to the first); a lazyfuse view's write
    # reaches its array.
    into = np.full((2, 5), 2.0, np.float32)
    kernel((3,), (2,), (2.0, x.reshape(2, 5), into, 10))
    np.testing.assert_array_equal(into.ravel(), want)
    whole = lf.full((2, 5), 2.0, dtype=np.float32)
    kernel((1,), (32,), (2.0, x, whole, 10))
    np.testing.assert_array_equal(np.asarray(whole).ravel(), want)


def test_c_arithmetic_keeps_c_meaning(backend):
    source = r"""
    __global__ void arith(const int* a, const int* b, int* quot, int* rem,
                          unsigned int* wrapped, float* mixed, int* shifted) {
        int i = threadIdx.x;
        quot[i] = a[i] / b[i];
        rem[i] = a[i] % b[i];
        unsigned int u = (unsigned int)a[i];
        wrapped[i] = u * 2654435761u + 1u;
        mixed[i] = a[i] / 2 + a[i] / 2.0f + (float)(b[i] > 0 ? 1 : -1);
        shifted[i] = (a[i] << 2) ^ (b[i] >> 1) | ~a[i] & 7;
    }
    """
    kernel = lf.RawModule(code=source).get_function("arith")
    a = np.array([-7, 7, -7, 7, 0, 123456], np.int32)
    b = np.array([2, 2, -2, -2, 5, -1000], np.int32)
    outs = [np.zeros(6, np.int32), np.zeros(6, np.int32), np.zeros(6, np.uint32),
            np.zeros(6, np.float32), np.zeros(6, np.int32)]
    kernel((1,), (6,), (a, b, *outs))
    np.testing.assert_array_equal(outs[0], np.trunc(a / b))
    np.testing.assert_array_equal(outs[1], np.fmod(a, b))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(outs[2], a.astype(np.uint32) * np.uint32(2654435761) + np.uint32(1))
    np.testing.assert_array_equal(outs[3], np.trunc(a / 2) + a / np.float32(2) + np.where(b > 0, 1, -1))
    np.testing.assert_array_equal(outs[4], (a << 2) ^ (b >> 1) | ~a & 7)


def test_shared_memory_loops_and_atomics(backend):
    source = r"""
    #define BLOCK 64
    __global__ void block_sums(const float* x, float* sums, int* count, int n) {
        __shared__ float part[BLOCK];
        int t = threadIdx.x;
        int i = blockIdx.x * BLOCK + t;
        part[t] = i < n ? x[i] : 0.0f;
        __syncthreads();
        for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
            if (t < stride) part[t] += part[t + stride];
            __syncthreads();
        }
        if (t == 0) {
            sums[blockIdx.x] = part[0];
            atomicAdd(&count[0], 1);
        }
        int k = 0;
        do { k++; if (k == 3) break; } while (true);
        if (t == 0 && blockIdx.x == 0) count[1] = k;
    }
    """
    kernel = lf.RawKernel(source, "block_sums")
    xs = np.arange(200, dtype=np.float32)
    sums, count = lf.zeros(4, dtype=np.float32), lf.zeros(2, dtype=np.int32)
    kernel((4,), (64,), (lf.asarray(xs), sums, count, np.int32(200)))
    np.testing.assert_array_equal(np.asarray(sums), np.add.reduceat(np.pad(xs, (0, 56)), [0, 64, 128, 192]))
    np.testing.assert_array_equal(np.asarray(count), [4, 3])


def test_a_for_loop_runs_its_step_on_continue_and_scopes_its_names(backend):
    source = r"""
    __global__ void odd_sums(int* out) {
        int total = 0;
        int i = 100;            // another i than the loop's
        for (int i = 0; i < 10; i++) {
            if (i % 2 == 0) continue;
            total += i;
        }
        int j = 0;
        for (; j * j < 50; j = j + 1) { if (j == 3) continue; }
        float i2 = 0.5f;
        { float total = 1.5f; i2 += total; }
        out[0] = total; out[1] = i; out[2] = j; out[3] = (int)(i2 * 2);
    }
    """
    out = lf.zeros(4, dtype=np.int32)
    lf.RawKernel(source, "odd_sums")((1,), (1,), (out,))
    np.testing.assert_array_equal(np.asarray(out), [25, 100, 8, 4])


def test_elementwise_kernel_is_a_lazy_ufunc_fused_with_its_neighbours():
    squared_diff = lf.ElementwiseKernel("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff")
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    y = np.arange(5, dtype=np.float32)
    with lf.use("sim") as cx:
        lx = lf.asarray(x)
        total = (squared_diff(lx, y) + 1).sum()
        before = cx.stats()["kernel_launches"]
        got = float(np.asarray(total))
        assert cx.stats()["kernel_launches"] - before == 1
    assert got == ((x - y) ** 2 + 1).sum()
    # float64 arguments make T float64: another kernel of the same source.
    np.testing.assert_array_equal(np.asarray(squared_diff(x.astype(np.float64), 1.5)),
                                  (x.astype(np.float64) - 1.5) ** 2)


def test_elementwise_kernel_with_raw_arguments_and_several_outputs(backend):
    reverse_add = lf.ElementwiseKernel("T x, raw T y", "T z", "z = x + y[_ind.size() - i - 1]",
                                       "reverse_add")
    a = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(reverse_add(lf.asarray(a), lf.asarray(a * 10))),
                                  a + (a * 10)[::-1])
    sincos = lf.ElementwiseKernel("float32 x", "float32 s, float32 c",
                                  "s = sinf(x); c = cosf(x);", "sincos")
    xs = np.linspace(0, 3, 7, dtype=np.float32)
    s, c = sincos(xs)
    np.testing.assert_allclose(np.asarray(s), np.sin(xs), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(c), np.cos(xs), rtol=1e-6, atol=1e-7)
    # Broadcast arguments, a number passed by value, the placeholder in a cast.
    indexed = lf.ElementwiseKernel("T x, T y", "T z", "z = x * y + (T)i", "indexed")
    grid = np.arange(10, dtype=np.float32).reshape(2, 5)
    np.testing.assert_array_equal(np.asarray(indexed(lf.asarray(grid), grid[0])),
                                  grid * grid[0] + np.arange(10).reshape(2, 5))
    np.testing.assert_array_equal(np.asarray(indexed(grid, np.float32(2))),
                                  grid * 2 + np.arange(10).reshape(2, 5))
    divide = lf.ElementwiseKernel("int32 x, int32 y", "int32 z", "z = x / y + x % y")
    xi, yi = np.array([-7, 7, -7, 7], np.int32), np.array([2, 2, -2, -2], np.int32)
    np.testing.assert_array_equal(np.asarray(divide(xi, yi)), np.trunc(xi / yi) + np.fmod(xi, yi))


def test_reduction_kernel_reduces_with_its_identity(backend):
    l2norm = lf.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    v = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_allclose(np.asarray(l2norm(v)), np.sqrt((v * v).sum()), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(l2norm(lf.asarray(v), axis=1)), np.sqrt((v * v).sum(1)),
                               rtol=1e-6)
    largest = lf.ReductionKernel("T x", "T y", "x", "a > b ? a : b", "y = a", "-INFINITY", "largest")
    np.testing.assert_array_equal(np.asarray(largest(v, axis=0, keepdims=True)), v.max(0, keepdims=True))
    floor = lf.ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a", "100", "floored")
    np.testing.assert_array_equal(np.asarray(floor(v, axis=1)), np.maximum(v.max(1), 100))
    empty = np.zeros((0, 3), np.float32)
    np.testing.assert_array_equal(np.asarray(floor(empty, axis=0)), [100, 100, 100])
    counts = lf.ReductionKernel("T x", "int32 y", "x > 5 ? 1 : 0", "a + b", "y = a", "0", "count",
                                reduce_type="int32")
    assert int(np.asarray(counts(v))) == int((v > 5).sum())


def test_pycuda_tutorial_programs_run_with_changed_imports(backend):
    import lazyfuse.pycuda.autoinit  # noqa: F401
    import lazyfuse.pycuda.driver as drv
    from lazyfuse.pycuda import gpuarray
    from lazyfuse.pycuda.compiler import SourceModule

    a = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
    a_gpu = drv.mem_alloc(a.nbytes)
    drv.memcpy_htod(a_gpu, a)
    module = SourceModule("""
      __global__ void doublify(float *a) {
        int idx = threadIdx.x + threadIdx.y * 4;
        a[idx] *= 2;
      }""")
    module.get_function("doublify")(a_gpu, block=(4, 4, 1))
    doubled = np.empty_like(a)
    drv.memcpy_dtoh(doubled, a_gpu)
    np.testing.assert_array_equal(doubled, 2 * a)

    module = SourceModule("""
    __global__ void multiply_them(float *dest, float *a, float *b) {
      const int i = threadIdx.x;
      dest[i] = a[i] * b[i];
    }""")
    multiply_them = module.get_function("multiply_them")
    x = np.random.default_rng(1).standard_normal(400).astype(np.float32)
    y = np.random.default_rng(2).standard_normal(400).astype(np.float32)
    dest = np.zeros_like(x)
    multiply_them(drv.Out(dest), drv.In(x), drv.In(y), block=(400, 1, 1), grid=(1, 1))
    np.testing.assert_array_equal(dest, x * y)
    on_device = gpuarray.to_gpu(x)
    multiply_them(on_device, drv.In(x), drv.In(y), block=(400, 1, 1))
    np.testing.assert_array_equal(on_device.get(), x * y)


def test_what_is_not_read_is_a_compile_error_naming_the_line():
    cases = {
        "struct P { float x; };": "structs",
        "__global__ void f(float* a) {\n  float* p = a + 1;\n}": "line 2: the pointer variable 'p'",
        "__global__ void f(float* a) { a[0] = b; }": "the name 'b' is not declared",
        "__global__ void f(float* a) { int i = 0; a[i++] = 1; }": "++ and -- inside an expression",
        "__global__ void f(float* a) { a[0] = \"x\"; }": "a string literal",
        "__global__ void f(float* a) { printf(\"%e\\n\", a[0]); }": "printf's '%e'",
        "__global__ void f(float* a) { switch (1) {} }": "switch statements are not supported",
        "template <typename T> __global__ void f(T* a) { f(a); }\n"
        "__global__ void g(float* a) { f(a); }": "line 2: a use of the template 'f' without",
        "template <typename T = float> __global__ void f(T* a) {}": "default template arguments",
        "__global__ void f(float* a) { a[0] = frobnicate(1.0f); }": "a call of 'frobnicate'",
        "#if defined(X)\n#endif": "#if of other than a number",
    }
    for source, message in cases.items():
        with pytest.raises(CompileError, match=message.replace("(", r"\(").replace("+", r"\+")):
            Unit(source)
    with pytest.raises(AttributeError, match="no __global__ function 'g'.*has f"):
        lf.RawModule(code="__global__ void f(float* a) {}").get_function("g")
    kernel = lf.RawKernel("__global__ void f(float* a, int n) { a[0] = n; }", "f")
    with pytest.raises(lf.ArgumentError, match="'a' is a float32\\*, got an array of float64"):
        kernel((1,), (1,), (np.zeros(3), 1))
    with pytest.raises(TypeError, match="takes 2 arguments, got 1"):
        kernel((1,), (1,), (np.zeros(3, np.float32),))


def test_the_preprocessor_expands_macros_and_reads_conditions():
    unit = Unit(r"""
    #define SQUARE(v) ((v) * (v))
    #define N 3
    #ifdef MISSING
    this is skipped entirely
    #else
    __constant__ float weights[N] = {1.0f, 2.0f, 3.0f};
    #endif
    #if 0
    skipped too
    #endif
    __global__ void f(float* out) {
        /* a comment */ out[threadIdx.x] = SQUARE(weights[threadIdx.x] + 1) * \
            N;
    }
    """)
    assert "weights" in unit.arrays and list(unit.arrays["weights"]) == [1.0, 2.0, 3.0]
    env = unit.namespace()
    out = np.zeros(3, np.float32)
    lf.cuda.jit("void(float32[:])")(env["f"])[1, 3](out)
    np.testing.assert_array_equal(out, (np.array([1, 2, 3]) + 1) ** 2 * 3)


MATMUL = r"""
#define TILE 16
extern "C" __global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
        int ak = t * TILE + threadIdx.x, bk = t * TILE + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ak < K) ? A[row * K + ak] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (bk < K && col < N) ? B[bk * N + col] : 0.0f;
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}
"""
HIST = r"""
__global__ void histogram(const unsigned char* data, unsigned int* bins, int n) {
    __shared__ unsigned int local[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) local[i] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += blockDim.x) atomicAdd(&bins[i], local[i]);
}
"""
WARP = r"""
__inline__ __device__ float warp_sum(float v) {
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffff, v, offset);
    return v;
}
__global__ void block_sum(const float* x, float* out, int n) {
    __shared__ float partial[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    v = warp_sum(v);
    int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < blockDim.x / warpSize ? partial[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0) atomicAdd(out, v);
    }
}
"""
MANDEL = r"""
__global__ void mandel(float* out, int w, int h, int iters) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float cr = -2.0f + 3.0f * x / w, ci = -1.5f + 3.0f * y / h;
    float zr = 0.0f, zi = 0.0f;
    int k = 0;
    while (k < iters && zr * zr + zi * zi < 4.0f) {
        float t = zr * zr - zi * zi + cr;
        zi = 2.0f * zr * zi + ci;
        zr = t;
        k++;
    }
    out[y * w + x] = (float)k;
}
"""


def test_classic_cuda_c_kernels_match_numpy(backend):
    """A tiled matrix product (2-D shared tiles, #pragma unroll), a
    histogram (shared atomics, unsigned char data), a warp-shuffle block
    sum (__device__ helper, warpSize) and a Mandelbrot escape loop."""
    rng = np.random.default_rng(0)
    M, N, K = 33, 20, 45
    A, B = rng.random((M, K), dtype=np.float32), rng.random((K, N), dtype=np.float32)
    C = lf.zeros((M, N), dtype=np.float32)
    lf.RawKernel(MATMUL, "matmul")(((N + 15) // 16, (M + 15) // 16), (16, 16),
                                   (lf.asarray(A), lf.asarray(B), C, M, N, K))
    np.testing.assert_allclose(np.asarray(C), A @ B, rtol=1e-5)
    data = rng.integers(0, 256, 5000).astype(np.uint8)
    bins = lf.zeros(256, dtype=np.uint32)
    lf.RawKernel(HIST, "histogram")((4,), (128,), (lf.asarray(data), bins, 5000))
    np.testing.assert_array_equal(np.asarray(bins), np.bincount(data, minlength=256))
    x = rng.random(1000, dtype=np.float32)
    total = lf.zeros(1, dtype=np.float32)
    lf.RawKernel(WARP, "block_sum")((4,), (256,), (lf.asarray(x), total, 1000))
    np.testing.assert_allclose(np.asarray(total), [x.sum()], rtol=1e-5)
    w, h, iters = 64, 48, 50
    image = lf.zeros((h, w), dtype=np.float32)
    lf.RawKernel(MANDEL, "mandel")((4, 3), (16, 16), (image, w, h, iters))
    cr = np.float32(-2.0) + np.float32(3.0) * np.arange(w, dtype=np.float32) / np.float32(w)
    ci = np.float32(-1.5) + np.float32(3.0) * np.arange(h, dtype=np.float32) / np.float32(h)
    zr, zi = np.zeros((h, w), np.float32), np.zeros((h, w), np.float32)
    count = np.zeros((h, w), np.float32)
    for _ in range(iters):
        alive = zr * zr + zi * zi < 4
        t = zr * zr - zi * zi + cr[None, :]
        zi = np.where(alive, np.float32(2) * zr * zi + ci[:, None], zi)
        zr = np.where(alive, t, zr)
        count += alive
    np.testing.assert_array_equal(np.asarray(image), count)


def test_nan_rules_of_c_math_and_an_elementwise_preamble(backend):
    source = r"""
    __global__ void nan_rules(const float* a, const float* b, float* out) {
        int i = threadIdx.x;
        out[i * 5 + 0] = fminf(a[i], b[i]);
        out[i * 5 + 1] = fmaxf(a[i], b[i]);
        out[i * 5 + 2] = min(a[i], b[i]);      // CUDA's min of floats is fminf
        out[i * 5 + 3] = __saturatef(a[i]);    // NaN becomes 0
        out[i * 5 + 4] = fdimf(a[i], b[i]);
    }"""
    a = np.array([1.0, np.nan, 2.0, -0.5, np.nan, 3.0], np.float32)
    b = np.array([np.nan, 1.0, 0.5, 0.25, np.nan, 7.0], np.float32)
    out = np.zeros(30, np.float32)
    lf.RawKernel(source, "nan_rules")((1,), (6,), (a, b, out))
    want = np.stack([np.fmin(a, b), np.fmax(a, b), np.fmin(a, b),
                     np.where(np.isnan(a), 0, np.clip(a, 0, 1)), np.where(a <= b, 0, a - b)], 1)
    np.testing.assert_array_equal(out.reshape(6, 5), want)
    scaled = lf.ElementwiseKernel("T x", "T y", "y = clamp01(x) * SCALE", "scaled", preamble="""
        #define SCALE 2
        __device__ float clamp01(float v) { if (v < 0.0f) return 0.0f; return fminf(v, 1.0f); }
    """)
    x = np.linspace(-1, 2, 7, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(scaled(x)), np.clip(x, 0, 1) * 2)


OUTSIDE_THE_SUBSET = r"""
struct Pair { float a, b; };
extern "C" __global__ void pair_sum(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Pair p; p.a = x[i]; p.b = 1.0f;
    if (i < n) y[i] = p.a + p.b;
}
"""


def test_cuda_c_outside_the_subset_runs_as_written_on_cuda_only(backend):
    kernel = lf.RawKernel(OUTSIDE_THE_SUBSET, "pair_sum")
    x, y = lf.asarray(np.arange(4, dtype=np.float32)), lf.zeros(4, dtype=np.float32)
    if backend == "cuda":
        kernel((1,), (4,), (x, y, 4))
        np.testing.assert_array_equal(np.asarray(y), np.arange(4) + 1)
        return
    with pytest.raises(CompileError, match=r"line 2: structs are not supported.*runs as written "
                                           r"on the cuda backend only, not on '(cpu|sim)'"):
        kernel((1,), (4,), (x, y, 4))


def test_cuda_c_outside_the_subset_compiles_with_nvrtc():
    import os
    kernel = lf.RawModule(code=OUTSIDE_THE_SUBSET).get_function("pair_sum")
    for arch in ("sm_80", "sm_90"):
        try:
            kernel.compile(arch)
        except lf.BackendError as e:
            if os.environ.get("LAZYFUSE_REQUIRE_NVRTC") == "1":
                raise
            pytest.skip(f"NVRTC is not available here: {e}")


def test_reduction_kernel_with_any_associative_reduce_expression(backend):
    """A reduce expression lazyfuse has no reduction for is combined by
    its own C (one native custom reduction of it: below)."""
    x = np.random.default_rng(0).integers(0, 1000, (7, 13)).astype(np.int32)
    xor = lf.ReductionKernel("T x", "T y", "x", "a ^ b", "y = a", "0", "xor_all")
    assert int(np.asarray(xor(x))) == np.bitwise_xor.reduce(x.ravel())
    np.testing.assert_array_equal(np.asarray(xor(lf.asarray(x), axis=1)),
                                  np.bitwise_xor.reduce(x, axis=1))
    largest_magnitude = lf.ReductionKernel("T x", "T y", "x", "fabsf(a) > fabsf(b) ? a : b",
                                           "y = a", "0", "largest_magnitude")
    v = np.random.default_rng(1).standard_normal((5, 9)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(largest_magnitude(v, axis=1)),
                                  v[np.arange(5), np.abs(v).argmax(1)])
    assert np.asarray(largest_magnitude(v, axis=1, keepdims=True)).shape == (5, 1)
    # The identity joins the elements: a bitwise or started from 1024.
    with_bit = lf.ReductionKernel("T x", "T y", "x", "a | b", "y = a", "1024", "or_all")
    assert int(np.asarray(with_bit(x))) == np.bitwise_or.reduce(x.ravel()) | 1024


def test_a_reduction_preamble_reads_the_type_placeholders(backend):
    # CuPy declares the placeholders ahead of a reduction's preamble, so its
    # functions may use them, also where the post-map expression calls them.
    kernel = lf.ReductionKernel("T x", "T y", "x", "a + b", "y = halved(a)", "0", "half_sum",
                                preamble="__device__ T halved(T v) { return v / 2; }")
    for dtype in (np.float32, np.int32):
        x = np.arange(-12, 7, dtype=dtype).reshape(1, 19)  # a sum of -57
        got = np.asarray(kernel(x, axis=1))
        assert got.dtype == dtype
        want = x.sum(1) / 2 if dtype == np.float32 else np.trunc(x.sum(1) / 2)
        np.testing.assert_array_equal(got, want)


def test_what_a_combine_expression_can_say():
    """The C of a reduce expression as lazyfuse's expression language, or
    None where the language cannot say what the C does in the reduce type
    (then the reduction takes another way)."""
    def expression(ctype, expr, preamble=""):
        unit = Unit(f"{preamble}\n__device__ {ctype} f({ctype} a, {ctype} b) {{ return ({expr}); }}")
        return _c_combine.expression(unit.namespace(), "f", unit.functions["f"].params[0][0])

    assert expression("float", "a * b + a + b") == "(((a * b) + a) + b)"
    assert expression("float", "fabsf(a) > fabsf(b) ? a : b") == "where((abs(a) > abs(b)), a, b)"
    assert expression("float", "a + b + 1.5f") == "((a + b) + 1.5)"  # a float constant
    assert expression("double", "a + b + 1.5f") == "((a + b) + 1.5)"  # exact in double
    assert expression("unsigned int", "a * b + 1u") == "((a * b) + 1)"  # wrapping, as C's
    assert expression("int", "max(a, b)") == "maximum(a, b)"
    # NaN loses in fmaxf, as in C.
    assert expression("float", "fmaxf(a, b)") == "where((a != a), b, where((b != b), a, maximum(a, b)))"
    # C's truncating division of signed integers; a branching device function.
    assert expression("int", "a / 2") == "where(((a < 0) == False), (abs(a) // 2), (-(abs(a) // 2)))"
    assert expression("int", "pick(a, b)", "__device__ int pick(int x, int y) {"
                                           " if (x > y) return x - y; return y; }") == (
        "where((a > b), (a - b), b)")
    # Conversions: a float's double arithmetic, a comparison's bool as an
    # int, short arithmetic in int; and what the language has no operation for.
    for ctype, expr in [("float", "a + b + 0.5"), ("int", "a > b"), ("short", "a + b"),
                        ("float", "erff(a) + b"), ("float", "fmaf(a, b, 1.0f)"),
                        ("float", "a > b ? 1.0f : 0.0f")]:
        assert expression(ctype, expr) is None, (ctype, expr)


# Custom reduce expressions with a NumPy function of the same meaning.
PLUS_TIMES = ("a * b + a + b", lambda a, b: a * b + a + b)
LARGEST_MAGNITUDE = ("abs(a) > abs(b) ? a : b", lambda a, b: np.where(np.abs(a) > np.abs(b), a, b))
LARGER_MAGNITUDE = """
__device__ T larger_magnitude(T x, T y) {
    if (abs(x) > abs(y)) return x;
    return y;
}
"""


def _reduced(combine, x, axis, keepdims):
    """``x`` reduced over ``axis`` by ``combine`` one element after another
    (in NumPy, in ``x``'s dtype)."""
    axes = tuple(range(x.ndim)) if axis is None else (axis,) if isinstance(axis, int) else axis
    axes = tuple(a % x.ndim for a in axes)
    kept = [a for a in range(x.ndim) if a not in axes]
    rows = np.transpose(x, kept + list(axes)).reshape([x.shape[a] for a in kept] + [-1])
    with np.errstate(all="ignore"):
        result = rows[..., 0]
        for k in range(1, rows.shape[-1]):
            result = combine(result, rows[..., k]).astype(x.dtype)
    return result.reshape([1 if a in axes else n for a, n in enumerate(x.shape)]) if keepdims else result


def _distinct_magnitudes(rng, shape, dtype):
    """Values with no two of one magnitude (a magnitude picks one alone)."""
    n = int(np.prod(shape))
    values = (rng.permutation(n) + 1) * rng.choice([-1, 1], n)
    return (values * (0.25 if np.dtype(dtype).kind == "f" else 1)).astype(dtype).reshape(shape)


def _launches(cx, array):
    """The value of ``array`` and how many kernels computing it launched."""
    before = cx.stats()["kernel_launches"]
    value = np.asarray(array)
    return value, cx.stats()["kernel_launches"] - before


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("axis", [None, 1, -1, (0, 2), (2, 0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_custom_reduce_expressions_match_numpy(backend, dtype, axis, keepdims):
    rng = np.random.default_rng(7)
    shape = (4, 5, 6)
    if np.dtype(dtype).kind == "f":
        small = (rng.standard_normal(shape) * 0.05).astype(dtype)
    else:  # products of 1s, 2s and 3s: past int32's range, they wrap as NumPy's do
        small = rng.integers(0, 3, shape).astype(dtype)
    magnitudes = _distinct_magnitudes(rng, shape, dtype)
    for (expr, combine), x, preamble in [(PLUS_TIMES, small, ""), (LARGEST_MAGNITUDE, magnitudes, ""),
                                        (("larger_magnitude(a, b)", LARGEST_MAGNITUDE[1]), magnitudes,
                                         LARGER_MAGNITUDE)]:
        kernel = lf.ReductionKernel("T x", "T y", "x", expr, "y = a", "0", "custom", preamble=preamble)
        result = kernel(lf.asarray(x), axis=axis, keepdims=keepdims)
        assert "reduce 'custom'" in result.explain()  # the native reduction of the expression
        got = np.asarray(result)
        want = _reduced(combine, x, axis, keepdims)
        assert got.dtype == dtype and got.shape == want.shape, expr
        if np.dtype(dtype).kind == "f" and expr == PLUS_TIMES[0]:
            np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)
        else:
            np.testing.assert_array_equal(got, want, err_msg=expr)


def test_a_custom_reduce_expression_is_one_reduction_launch():
    # On the simulated GPU: one kernel reads the elements through the map
    # expression, reduces them with the reduce expression's own combine,
    # and writes them through the post-map expression.
    x = np.random.default_rng(3).standard_normal((6, 7, 8)).astype(np.float32) * 0.1
    want = np.sqrt(np.prod(x.astype(np.float64) ** 2 + 1, axis=1) - 1)
    kernel = lf.ReductionKernel("T x", "T y", "x * x", "a * b + a + b", "y = sqrt(a)", "0", "plus_times")
    magnitude = lf.ReductionKernel("T x", "T y", "x", "fabsf(a) > fabsf(b) ? a : b", "y = a", "0",
                                   "largest_magnitude")
    with lf.use("sim") as cx:
        lazy = lf.asarray(x)
        result = kernel(lazy, axis=1)
        assert "reduce 'plus_times' axes [1]" in result.explain()
        got, launches = _launches(cx, result)
        np.testing.assert_allclose(got, want, rtol=1e-4)
        assert launches == 1
        for axis, keepdims in [(None, False), (-1, True), ((0, 1, 2), True)]:
            got, launches = _launches(cx, magnitude(lazy, axis=axis, keepdims=keepdims))
            assert launches == 1, (axis, keepdims)
            np.testing.assert_array_equal(got, _reduced(LARGEST_MAGNITUDE[1], x, axis, keepdims))
        # Several axes but not all: one launch too.
        got, launches = _launches(cx, magnitude(lazy, axis=(0, 2)))
        assert launches == 1
        np.testing.assert_array_equal(got, _reduced(LARGEST_MAGNITUDE[1], x, (0, 2), False))
        # An identity that is no neutral element joins once, in the same launch.
        bits = lf.ReductionKernel("T x", "T y", "x", "a | b", "y = a", "1024", "or_all")
        ints = np.random.default_rng(4).integers(0, 1000, (7, 13)).astype(np.int32)
        got, launches = _launches(cx, bits(lf.asarray(ints), axis=1))
        assert launches == 1
        np.testing.assert_array_equal(got, np.bitwise_or.reduce(ints, axis=1) | 1024)


def test_a_custom_reduction_equals_the_rounds_of_pairs(backend, monkeypatch):
    rng = np.random.default_rng(5)
    floats = (rng.standard_normal((9, 11)) * 0.1).astype(np.float32)
    ints = rng.integers(-1000, 1000, (9, 11)).astype(np.int32)
    cases = [(PLUS_TIMES[0], floats), (LARGEST_MAGNITUDE[0], _distinct_magnitudes(rng, (9, 11), np.int32)),
             ("a ^ b", ints), ("min(a + b, 5000)", np.abs(ints))]

    def results(native):
        values = []
        for expr, x in cases:
            kernel = lf.ReductionKernel("T x", "T y", "x", expr, "y = a", "0", "custom")
            for axis in (None, 0, 1):
                result = kernel(x, axis=axis)
                assert ("reduce 'custom'" in result.explain()) == native, expr
                values.append(np.asarray(result))
        return values

    native = results(True)
    # Without a combine expression each kernel falls back to the rounds.
    monkeypatch.setattr(_c_combine, "expression", lambda env, name, dtype: None)
    for got, want in zip(native, results(False)):
        np.testing.assert_allclose(got, want, rtol=1e-5)


def test_custom_reductions_of_empty_and_one_element_inputs(backend):
    kernel = lf.ReductionKernel("T x", "T y", "x", "a * b + a + b", "y = a + 1", "0", "plus_times")
    for dtype in (np.float32, np.int32):
        np.testing.assert_array_equal(np.asarray(kernel(np.zeros(0, dtype))), 1)  # post-map(identity)
        got = np.asarray(kernel(np.zeros((3, 0), dtype), axis=1, keepdims=True))
        np.testing.assert_array_equal(got, np.ones((3, 1), dtype))
        assert np.asarray(kernel(np.zeros((0, 4), dtype), axis=1)).shape == (0,)
        np.testing.assert_array_equal(np.asarray(kernel(np.array([5], dtype))), 6)
        np.testing.assert_array_equal(np.asarray(kernel(np.array([[2], [3]], dtype), axis=1)), [3, 4])
    # An identity that is no neutral element joins a single element too.
    bits = lf.ReductionKernel("T x", "T y", "x", "a | b", "y = a", "1024", "or_all")
    assert int(np.asarray(bits(np.array([3], np.int32)))) == 1027


def test_custom_reduction_types_and_out(backend):
    # reduce_type: float32 inputs reduced in double, written as T.
    x = (np.random.default_rng(6).standard_normal(50) * 0.1).astype(np.float32)
    kernel = lf.ReductionKernel("T x", "T y", "x", "a * b + a + b", "y = a", "0", "plus_times",
                                reduce_type="float64")
    want = np.prod(x.astype(np.float64) + 1) - 1
    got = kernel(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    out = lf.zeros((), dtype=np.float32)
    kernel(lf.asarray(x), out=out)
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        kernel(x.reshape(5, 10), axis=(1, -1))


def test_a_reduce_expression_without_a_combine_runs_as_rounds():
    # `a + b + 0.5` of floats computes in double; `a + b + 0.5f` has no
    # neutral element to pad with: both reduce as rounds of pairs.
    x = np.arange(16, dtype=np.float32)
    with lf.use("sim") as cx:
        for expr in ("a + b + 0.5", "a + b + 0.5f"):
            kernel = lf.ReductionKernel("T x", "T y", "x", expr, "y = a", "0", "halves")
            got, launches = _launches(cx, kernel(lf.asarray(x)))
            assert launches > 1
            # The identity 0 joins once after the 15 combines of the elements.
            assert float(got) == x.sum() + 0.5 * 16
