"""Numba's CUDA dialect beyond the tutorials (issue 47): every atomic,
compile-time arguments of device functions (types, functions, tuples),
tuple locals, global and constant arrays, block votes, ``round(x, n)`` and
``math.modf/frexp/ldexp/remainder``, explicit signatures, ``forall``,
device queries. Each kernel runs on every backend under test."""

import math

import numpy as np
import pytest

import lazyfuse as lf
from lazyfuse import CompileError, cuda, float32, int16, int32, uint32, uint64, void


def test_every_atomic_of_numba_with_its_semantics(backend):
    @cuda.jit
    def update(ints, uints, floats, olds):
        olds[0] = cuda.atomic.sub(ints, 0, 3)
        olds[1] = cuda.atomic.and_(ints, 1, 10)
        olds[2] = cuda.atomic.or_(ints, 2, 10)
        olds[3] = cuda.atomic.xor(ints, 3, 10)
        olds[4] = cuda.atomic.inc(uints, 0, 5)
        olds[5] = cuda.atomic.dec(uints, 1, 5)
        olds[6] = cuda.atomic.exch(ints, 4, 99)
        cuda.threadfence()
        cuda.threadfence_block()
        cuda.threadfence_system()
        cuda.atomic.max(floats, 0, np.nan)  # Numba's: a NaN leaves memory as it is
        cuda.atomic.nanmax(floats, 1, 2.0)  # NaN in memory is a missing value
        cuda.atomic.nanmin(floats, 2, np.nan)

    ints = np.array([10, 12, 12, 12, 1], np.int32)
    uints = np.array([5, 0], np.uint32)
    floats = np.array([1.5, np.nan, 4.0])
    olds = np.zeros(7, np.int64)
    update[1, 1](ints, uints, floats, olds)
    assert ints.tolist() == [7, 8, 14, 6, 99]
    assert uints.tolist() == [0, 5]  # inc wraps at 5; dec of 0 gives 5
    assert floats.tolist() == [1.5, 2.0, 4.0]
    assert olds.tolist() == [10, 12, 12, 12, 5, 0, 1]


def test_shared_memory_atomics_and_block_votes(backend):
    @cuda.jit
    def votes(flags, out):
        counts = cuda.shared.array(4, int32)
        i = cuda.threadIdx.x
        if i < counts.size:
            counts[i] = 0
        cuda.syncthreads()
        cuda.atomic.add(counts, i % 4, 1)
        cuda.atomic.max(counts, 3, 100)
        cuda.syncthreads()
        n = cuda.syncthreads_count(flags[i])
        every = cuda.syncthreads_and(flags[i])
        some = cuda.syncthreads_or(flags[i])
        if i == 0:
            out[0] = n
            out[1] = every
            out[2] = some
            out[3] = counts[0]
            out[4] = counts[3]

    flags = np.zeros(32, np.int32)
    flags[[3, 7, 11]] = 1
    out = np.zeros(5, np.int64)
    votes[1, 32](flags, out)
    assert out.tolist() == [3, 0, 1, 8, 100]


@cuda.jit(device=True)
def _apply(memory, index, value, operation, cast):
    operation(memory, cast(index), value)


@cuda.jit(device=True)
def _as_int(x):
    return int(x)


@cuda.jit(device=True)
def _into_shared(values, dtype, shape, operation):
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tile = cuda.shared.array(shape, dtype)
    tile[tx, ty] = values[tx, ty]
    cuda.syncthreads()
    where = (tx, ty)
    where = (where[0] % shape[0], where[1] % shape[1])
    operation(tile, where, 1)
    cuda.syncthreads()
    values[tx, ty] = tile[tx, ty]


