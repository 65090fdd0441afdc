"""The tutorials' @cuda.jit kernels and @guvectorize functions, written in
Python and translated to lazyfuse's kernel builder."""

import math
import re

import numpy as np
import pytest

import lazyfuse as lf
from lazyfuse import CompileError, cuda, float32, float64, guvectorize


@cuda.jit
def increment_by_one(an_array):
    pos = cuda.grid(1)
    if pos < an_array.size:
        an_array[pos] += 1


@cuda.jit(device=True)
def twice(x):
    return 2 * x


@cuda.jit
def doubled(arr, out):
    x, y = cuda.grid(2)
    if x < arr.shape[0] and y < arr.shape[1]:
        out[x, y] = twice(arr[x, y])


@cuda.jit
def block_sum(values, sums):
    tile = cuda.shared.array(64, np.float32)
    i = cuda.threadIdx.x
    tile[i] = values[cuda.blockIdx.x * 64 + i]
    cuda.syncthreads()
    stride = 32
    while stride > 0:
        if i < stride:
            tile[i] += tile[i + stride]
        cuda.syncthreads()
        stride //= 2
    if i == 0:
        sums[cuda.blockIdx.x] = tile[0]


@cuda.jit
def histogram(values, bins):
    i = cuda.grid(1)
    if i < values.shape[0]:
        cuda.atomic.add(bins, values[i] % 8, 1)


BACKENDS = ["cpu", "sim"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_arguments_are_copied_back(backend):
    with lf.use(backend):
        a = np.arange(100, dtype=np.float32)
        increment_by_one[4, 32](a)
        assert a.tolist() == [float(v + 1) for v in range(100)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_device_arrays_stay_lazy_and_are_rebound(backend):
    with lf.use(backend):
        d = cuda.to_device(np.zeros(10, dtype=np.int64))
        increment_by_one[1, 32](d)
        increment_by_one[1, 32](d)
        assert d.copy_to_host().tolist() == [2] * 10


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_d_grid_and_device_functions(backend):
    with lf.use(backend):
        arr = np.arange(12, dtype=np.float64).reshape(3, 4)
        out = np.zeros_like(arr)
        doubled[(1, 1), (4, 4)](arr, out)
        assert out.tolist() == (arr * 2).tolist()


@pytest.mark.parametrize("backend", BACKENDS)
def test_shared_memory_barriers_and_atomics(backend):
    with lf.use(backend):
        values = np.arange(256, dtype=np.float32)
        sums = np.zeros(4, dtype=np.float32)
        block_sum[4, 64](values, sums)
        assert sums.tolist() == values.reshape(4, 64).sum(axis=1).tolist()
        data = np.arange(100, dtype=np.int32)
        bins = np.zeros(8, dtype=np.int32)
        histogram[4, 32](data, bins)
        assert bins.tolist() == np.bincount(data % 8, minlength=8).tolist()


@guvectorize([(float32[:, :], float32[:, :])], "(m,n)->(m,n)", target="cuda")
def doubled_gufunc(arr, out):
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            out[i, j] = arr[i, j] * 2


@guvectorize(["void(float64[:], intp[:], float64[:])"], "(n),()->(n)")
def move_mean(a, window_arr, out):
    window_width = window_arr[0]
    asum = 0.0
    count = 0
    for i in range(window_width):
        asum += a[i]
        count += 1
        out[i] = asum / count
    for i in range(window_width, len(a)):
        asum += a[i] - a[i - window_width]
        out[i] = asum / count


@guvectorize(["void(float64[:], float64[:])"], "(n)->()")
def norm(x, res):
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i] * x[i]
    res[0] = math.sqrt(total)


def test_guvectorize_tutorials():
    arr = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = cuda.device_array_like(arr)
    doubled_gufunc(arr, out)
    assert out.copy_to_host().tolist() == (arr * 2).tolist()
    assert np.asarray(doubled_gufunc(arr)).tolist() == (arr * 2).tolist()

    a = np.arange(20, dtype=np.float64).reshape(2, 10)
    got = np.asarray(move_mean(a, np.array([3])))
    want = np.array([[np.mean(row[max(0, i - 2):i + 1]) for i in range(10)] for row in a])
    np.testing.assert_allclose(got, want)

    x = np.random.default_rng(0).standard_normal((5, 7))
    np.testing.assert_allclose(np.asarray(norm(x)), np.linalg.norm(x, axis=1))


@guvectorize([(float32[:], float32[:]), (float64[:], float64[:])], "(n)->(n)")
def doubled_positives(x, out):
    for i in range(x.shape[0]):
        if x[i] > 0:
            v = x[i] * 2
        else:
            v = x[i]
        out[i] = v


def test_a_gufunc_local_first_assigned_in_a_branch_has_each_signatures_type():
    for dtype in (np.float32, np.float64):
        x = np.array([[-1.0, 2.0, 0.5], [3.0, -4.0, 0.0]], dtype=dtype)
        got = np.asarray(doubled_positives(x))
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, np.where(x > 0, x * 2, x))


