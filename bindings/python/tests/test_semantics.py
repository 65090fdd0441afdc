"""Numba's and NumPy's semantics where lazyfuse once differed: kernel
locals' types, ranges that count down, globals as constants, cuda.reduce's
init, the exception classes, out= rules, printing, in-place operators,
new axes, contexts of *_like, exact integer fills. Each runs on the CPU and
on the simulated GPU."""

import threading
import time

import numpy as np
import pytest

import lazyfuse as lf
from lazyfuse import cuda, float64, guvectorize

BACKENDS = pytest.mark.parametrize("backend", ["cpu", "sim"])

SCALE = 4  # a global a kernel reads as a constant, as Numba freezes it


@cuda.jit
def count_down(x):
    for k in range(x.size - 1, -1, -2):
        x[k] = k


@cuda.jit
def every(x, step):
    for k in range(0, x.size, step):
        x[k] = 1


@cuda.jit
def widening_locals(x, y):
    i = cuda.grid(1)
    if i < x.size:
        acc = 0
        acc = x[i] * 0.5  # acc becomes a float64, as Numba unifies it
        half = 0
        for _ in range(3):
            half += 0.5
        y[i] = acc + half


@cuda.jit
def scaled(x):
    i = cuda.grid(1)
    if i < x.shape[-1]:
        x[i] = i * SCALE


@cuda.jit
def swap_first(x):
    cuda.atomic.compare_and_swap(x, 0, 7)  # Numba's 3-argument form, on x[0]


@cuda.jit
def plus_one(a, b):
    i = cuda.grid(1)
    if i < a.size:
        b[i] = a[i] + 1


@guvectorize([(float64[:], float64[:])], "(n)->()")
def mean_of_row(a, out):
    s = 0
    for i in range(a.shape[0]):
        s += a[i]
    out[0] = s / a.shape[0]


@guvectorize([(float64[:], float64[:])], "(n)->(n)")
def reversed_row(a, out):
    n = a.shape[0]
    for i in range(n - 1, -1, -1):
        out[n - 1 - i] = a[i]


@BACKENDS
def test_kernel_ranges_count_down_and_take_a_step_of_either_sign(backend):
    with lf.use(backend):
        x = np.zeros(5)
        count_down[1, 1](x)
        assert x.tolist() == [0, 0, 2, 0, 4]
        up, down = np.zeros(6), np.zeros(6)
        every[1, 1](up, 2)
        every[1, 1](down, -2)  # range(0, 6, -2) is empty in Python
        assert up.tolist() == [1, 0, 1, 0, 1, 0] and not down.any()
        rows = np.arange(10.0).reshape(2, 5)
        np.testing.assert_array_equal(np.asarray(reversed_row(rows)), rows[:, ::-1])


@BACKENDS
def test_a_local_takes_the_type_of_all_its_values(backend):
    with lf.use(backend):
        x, y = np.array([3.0, 5.0]), np.zeros(2)
        widening_locals[1, 2](x, y)
        assert y.tolist() == [3.0, 4.0]
        got = np.asarray(mean_of_row(np.array([[0.25, 0.25], [1.0, 2.0]])))
        assert got.tolist() == [0.25, 1.5]


@BACKENDS
def test_kernels_read_global_numbers_and_refuse_bad_indexing(backend):
    with lf.use(backend):
        x = np.zeros(5)
        scaled[1, 8](x)
        assert x.tolist() == [0, 4, 8, 12, 16]
        flags = np.zeros(2, np.int32)
        swap_first[1, 1](flags)
        assert flags.tolist() == [7, 0]

        @cuda.jit
        def two_indices(x):
            cuda.atomic.add(x, (0, 0), 1.0)

        with pytest.raises(lf.CompileError, match="1 dimensions indexed with 2 indices"):
            two_indices[1, 1](np.zeros(3))

        @cuda.jit
        def far_axis(x):
            x[0] = x.shape[5]

        with pytest.raises(lf.CompileError, match=r"x.shape\[5\] of an array of 1 dimensions"):
            far_axis[1, 1](np.zeros(3))


def test_arguments_that_share_memory_with_a_written_one_are_refused():
    a = np.arange(4.0)
    with pytest.raises(lf.ArgumentError, match="'a' and 'b' share memory"):
        plus_one[1, 4](a, a)
    with pytest.raises(lf.ArgumentError, match="share memory"):
        plus_one[1, 4](a[:3], a[1:])
    out = np.zeros(4)
    plus_one[1, 4](a, out)  # distinct arrays run
    assert out.tolist() == [1, 2, 3, 4]