def test_device_functions_take_types_functions_and_tuples_known_when_compiling(backend):
    @cuda.jit
    def kernel(values, counts):
        _into_shared(values, uint32, (4, 8), cuda.atomic.add)
        _apply(counts, cuda.threadIdx.x % 2, 1, cuda.atomic.add, _as_int)

    values = np.arange(32, dtype=np.uint32).reshape(4, 8)
    counts = np.zeros(2, np.int64)
    kernel[1, (4, 8)](values, counts)
    assert values.tolist() == (np.arange(32).reshape(4, 8) + 1).tolist()
    assert counts.tolist() == [16, 16]


def test_tuple_locals_shapes_and_grids(backend):
    @cuda.jit
    def kernel(a, out):
        m, n = a.shape
        shape = a.shape
        p = cuda.grid(2)
        pair = (p[0], p[1])
        pair = (pair[1], pair[0])  # swapped, every value first
        if p[0] < m and p[1] < n:
            out[p] = a[p[0], p[1]] + shape[1] * 0 + len(shape)
            if pair[0] == 0 and pair[1] == 0:
                out[0, 0] = m * 100 + n

    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    out = np.zeros_like(a)
    kernel[(1, 1), (4, 4)](a, out)
    want = a + 2
    want[0, 0] = 304
    assert out.tolist() == want.tolist()


_TABLE = np.array([10.0, 20.0, 30.0])


def test_global_arrays_are_constants_frozen_when_compiling(backend):
    @cuda.jit
    def kernel(out):
        table = cuda.const.array_like(_TABLE)
        i = cuda.grid(1)
        if i < out.size:
            out[i] = table[i] + _TABLE[i]

    out = np.zeros(3)
    kernel[1, 4](out)
    assert out.tolist() == [20.0, 40.0, 60.0]


def test_round_to_digits_and_the_math_functions_written_in_the_dialect(backend):
    @cuda.jit
    def kernel(x, digits, rounded, fraction, whole, mantissa, exponent, scaled, rest):
        i = cuda.grid(1)
        if i < x.size:
            rounded[i] = round(x[i], digits[i])
            fraction[i], whole[i] = math.modf(x[i])
            mantissa[i], exponent[i] = math.frexp(x[i])
            scaled[i] = math.ldexp(x[i], digits[i])
            rest[i] = math.remainder(x[i], 0.75)

    x = np.array([3.14159, -2.5, 0.3425, 1e300, np.inf, -0.0, 12345.678, np.nan])
    digits = np.array([2, 0, 3, 5, 1, 2, -2, 1], np.int32)
    outs = [np.zeros_like(x) for _ in range(4)] + [np.zeros(8, np.int32)] + [np.zeros_like(x) for _ in range(2)]
    kernel[1, 8](x, digits, *outs)
    rounded, fraction, whole, mantissa, exponent, scaled, rest = outs
    want = [round(v, int(d)) if math.isfinite(v) else v for v, d in zip(x, digits)]
    np.testing.assert_array_equal(rounded, want)
    np.testing.assert_array_equal(fraction, [math.modf(v)[0] if not math.isnan(v) else v for v in x])
    np.testing.assert_array_equal(whole, np.trunc(x))
    finite = np.isfinite(x) & (x != 0)
    m, e = np.frexp(x[finite])
    np.testing.assert_array_equal(mantissa[finite], m)
    np.testing.assert_array_equal(exponent[finite], e)
    assert exponent[~finite].tolist() == [0, 0, 0]  # Numba's: 0 for zero, inf and NaN
    np.testing.assert_array_equal(scaled, np.ldexp(x, digits))
    np.testing.assert_array_equal(
        rest, [math.remainder(v, 0.75) if math.isfinite(v) else math.nan for v in x])