@cuda.jit
def scaled_or_clamped(values, out, limit):
    i = cuda.grid(1)
    if i >= values.size:
        return
    v = values[i] * 2
    if v > limit:
        if i == 0:
            return
        out[i] = limit
        return
    out[i] = v


@pytest.mark.parametrize("backend", ["cpu", "sim"])
def test_an_early_return_ends_the_threads_work(backend):
    with lf.use(backend):
        values = np.arange(10, dtype=np.float32)
        out = np.full(10, -1.0, dtype=np.float32)
        # 64 threads for 10 elements: the threads past the end return first.
        scaled_or_clamped[2, 32](values, out, 9.0)
        want = np.where(values * 2 > 9, 9.0, values * 2).astype(np.float32)
        np.testing.assert_array_equal(out, want)


def test_outside_the_subset_is_a_compile_error_naming_the_line():
    @cuda.jit
    def uses_a_list(a):
        items = [1, 2]
        a[0] = items[0]

    # The file's own line numbers: the list is on the third line of the definition.
    line = uses_a_list._function.__code__.co_firstlineno + 2
    with pytest.raises(CompileError, match=rf"uses_a_list \(.*test_kernels.py, line {line}\): List"):
        uses_a_list[1, 1](np.zeros(1))

    @cuda.jit
    def undefined(a):
        a[0] = u  # noqa: F821 - the point of the test

    with pytest.raises(CompileError, match=r"line \d+\): the name 'u', defined nowhere"):
        undefined[1, 1](np.ones(1))

    not_a_number = [1.0]

    @cuda.jit
    def reads_a_global_list(a):
        a[0] = not_a_number

    with pytest.raises(CompileError, match="the global 'not_a_number' \\(a list"):
        reads_a_global_list[1, 1](np.ones(1))


@cuda.jit
def late_locals(a, out):
    i = cuda.grid(1)
    if i < a.size:
        if a[i] > 2:
            t = a[i] * 0.5
            n = 1
        else:
            t = -a[i]
            n = 2
        for j in range(2):
            s = t + j
        out[i] = s * n


@pytest.mark.parametrize("backend", ["cpu", "sim"])
def test_a_local_first_assigned_in_a_block_is_visible_after_it(backend):
    with lf.use(backend):
        a = np.arange(6, dtype=np.float32)
        out = np.zeros(6, dtype=np.float32)
        late_locals[1, 8](a, out)
        t = np.where(a > 2, a * 0.5, -a)
        n = np.where(a > 2, 1, 2)
        np.testing.assert_allclose(out, (t + 1) * n)


def test_tuples_written_out_unpack_as_python_does():
    @cuda.jit
    def fib_and_swap(values, out):
        i = cuda.grid(1)
        if i < values.size:
            a, b = 0.0, 1.0
            for _ in range(i):
                a, b = b, a + b
            out[i] = a
            if i % 2 == 1:
                values[i - 1], values[i] = values[i], values[i - 1]

    values = np.arange(8, dtype=np.float64)
    out = np.zeros(8)
    fib_and_swap[1, 8](values, out)
    assert out.tolist() == [0, 1, 1, 2, 3, 5, 8, 13]
    assert values.tolist() == [1, 0, 3, 2, 5, 4, 7, 6]

    with pytest.raises(CompileError, match="unpacking 3 values into 2 targets"):
        @cuda.jit
        def uneven(values):
            a, b = 1, 2, 3
            values[0] = a + b

        uneven[1, 1](np.zeros(1))


SCALE = 3


@cuda.jit(device=True)
def clamp(x, lo, hi):
    """Returns from three places: the result takes every value's dtype."""
    if x < lo:
        return lo
    elif x > hi:
        return hi
    return x


@cuda.jit(device=True)
def horner(x, n):
    """Locals, a loop and a global constant in a device function."""
    total = 0.0
    for _ in range(n):
        total = total * x + SCALE
    return total


@cuda.jit(device=True)
def scaled(x):
    x = x * 2  # rebinds its own parameter, not the caller's local
    return horner(x, 2) + clamp(x, 0, 5)