@BACKENDS
def test_cuda_reduce_combines_init_once_as_numba_does(backend):
    @cuda.reduce
    def sum_reduce(a, b):
        return a + b

    @cuda.reduce
    def max_reduce(a, b):
        return max(a, b)

    @cuda.reduce
    def prod_reduce(a, b):
        return a * b

    with lf.use(backend):
        assert sum_reduce(np.arange(1.0, 11.0), init=100) == 155.0
        # With Numba's default init of 0, a maximum of negatives and a
        # product are 0, in Numba too; the right init gives the answer.
        assert max_reduce(np.array([-5, -3])) == 0
        assert max_reduce(np.array([-5, -3]), init=-100) == -3
        assert prod_reduce(np.array([2, 3]), init=1) == 6
        total = sum_reduce(np.arange(9, dtype=np.float32))
        assert type(total) is np.float32 and total == 36
        assert sum_reduce(np.zeros(0), init=7) == 7.0
        res = cuda.device_array(3)
        assert sum_reduce(np.arange(4.0), res=res) is None
        assert np.asarray(res).tolist() == [6.0, 0.0, 0.0]

    @cuda.reduce
    def no_neutral(a, b):
        return a + b + 1

    with pytest.raises(lf.ArgumentError, match="no neutral element"):
        no_neutral(np.arange(3.0))


def test_errors_are_lazyfuse_errors_and_numpys_builtin_kinds():
    assert issubclass(lf.ShapeError, lf.LazyfuseError) and issubclass(lf.ShapeError, ValueError)
    assert issubclass(lf.DTypeError, TypeError) and issubclass(lf.CompileError, RuntimeError)
    assert issubclass(lf.AxisError, IndexError) and issubclass(lf.AxisError, ValueError)
    with pytest.raises(lf.ShapeError, match=r"\(3,\) \(4,\)"):
        lf.ones(3) + lf.ones(4)
    with pytest.raises(lf.ArgumentError, match="40 dimensions"):
        lf.asarray(np.ones((1,) * 40))  # NumPy 2 allows 64; rust-numpy's views panic past 32
    with pytest.raises(lf.ArgumentError, match="negative dimensions"):
        lf.zeros(-1)
    with pytest.raises(lf.ArgumentError, match="at most one -1"):
        lf.zeros(6).reshape(-1, -1)
    with pytest.raises(lf.AxisError):
        lf.zeros((2, 3)).var(axis=4)
    with pytest.raises(ValueError, match="negative integer powers"):  # as NumPy's
        lf.arange(3) ** -1
    with pytest.raises(ValueError, match="negative integer powers"):
        np.power(lf.asarray(np.array([1, 2], np.uint8)), -2)
    assert (lf.arange(3) ** -1.0).dtype == np.float64 and (2 ** lf.arange(3)).dtype == np.int64
    with pytest.raises(lf.CompileError):
        @cuda.jit
        def uses_a_list(a):
            a[0] = [1][0]
        uses_a_list[1, 1](np.zeros(1))


@BACKENDS
def test_out_follows_numpys_casting_and_copy_to_host_numbas_shapes(backend):
    with lf.use(backend):
        x = lf.asarray(np.arange(3.0))
        with pytest.raises(lf.DTypeError, match="same_kind"):
            np.add(x, 1.5, out=lf.zeros(3, np.int32))
        wide = lf.zeros((2, 3))
        np.add(x, 1, out=wide)  # broadcast into out, as NumPy does
        assert np.asarray(wide).tolist() == [[1, 2, 3], [1, 2, 3]]
        with pytest.raises(lf.ShapeError):
            x.copy_to_host(out=np.zeros((2, 3)))


@BACKENDS
def test_printing_shows_values_and_in_place_operators_change_the_array(backend):
    with lf.use(backend):
        x = lf.asarray(np.arange(4, dtype=np.float32))
        assert str(x * 2) == "[0. 2. 4. 6.]"
        assert repr(x) == f"lazyfuse.Array([0., 1., 2., 3.], dtype=float32, backend='{backend}')"
        alias = x
        x += 1  # NumPy: every name bound to x sees the change
        assert alias is x and alias.numpy().tolist() == [1, 2, 3, 4]
        counts = lf.arange(3)
        with pytest.raises(lf.DTypeError):
            counts += 0.5  # NumPy refuses int64 += float too
        assert (2 << lf.arange(3)).numpy().tolist() == [2, 4, 8]


def test_new_axes_and_boolean_indices():
    a = lf.zeros((2, 3, 4))
    n = np.zeros((2, 3, 4))
    for key in [None, (None, 0), (slice(None), None, Ellipsis, 1), (0, None, 1), (Ellipsis, None)]:
        assert a[key].shape == n[key].shape, key
    with pytest.raises(IndexError, match="not booleans"):
        a[True]