def test_an_explicit_signature_converts_scalars_and_forall_launches_enough_threads(backend):
    @cuda.jit(void(float32, float32[:], float32[:]))
    def axpy(a, x, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = a * x[i] + y[i]

    x = np.arange(300, dtype=np.float32)
    y = np.ones(300, dtype=np.float32)
    axpy.forall(x.size)(1.1, x, y)
    np.testing.assert_array_equal(y, np.float32(1.1) * x + np.float32(1))
    axpy.forall(0)(1.1, x, y)  # no launch
    with pytest.raises(ValueError, match="negative task count"):
        axpy.forall(-1)
    assert axpy.py_func.__name__ == "axpy"


def test_a_kernel_called_from_a_kernel_is_inlined_as_a_device_function(backend):
    @cuda.jit
    def plus_one(x):
        return x + 1

    @cuda.jit
    def kernel(out):
        out[0] = plus_one(41)

    out = np.zeros(1, np.int64)
    kernel[1, 1](out)
    assert out[0] == 42


def test_atomics_refuse_dtypes_numba_does_not_allow():
    @cuda.jit
    def bitwise_on_floats(x):
        cuda.atomic.xor(x, 0, 1)

    with pytest.raises(Exception, match="atomic xor on f32"):
        bitwise_on_floats[1, 1](np.zeros(1, np.float32))


def test_device_queries_describe_the_device_that_runs_cuda_code():
    device = cuda.get_current_device()
    assert device.compute_capability >= (5, 0)
    assert isinstance(device.name, bytes)
    assert len(cuda.gpus) == 1 and cuda.gpus[0].id == 0
    with cuda.gpus[0]:
        free, total = cuda.current_context().get_memory_info()
    assert free <= total
    assert cuda.list_devices()[0] is cuda.gpus[0]


def test_intrinsics_refuse_calls_from_python():
    with pytest.raises(RuntimeError, match="only translated inside"):
        cuda.atomic.inc(np.zeros(1, np.uint32), 0, 1)


def test_a_tuple_used_as_one_number_names_the_tuple():
    @cuda.jit
    def kernel(out):
        t = (1, 2)
        out[0] = t

    with pytest.raises(CompileError, match="the tuple 't' used as one value"):
        kernel[1, 1](np.zeros(1))


def test_uint64_inc_wraps_like_cuda(backend):
    @cuda.jit
    def kernel(x):
        cuda.atomic.inc(x, 0, uint64(3))

    x = np.array([3], np.uint64)
    kernel[1, 1](x)
    assert x[0] == 0


def test_tuples_and_namedtuples_of_numbers_and_arrays_as_kernel_arguments(backend):
    from collections import namedtuple

    Point = namedtuple("Point", ("x", "y", "r"))

    @cuda.jit
    def kernel(out, nested, point, arrays):
        out[0] = len(nested)
        out[1] = len(nested[0])
        out[2] = nested[0][2]
        out[3] = nested[1]
        out[4] = point.x + point.y
        out[5] = point.r * 10
        i = cuda.grid(1)
        if i < len(arrays[0]):
            arrays[1][i] = arrays[0][i] * 2

    out = np.zeros(6)
    a, b = np.arange(4.0), np.zeros(4)
    kernel[1, 4](out, ((6, 5, 4), 7), Point(1, 2, 2.5), (a, b))
    assert out.tolist() == [2, 3, 4, 7, 3, 25]
    assert b.tolist() == [0, 2, 4, 6]


def test_bit_intrinsics_of_every_integer_width(backend):
    @cuda.jit
    def kernel(x, popc, clz, ffs, brev, bits):
        i = cuda.grid(1)
        if i < x.size:
            popc[i] = cuda.popc(x[i])
            clz[i] = cuda.clz(x[i])
            ffs[i] = cuda.ffs(x[i])
            brev[i] = cuda.brev(x[i])
            bits[i] = x[i].bit_count()

    for dtype in (np.uint8, np.int16, np.uint32, np.int64):
        width = np.dtype(dtype).itemsize * 8
        x = np.array([0, 1, 6, 0x40, -1 if np.dtype(dtype).kind == "i" else 255], dtype)
        outs = [np.zeros_like(x) for _ in range(5)]
        kernel[1, 8](x, *outs)
        unsigned = [int(v) & ((1 << width) - 1) for v in x]
        assert outs[0].tolist() == [bin(u).count("1") for u in unsigned]
        assert outs[1].tolist() == [width - u.bit_length() for u in unsigned]
        assert outs[2].tolist() == [(u & -u).bit_length() for u in unsigned]
        want = [int(format(u, f"0{width}b")[::-1], 2) for u in unsigned]
        assert outs[3].astype(f"u{width // 8}").tolist() == want
        assert outs[4].tolist() == [abs(int(v)).bit_count() for v in x]


def test_loops_over_arrays_enumerate_and_zip(backend):
    @cuda.jit
    def kernel(x, y, out):
        total = 0.0
        for v in x:
            total += v
        for i, (a, b) in enumerate(zip(x, y)):
            out[i + 1] = a * b + i
        out[0] = total

    x, y = np.arange(1.0, 5.0), np.arange(10.0, 13.0)  # zip stops at the shorter
    out = np.zeros(5)
    kernel[1, 1](x, y, out)
    assert out.tolist() == [10.0, 10.0, 23.0, 38.0, 0.0]


def test_dynamic_shared_memory_takes_the_launch_size(backend):
    @cuda.jit
    def reverse(x):
        tile = cuda.shared.array(0, float32)
        i = cuda.threadIdx.x
        tile[i] = x[i]
        cuda.syncthreads()
        x[i] = tile[tile.size - 1 - i]

    x = np.arange(16, dtype=np.float32)
    reverse[1, 16, 0, 16 * 4](x)
    assert x.tolist() == list(range(15, -1, -1))
    with pytest.raises(CompileError, match="dynamic shared memory"):
        reverse[1, 16](x)


_WEIGHTS = (0.5, 1.5, 2.0)


def test_loops_over_tuples_unroll_and_integer_atan2_computes_in_float64(backend):
    @cuda.jit
    def kernel(x, out):
        total = 0.0
        for i, (w, v) in enumerate(zip(_WEIGHTS, (x[0], x[1], x[2]))):
            total += w * v + i
        out[0] = total
        out[1] = math.atan2(x[3], x[3])

    x = np.array([1, 2, 3, 4], np.int64)
    out = np.zeros(2)
    kernel[1, 1](x, out)
    assert out.tolist() == [0.5 + 3.0 + 6.0 + 3, math.atan2(4, 4)]


def _reference_states(n, seed, start=0):
    """Numba's host initialisation, sequentially: splitmix64, then a jump
    of 2**64 steps per state."""
    mask = (1 << 64) - 1

    def step(s0, s1):
        s1 ^= s0
        return ((((s0 << 55) | (s0 >> 9)) & mask) ^ s1 ^ ((s1 << 14) & mask),
                ((s1 << 36) | (s1 >> 28)) & mask)

    def jump(s0, s1):
        j0 = j1 = 0
        for word in (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922):
            for b in range(64):
                if word >> b & 1:
                    j0, j1 = j0 ^ s0, j1 ^ s1
                s0, s1 = step(s0, s1)
        return j0, j1

    z = (seed + 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    z ^= z >> 31
    state, out = (z, z), []
    for _ in range(start):
        state = jump(*state)
    for _ in range(n):
        out.append(state)
        state = jump(*state)
    return out, step


def test_xoroshiro128p_states_and_draws_are_numbas_bit_for_bit(backend):
    from lazyfuse.cuda.random import (  # noqa: F401  (the module Numba's users import)
        create_xoroshiro128p_states, xoroshiro128p_normal_float32, xoroshiro128p_uniform_float32,
        xoroshiro128p_uniform_float64)

    n = 37
    states = create_xoroshiro128p_states(n, seed=7, subsequence_start=2)
    want, step = _reference_states(n, 7, start=2)
    assert states.copy_to_host().tolist() == [list(s) for s in want]

    @cuda.jit
    def draw(states, uniform32, uniform64, normal32):
        i = cuda.grid(1)
        if i < uniform32.shape[0]:
            uniform32[i] = xoroshiro128p_uniform_float32(states, i)
            uniform64[i] = xoroshiro128p_uniform_float64(states, i)
            normal32[i] = xoroshiro128p_normal_float32(states, i)

    outs = [np.zeros(n, np.float32), np.zeros(n), np.zeros(n, np.float32)]
    draw[1, 64](states, *outs)
    advanced = []
    for i, (s0, s1) in enumerate(want):
        draws = []
        for _ in range(4):
            draws.append((s0 + s1) & ((1 << 64) - 1))
            s0, s1 = step(s0, s1)
        advanced.append([s0, s1])
        unit = [(d >> 11) * (1.0 / (1 << 53)) for d in draws]
        assert outs[0][i] == np.float32(unit[0])
        assert outs[1][i] == unit[1]
        u1, u2 = np.float32(unit[2]), np.float32(unit[3])
        normal = np.sqrt(np.float32(-2.0) * np.log(u1)) * np.cos(np.float32(2 * math.pi) * u2)
        np.testing.assert_allclose(outs[2][i], normal, rtol=2e-6)
    # The kernel wrote the states back, four steps on.
    assert states.copy_to_host().tolist() == advanced


@cuda.jit(device=True)
def _copy_row(source, target):
    for i in range(target.shape[0]):
        target[i] = source[i] * 2


def test_slices_of_arrays_as_values_and_arguments(backend):
    @cuda.jit
    def kernel(a, out, tail):
        i = cuda.grid(1)
        if i < a.shape[0]:
            _copy_row(a[i, :], out[i, 1:])
        if i == 0:
            shared = cuda.shared.array(8, np.float64)
            for j in range(8):
                shared[j] = j
            evens = shared[::2]
            last = evens[-2:]
            tail[0] = len(evens) * 100 + last.size * 10 + last[1]
            back = a[1, 1:]
            tail[1] = back[0] + len(back)
            down = shared[6:1:-2]  # 6, 4, 2
            tail[2] = down[0] * 100 + down[2] * 10 + len(down)
            every = shared[::-1]
            tail[3] = every[0] * 10 + every[7] + len(shared[-3::-3])

    a = np.arange(12.0).reshape(3, 4)
    out = np.zeros((3, 5))
    tail = np.zeros(4)
    kernel[1, 4](a, out, tail)
    want = np.zeros((3, 5))
    want[:, 1:] = a * 2
    assert out.tolist() == want.tolist()
    s = np.arange(8.0)
    assert tail.tolist() == [400 + 20 + 6, 5.0 + 3, 600 + 20 + 3,
                             s[::-1][0] * 10 + s[::-1][7] + len(s[-3::-3])]


@cuda.jit(device=True)
def _apply_to(function, *args):
    return function(*args) + len(args)


def test_functions_defined_in_kernels_close_over_locals_and_take_star_args(backend):
    @cuda.jit
    def kernel(x, out):
        offset = x[0]

        def shifted(z, w):
            return z + w + offset

        def twice(f):
            return f(1, 2) * 2

        out[0] = _apply_to(shifted, 10, 20)
        out[1] = twice(shifted)
        values = (3, 4)
        out[2] = shifted(*values)

    out = np.zeros(3)
    kernel[1, 1](np.array([100.0]), out)
    assert out.tolist() == [132.0, 206.0, 107.0]


def test_a_local_assigned_a_number_once_shapes_arrays_and_kernels_need_no_array(backend):
    @cuda.jit
    def kernel(out):
        n = 16
        tile = cuda.shared.array(n, np.int32)
        i = cuda.threadIdx.x
        tile[i] = i * 2
        cuda.syncthreads()
        out[i] = tile[n - 1 - i]

    out = np.zeros(16, np.int32)
    kernel[1, 16](out)
    assert out.tolist() == [2 * (15 - i) for i in range(16)]

    @cuda.jit
    def nothing():
        scratch = cuda.shared.array(1, np.int32)  # noqa: F841
    nothing[1, 1]()


def test_print_writes_a_line_per_thread_as_numba_does(backend, capfd):
    @cuda.jit
    def talk(x):
        i = cuda.grid(1)
        print(i, "hop!", x[i], x[i] > 1, (i, (2.5,)))
        print()

    talk[1, 3](np.array([0.5, 1.5, -2.0]))
    lines = capfd.readouterr().out.splitlines()
    assert sorted(lines) == sorted([
        "0 hop! 0.500000 False (0, (2.500000,))", "",
        "1 hop! 1.500000 True (1, (2.500000,))", "",
        "2 hop! -2.000000 False (2, (2.500000,))", "",
    ])

    @cuda.jit
    def dims():
        print(cuda.threadIdx)

    dims[1, (2, 1, 1)]()
    assert sorted(capfd.readouterr().out.splitlines()) == ["(0, 0, 0)", "(1, 0, 0)"]


@cuda.jit(device=True)
def _scaled(x, factor=2, shift=0.5):
    return x * factor + shift


def test_device_functions_take_keyword_arguments_and_number_defaults(backend):
    @cuda.jit
    def kernel(out):
        def inner(a, b=10):
            return a + b

        out[0] = _scaled(1.0)
        out[1] = _scaled(1.0, shift=0.0)
        out[2] = _scaled(1.0, 3, shift=1.0)
        out[3] = inner(1) + inner(1, b=2)

    out = np.zeros(4)
    kernel[1, 1](out)
    assert out.tolist() == [2.5, 2.0, 4.0, 14.0]

    @cuda.jit
    def wrong(out):
        out[0] = _scaled(1.0, scale=3)

    with pytest.raises(CompileError, match="keyword arguments that '_scaled' does not take"):
        wrong[1, 1](np.zeros(1))


class _Custom(Exception):
    pass


@cuda.jit(device=True)
def _check(x):
    if x < 0:
        raise ValueError("negative")
    return x


def test_a_raise_in_a_debug_kernel_is_raised_on_the_host_with_the_thread(backend):
    @cuda.jit(debug=True)
    def kernel(x, out):
        i = cuda.grid(1)
        if x[i] == 7:
            raise _Custom("seven")
        out[i] = _check(x[i])

    out = np.zeros(4)
    kernel[1, 4](np.array([1.0, 2.0, 3.0, 4.0]), out)
    assert out.tolist() == [1, 2, 3, 4]
    with pytest.raises(_Custom, match=r"tid=\[2, 0, 0\] ctaid=\[0, 0, 0\]: seven"):
        kernel[1, 4](np.array([1.0, 2.0, 7.0, 4.0]), out)
    with pytest.raises(ValueError, match="negative"):
        kernel[1, 4](np.array([1.0, -2.0, 3.0, 4.0]), out)

    @cuda.jit
    def quiet(x, out):  # without debug=True the raising thread stops, unreported
        i = cuda.grid(1)
        if x[i] < 0:
            raise ValueError
        out[i] = x[i]

    out = np.zeros(2)
    quiet[1, 2](np.array([-1.0, 5.0]), out)
    assert out.tolist() == [0.0, 5.0]


def test_warp_functions_shuffle_and_vote_across_a_warp(backend):
    @cuda.jit
    def kernel(x, out, votes):
        i = cuda.grid(1)
        v = x[i]
        full = 0xFFFFFFFF
        out[i, 0] = cuda.shfl_sync(full, v, 0)
        out[i, 1] = cuda.shfl_down_sync(full, v, 1)
        out[i, 2] = cuda.shfl_xor_sync(full, v, 1)
        out[i, 3] = cuda.shfl_up_sync(full, v, 2)
        votes[i, 0] = cuda.ballot_sync(full, v > 20)
        votes[i, 1] = cuda.all_sync(full, v >= 0)
        votes[i, 2] = cuda.any_sync(full, v > 100)
        votes[i, 3] = cuda.lanemask_lt()
        cuda.syncwarp()
        if i % 2 == 0:
            votes[i, 4] = cuda.activemask()

    x = np.arange(32, dtype=np.float64)
    out = np.zeros((32, 4))
    votes = np.zeros((32, 5), np.uint32)
    kernel[1, 32](x, out, votes)
    lanes = np.arange(32)
    assert out[:, 0].tolist() == [0.0] * 32
    assert out[:, 1].tolist() == [min(l + 1, 31) if l < 31 else 31 for l in lanes]
    assert out[:, 2].tolist() == [l ^ 1 for l in lanes]
    assert out[:, 3].tolist() == [l - 2 if l >= 2 else l for l in lanes]
    assert set(votes[:, 0]) == {sum(1 << l for l in range(21, 32))}
    assert votes[:, 1].tolist() == [1] * 32 and votes[:, 2].tolist() == [0] * 32
    assert votes[:, 3].tolist() == [(1 << l) - 1 for l in lanes]
    assert votes[::2, 4].tolist() == [0x55555555] * 16


def test_cuda_fma_rounds_once(backend):
    @cuda.jit
    def kernel(a, b, c, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = cuda.fma(a[i], b[i], c[i])

    e = np.float32(2.0 ** -12)
    a = np.array([1 + e, 3], np.float32)
    c = np.array([-1 - 2 * e, 0.5], np.float32)
    out = np.zeros(2, np.float32)
    kernel[1, 2](a, a.copy(), c, out)
    assert out.tolist() == [2.0 ** -24, 9.5]  # a product rounded first would give 0


def test_thread_indices_and_warpsize_pass_to_device_functions(backend):
    @cuda.jit(device=True)
    def twice(v):
        return 2 * v

    @cuda.jit
    def kernel(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = twice(cuda.threadIdx.x) + twice(cuda.warpsize) + twice(cuda.blockIdx.x)

    out = lf.zeros(8, dtype=np.int64)
    kernel[2, 4](out)
    np.testing.assert_array_equal(np.asarray(out), 2 * (np.arange(8) % 4) + 64 + 2 * (np.arange(8) // 4))


def test_device_arrays_strides_and_flags_follow_their_layout():
    cases = [
        (cuda.device_array((10, 12), order="F"), np.zeros((10, 12), order="F")),
        (cuda.device_array((10, 12))[::2, ::2], np.zeros((10, 12))[::2, ::2]),
        (cuda.device_array((10, 12))[::2, ::2].T, np.zeros((10, 12))[::2, ::2].T),
        (cuda.device_array((10, 12, 14), order="F")[1], np.zeros((10, 12, 14), order="F")[1]),
        (cuda.device_array(10)[::3], np.zeros(10)[::3]),
    ]
    for d, n in cases:
        assert d.strides == n.strides
        for flag in ("C_CONTIGUOUS", "F_CONTIGUOUS"):
            assert d.flags[flag] == n.flags[flag], (n.strides, flag)
        like = np.zeros_like(n)
        for make in (cuda.device_array_like, cuda.pinned_array_like, cuda.mapped_array_like):
            got = make(d)
            assert got.shape == like.shape and got.strides == like.strides, make.__name__
            assert got.flags.c_contiguous == like.flags.c_contiguous
    pinned = cuda.pinned_array((3, 4), np.float32, order="F")
    assert pinned.flags.f_contiguous and pinned.strides == (4, 12)


_ATOMIC_TEMPLATE = '''
def extreme(result, values):
    i = cuda.grid(1)
    if i < values.size:
        {func}(result, 0, values[i])

@cuda.jit(device=True)
def twice(x):
    return 2 * x

def doubled(out, values):
    i = cuda.grid(1)
    if i < values.size:
        out[i] = twice(values[i])
'''


def _from_template(func):
    scope = {"cuda": cuda}
    exec(_ATOMIC_TEMPLATE.format(func=func), scope)
    return scope


def test_kernels_and_device_functions_made_by_exec_translate(backend):
    # Two strings whose functions differ in one attribute name alone (the
    # same bytecode): each kernel is read from its own string.
    made = {func: _from_template(func) for func in ("cuda.atomic.max", "cuda.atomic.min")}
    values = np.array([3.0, -1.0, 7.5, 2.0])
    for func, want in (("cuda.atomic.max", 7.5), ("cuda.atomic.min", -1.0)):
        result = np.array([0.0])
        cuda.jit(made[func]["extreme"])[1, 4](result, values)
        assert result[0] == want
    out = np.zeros(4)
    cuda.jit(made["cuda.atomic.min"]["doubled"])[1, 4](out, values)
    np.testing.assert_array_equal(out, 2 * values)


def test_a_kernel_given_to_python_dash_c_translates():
    import subprocess
    import sys
    code = ("import numpy as np\nfrom lazyfuse import cuda\n"
            "@cuda.jit\ndef k(x):\n    x[cuda.grid(1)] += 1\n"
            "x = np.zeros(3)\nk[1, 3](x)\nprint(x.tolist())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[1.0, 1.0, 1.0]"


def test_a_function_with_no_source_names_the_ways_to_give_one():
    function = eval("lambda x: x")  # a lambda's source is an expression: no `def` kept
    with pytest.raises(CompileError, match="exec"):
        cuda.jit(function)[1, 1](np.zeros(1))


def test_numpy_ufuncs_on_whole_arrays_write_their_outputs(backend):
    # Numba's array expressions in kernels: each output is written element
    # by element (an F-ordered one too), numbers and fewer axes broadcast.
    @cuda.jit
    def apply(a, b, row, out, flags, big, turned):
        np.sin(a, out)
        np.greater(a, b, flags)
        np.fmax(a, 0.25, big)
        np.add(a, row, turned)
        np.degrees(row, row)

    a = np.linspace(-1, 1, 12).reshape(3, 4)
    b = np.asfortranarray(a[::-1].copy())
    row = np.array([0.5, np.nan, -1.0, 2.0])
    out, big, turned = np.zeros((3, 4)), np.zeros((3, 4)), np.zeros((3, 4))
    flags = np.asfortranarray(np.zeros((3, 4), np.int32))
    original_row = row.copy()
    apply[1, 1](a, b, row, out, flags, big, turned)
    np.testing.assert_allclose(out, np.sin(a))
    np.testing.assert_array_equal(flags, np.greater(a, b))
    np.testing.assert_array_equal(big, np.fmax(a, 0.25))
    np.testing.assert_array_equal(turned, a + original_row)
    np.testing.assert_array_equal(row, np.degrees(original_row))


class _Color(__import__("enum").Enum):
    red = 1
    blue = 3


class _Flavour(__import__("enum").Enum):
    mint = 3


class _Status(__import__("enum").IntEnum):
    ok = 200
    missing = 404


def test_enum_members_are_constants_compared_with_pythons_rules(backend):
    @cuda.jit
    def classify(codes, out):
        i = cuda.grid(1)
        if i < codes.size:
            # Folded when compiling, as Python decides: blue and mint are
            # both 3 but not equal; an IntEnum member is its number.
            same = _Color.blue == _Flavour.mint
            by_name = _Color["red"] != _Color.blue
            out[i] = (codes[i] == _Status.missing) + 2 * same + 4 * by_name + int16(_Status.ok) // 100

    codes = np.array([200, 404, 500])
    out = np.zeros(3, np.int64)
    classify[1, 3](codes, out)
    np.testing.assert_array_equal(out, [6, 7, 6])
    assert int16(_Status.missing) == 404 and type(int16(3)) is np.int16