@cuda.jit(device=True)
def put(arr, i, value):
    """A device function without a value that writes the array it is given."""
    if i < arr.size:
        arr[i] = value


@cuda.jit
def uses_device_functions(values, out, written):
    i = cuda.grid(1)
    if i < values.size:
        v = values[i]
        out[i, 0] = clamp(v, 0, 4) + clamp(v, 1, 2)  # two call sites, locals of their own
        out[i, 1] = scaled(v)
        out[i, 2] = v  # still the caller's value
        put(written, i, horner(v, 3))


@pytest.mark.parametrize("backend", BACKENDS)
def test_device_functions_with_locals_branches_loops_and_writes(backend):
    with lf.use(backend):
        values = np.linspace(-2.0, 6.0, 9)
        out = np.zeros((9, 3))
        written = np.zeros(9)
        uses_device_functions[1, 16](values, out, written)

        def horner_py(x, n):
            total = 0.0
            for _ in range(n):
                total = total * x + SCALE
            return total

        want = np.stack([
            np.clip(values, 0, 4) + np.clip(values, 1, 2),
            [horner_py(2 * v, 2) + min(max(2 * v, 0), 5) for v in values],
            values,
        ], axis=1)
        np.testing.assert_allclose(out, want)
        np.testing.assert_allclose(written, [horner_py(v, 3) for v in values])


@guvectorize(["void(float64[:], float64[:])"], "(n)->(n)")
def clamped_gufunc(x, out):
    for i in range(x.shape[0]):
        out[i] = clamp(x[i], -1.0, 1.0)


def test_gufuncs_call_device_functions():
    x = np.linspace(-3, 3, 7)
    np.testing.assert_allclose(np.asarray(clamped_gufunc(x)), np.clip(x, -1, 1))


@cuda.jit(device=True)
def countdown(n):
    return 0 if n <= 0 else countdown(n - 1)


def test_device_functions_outside_the_subset_are_compile_errors():
    @cuda.jit
    def recursive(out):
        out[0] = countdown(3)

    @cuda.jit
    def wrong_count(out):
        out[0] = clamp(1.0, 2.0)

    for kernel, message in [(recursive, "recursive call of the device function 'countdown'"),
                            (wrong_count, "with 2 arguments (it takes 3)")]:
        with pytest.raises(CompileError, match=re.escape(message)):
            kernel[1, 1](np.zeros(1))


@guvectorize([(float64[:], float64, float64[:]), "void(int64[:], int64, int64[:])"], "(n),()->(n)")
def add_scalar(x, y, res):
    """Numba's documented form: `y` is declared a scalar and read as one."""
    for i in range(x.shape[0]):
        res[i] = x[i] + y


def test_gufunc_scalar_arguments_are_read_as_values():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(np.asarray(add_scalar(x, 10.0)), x + 10)
    got = np.asarray(add_scalar(np.arange(6).reshape(2, 3), np.array([1, 100])))
    assert got.tolist() == [[1, 2, 3], [103, 104, 105]]
    assert got.dtype == np.int64


@cuda.jit
def any_negative(values, found):
    i = cuda.grid(1)
    if i < values.size and values[i] < 0:
        found[0] = 1  # many threads, one value: a benign race


@pytest.mark.parametrize("backend", BACKENDS)
def test_threads_writing_one_value_to_one_element_are_not_a_race(backend):
    with lf.use(backend):
        found = np.zeros(1, dtype=np.int32)
        any_negative[2, 32](np.array([1.0, -1.0, 2.0, -3.0, -4.0] * 10), found)
        assert found[0] == 1


@cuda.jit
def guarded_reads(a, out):
    i = cuda.grid(1)
    out[i] = a[i] if i < a.size else -1.0
    if i < a.size and a[i] > 2 or i == 10:
        out[i] += 100
    if not (i >= a.size or a[i] < 1 or a[i] > 3):
        out[i] += 1000


@pytest.mark.parametrize("backend", BACKENDS)
def test_and_or_and_conditional_expressions_short_circuit(backend):
    """As in Python (and Numba): the operand that reads `a[i]` runs only
    where `i` is in bounds; the simulator would report the read otherwise."""
    with lf.use(backend):
        out = np.zeros(12)
        guarded_reads[1, 12](np.arange(5.0), out)
        assert out.tolist() == [0, 1001, 1002, 1103, 104] + [-1] * 5 + [99, -1]


TPB = 4


@cuda.jit
def fast_matmul(A, B, C):
    """Numba's documented shared-memory matrix product (``float32(0.)``
    converts, as Numba's type objects do)."""
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x
    tmp = float32(0.)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        cuda.syncthreads()
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