def test_like_constructors_follow_their_arguments_context_and_fills_are_exact():
    with lf.use("sim"):
        s = lf.asarray(np.ones(3))
    z = lf.zeros_like(s)  # outside the `with`: still sim, as s
    assert z._a.backend == "sim" and (s + z).numpy().tolist() == [1, 1, 1]
    big = 2**53 + 1
    assert lf.full(2, big, dtype=np.int64).numpy().tolist() == [big, big]
    assert lf.full_like(s, 2, dtype=np.int8).dtype == np.int8


def test_dlpack_in_both_directions():
    class Producer:  # only DLPack, as a foreign library's array
        def __init__(self, array):
            self.array = array

        def __dlpack__(self, **kwargs):
            return self.array.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

    assert lf.asarray(Producer(np.arange(3.0))).numpy().tolist() == [0, 1, 2]
    x = lf.asarray(np.arange(6.0)).reshape(2, 3) * 2
    assert np.from_dlpack(x, copy=True).tolist() == [[0, 2, 4], [6, 8, 10]]


def test_the_gil_is_released_while_a_demand_runs():
    """Another Python thread runs while numpy() computes (sim's simulated
    device is slow enough to show it)."""
    with lf.use("sim"):
        x = lf.asarray(np.random.rand(1 << 21))
        y = (x * x + 1).sum()
        ticks, done = [], threading.Event()

        def ticker():
            while not done.is_set():
                ticks.append(1)
                time.sleep(0.0005)

        thread = threading.Thread(target=ticker)
        thread.start()
        try:
            started = len(ticks)
            y.numpy()
        finally:
            done.set()
            thread.join()
        assert len(ticks) - started >= 2


def test_python_ints_beyond_int64_and_ranges_beyond_two_to_the_53():
    """Python ints are exact (NumPy 2's weak scalars): they fit the array's
    dtype or the operation is an error; `arange` past 2**53 does not round."""
    u = lf.asarray(np.array([1, 2], dtype=np.uint64))
    assert (u + 2**63).tolist() == [2**63 + 1, 2**63 + 2]
    assert (u < 2**64 - 1).tolist() == [True, True]
    with pytest.raises(lf.ArgumentError, match="out of bounds for i64"):
        lf.asarray(np.array([1])) + 2**63
    with pytest.raises(ValueError, match="out of bounds for every lazyfuse dtype"):
        u + 2**200
    for args in [(2**53, 2**53 + 5), (2**62, 2**62 - 10, -3), (-(2**60), -(2**60) + 7, 2)]:
        assert lf.arange(*args).tolist() == list(range(*args))
    top = lf.arange(2**64 - 4, 2**64 - 1, dtype=np.uint64)
    assert top.tolist() == list(range(2**64 - 4, 2**64 - 1)) and top.dtype == np.uint64


def test_ufunc_calls_on_lazy_arrays_take_the_direct_path_with_numpys_results():
    # lf.exp(x), lf.add(x, 2.5) skip NumPy's dispatch; what they give must
    # be what the general path (and NumPy) gives: promotion, weak Python
    # numbers, strong NumPy scalars, lists through the general path.
    n = np.arange(6, dtype=np.int32).reshape(2, 3)
    x = lf.asarray(n)
    for got, want in [
        (lf.exp(x), np.exp(n)),
        (lf.add(x, 2.5), np.add(n, 2.5)),
        (lf.subtract(2, x), np.subtract(2, n)),
        (lf.maximum(x, np.float32(1.5)), np.maximum(n, np.float32(1.5))),
        (lf.multiply(x, [1, 2, 3]), np.multiply(n, [1, 2, 3])),
        (lf.less(x, True), np.less(n, True)),
        (lf.negative(x.astype(np.float32)), np.negative(n.astype(np.float32))),
    ]:
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_where_of_lazy_arrays_and_python_numbers_promotes_as_numpys():
    # The one-call path of `np.where`: Python numbers stay weak (NEP 50),
    # bools and NumPy scalars take the general path; values as NumPy's.
    x = np.array([-1.5, 0.0, 2.5, -3.0], np.float32)
    i = np.array([-1, 0, 2, -3], np.int32)
    lx, li = lf.asarray(x), lf.asarray(i)
    cases = [
        (np.where(lx < 0, lx, 1.0), np.where(x < 0, x, np.float32(1.0))),
        (np.where(li < 0, 2, li), np.where(i < 0, np.int32(2), i)),
        (np.where(lx < 0, 0, 1.5), np.where(x < 0, 0, 1.5)),
        (np.where(li < 0, li, True), np.where(i < 0, i, True)),
        (np.where(lx < 0, lx, np.float64(1.0)), np.where(x < 0, x, np.float64(1.0))),
        (lf.where(lx > 0, lx, li), np.where(x > 0, x, i)),
    ]
    for got, want in cases:
        got = np.asarray(got)
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_array_equal(got, want)