@pytest.mark.parametrize("backend", BACKENDS)
def test_numbas_shared_memory_matmul(backend):
    rng = np.random.default_rng(3)
    a, b = rng.random((10, 7), np.float32), rng.random((7, 9), np.float32)
    with lf.use(backend):
        c = np.zeros((10, 9), np.float32)
        fast_matmul[(3, 3), (TPB, TPB)](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


@cuda.jit(device=True)
def polar(r, t):
    if r < 0:
        return -r * math.cos(t), -r * math.sin(t)
    return r * math.cos(t), r * math.sin(t)


@cuda.jit
def to_cartesian(r, t, xs, ys):
    i = cuda.grid(1)
    if i < r.size:
        x, y = polar(r[i], t[i])
        xs[i], ys[i] = np.float32(x), y


@pytest.mark.parametrize("backend", BACKENDS)
def test_device_functions_return_tuples_and_types_convert(backend):
    r, t = np.array([1.0, -2.0, 0.5]), np.array([0.0, 1.0, 2.0])
    xs, ys = np.zeros(3, np.float32), np.zeros(3)
    with lf.use(backend):
        to_cartesian[1, 4](r, t, xs, ys)
    np.testing.assert_allclose(xs, np.abs(r) * np.cos(t), rtol=1e-6)
    np.testing.assert_allclose(ys, np.abs(r) * np.sin(t))

    @cuda.jit
    def as_one_value(r, out):
        out[0] = polar(r[0], r[0])

    with pytest.raises(CompileError, match=re.escape("unpack it: a, b = f(...)")):
        as_one_value[1, 1](r, ys)


@guvectorize([lf.void(lf.float64[:], lf.intp[:], lf.float64[:])], "(n),()->(n)")
def rotated(a, k, out):
    """A gufunc whose signature is built from Numba's ``void``/``intp``."""
    for i in range(a.shape[0]):
        out[i] = a[(i + k[0]) % a.shape[0]]


def test_numbas_type_objects_build_gufunc_signatures():
    arr = np.arange(20, dtype=np.float64).reshape(2, 10)
    np.testing.assert_array_equal(np.asarray(rotated(arr, 3)), np.roll(arr, -3, axis=1))
    assert (lf.f4, lf.i8, lf.boolean, lf.u1) == (lf.float32, lf.int64, lf.bool_, lf.uint8)
    assert lf.void(lf.float32[:, :], lf.intp) == "void(float32[:, :], intp)"


@cuda.jit
def lanes_and_builtins(a, out, lanes):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = min(a[i], 1.0, 0.5) + max(a[i], -1.0, 2.0) + round(a[i]) + cuda.selp(a[i] > 0, 1, -1)
        lanes[i] = cuda.laneid + 100 * cuda.warpsize


@pytest.mark.parametrize("backend", BACKENDS)
def test_builtins_selp_laneid_and_warpsize(backend):
    a = np.array([-2.5, -0.5, 0.5, 1.5, 2.5, 3.0] * 7)
    out, lanes = np.zeros_like(a), np.zeros(a.size, np.int32)
    with lf.use(backend):
        lanes_and_builtins[2, 40](a, out, lanes)
    want = (np.minimum(np.minimum(a, 1.0), 0.5) + np.maximum(np.maximum(a, -1.0), 2.0) + np.round(a)
            + np.where(a > 0, 1, -1))
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(lanes, np.arange(a.size) % 40 % 32 + 3200)


def test_a_device_array_updated_and_copied_back_in_a_loop_runs_each_launch_once():
    @cuda.jit
    def increment(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += 1

    d = cuda.to_device(np.zeros(1000, np.float32))
    host = np.zeros(1000, np.float32)
    launches = []
    for _ in range(6):
        before = lf.stats()["kernel_launches"]
        increment[4, 256](d)
        d.copy_to_host(host)
        launches.append(lf.stats()["kernel_launches"] - before)
    # The array keeps each value it is copied back from: the launches that
    # re-bound it do not run again at the next copy.
    assert launches[-1] == launches[1], launches
    np.testing.assert_array_equal(host, np.full(1000, 6, np.float32))
    # lf.compute keeps a re-bound array's value too.
    launches = []
    for _ in range(4):
        before = lf.stats()["kernel_launches"]
        increment[4, 256](d)
        (value,) = lf.compute(d)
        launches.append(lf.stats()["kernel_launches"] - before)
    assert launches[-1] == launches[1], launches
    np.testing.assert_array_equal(value, np.full(1000, 10, np.float32))
