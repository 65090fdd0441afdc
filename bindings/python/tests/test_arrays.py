"""lazyfuse arrays from Python: lazy, NumPy's semantics, NumPy's protocols."""

import numpy as np
import pytest

import lazyfuse as lf

BACKENDS = ["cpu", "sim", "reference"]


@pytest.fixture(params=BACKENDS)
def cx(request):
    with lf.use(request.param) as context:
        yield context


def test_nothing_runs_until_a_value_is_demanded(cx):
    x = lf.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = (x * 2 + 1).sum(axis=1)
    assert cx.stats()["kernel_launches"] == 0
    np.testing.assert_array_equal(np.asarray(y), [9.0, 27.0])
    assert cx.stats()["kernel_launches"] >= 1


def test_operators_and_functions_follow_numpy(cx):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    x, y = lf.asarray(a), lf.asarray(b)
    for got, want in [
        (x + y, a + b), (x - 1.5, a - 1.5), (2 * x, 2 * a), (x / y, a / b),
        (x ** 2, a ** 2), (-x, -a), (abs(x), np.abs(a)), (x < y, a < b),
        (np.sqrt(abs(x)), np.sqrt(np.abs(a))), (np.exp(x), np.exp(a)),
        (np.maximum(x, y), np.maximum(a, b)), (lf.where(x > 0, x, y), np.where(a > 0, a, b)),
        (x.T, a.T), (x[1:, ::2], a[1:, ::2]), (x[-1], a[-1]), (x.reshape(4, 3), a.reshape(4, 3)),
    ]:
        got = np.asarray(got)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=2e-6)


def test_python_scalars_are_weak_as_in_numpy_2(cx):
    x = lf.asarray(np.ones(3, dtype=np.float32))
    assert (x * 2.5).dtype == np.float32
    assert (lf.asarray(np.ones(3, dtype=np.int8)) + 1).dtype == np.int8
    assert (x + np.float64(1)).dtype == np.float64


def test_reductions_with_axes_and_keepdims(cx):
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    x = lf.asarray(a)
    np.testing.assert_allclose(x.sum(axis=(0, 2)).numpy(), a.sum(axis=(0, 2)))
    np.testing.assert_allclose(x.mean(axis=1, keepdims=True).numpy(), a.mean(axis=1, keepdims=True))
    assert x.max().item() == 23.0
    assert x.argmax(axis=2).numpy().tolist() == a.argmax(axis=2).tolist()
    np.testing.assert_allclose(x.var(ddof=1).item(), a.var(ddof=1))
    np.testing.assert_allclose(x.cumsum(axis=1).numpy(), a.cumsum(axis=1))
    np.testing.assert_allclose(np.sum(x, axis=0).numpy(), a.sum(axis=0))
    assert np.std(x).item() == pytest.approx(a.std())


def test_demands_and_scalars(cx):
    x = lf.asarray(np.array([[1.5]]))
    assert float(x) == 1.5 and x.item() == 1.5 and int(lf.asarray(np.int32(7))) == 7
    out = np.empty((1, 1))
    x.copy_to_host(out)
    assert out[0, 0] == 1.5
    assert isinstance(x.explain(), str) and "graph" in x.explain()
    assert f"{x.sum():.3f} {x[0, 0]:>5}" == "1.500   1.5" and f"{x}" == str(np.array([[1.5]]))
    with pytest.raises(TypeError, match="0-d"):
        f"{x:.2f}"


def test_constructors(cx):
    assert lf.zeros((2, 3), np.int32).numpy().tolist() == [[0, 0, 0]] * 2
    assert lf.full(3, 2.5).numpy().tolist() == [2.5] * 3
    np.testing.assert_array_equal(lf.arange(5).numpy(), np.arange(5))
    like = lf.ones_like(lf.asarray(np.zeros((2, 2), np.float32)))
    assert like.dtype == np.float32 and like.numpy().sum() == 4


def test_ufunc_out_rebinds_a_lazyfuse_array(cx):
    x = lf.asarray(np.arange(3, dtype=np.float64))
    out = lf.zeros(3)
    before = out + 0
    np.multiply(x, 3.0, out=out)
    assert out.numpy().tolist() == [0.0, 3.0, 6.0]
    assert before.numpy().tolist() == [0.0, 0.0, 0.0]


def test_other_numpy_functions_run_on_computed_values(cx):
    x = lf.asarray(np.array([3.0, 1.0, 2.0]))
    assert np.sort(x).tolist() == [1.0, 2.0, 3.0]


def test_arrays_of_the_other_byte_order_are_their_values():
    for dtype in (">f8", ">i4", ">u2", ">f2"):
        big = np.arange(-3, 3).astype(dtype)[::2].reshape(3, 1)  # strided too
        x = lf.asarray(big)
        assert x.dtype == big.dtype.newbyteorder("=")
        assert np.array_equal(np.asarray(x + 1), big + 1)
        assert np.array_equal(np.asarray(lf.asarray(np.ones(3)) + big[:, 0]), np.ones(3) + big[:, 0])
    with pytest.raises(TypeError, match="complex"):
        lf.asarray(np.ones(3, dtype=">c16"))


def test_ndarray_methods_and_properties_are_numpys(backend):
    import copy
    a = np.arange(24.0).reshape(2, 3, 4) - 5
    x = lf.asarray(a)
    assert (x.itemsize, x.nbytes, x.strides, x.base) == (a.itemsize, a.nbytes, a.strides, None)
    for got, want in [(x.mT, a.mT), (x.real, a.real), (x.imag, a.imag), (x.conj(), a.conj()),
                      (x.dot(a[0, 0]), a.dot(a[0, 0])), (x.repeat(2, axis=1), a.repeat(2, axis=1)),
                      (x.nonzero()[2], a.nonzero()[2]), (x.compress([1, 0, 1], axis=1), a.compress([1, 0, 1], axis=1)),
                      (x.reshape(4, 6, order="F"), a.reshape(4, 6, order="F")),
                      (x.ravel("F"), a.ravel("F")), (x.flatten("F"), a.flatten("F")),
                      (np.reshape(x, (6, -1), order="F"), np.reshape(a, (6, -1), order="F")),
                      (x.flat[5:9], a.flat[5:9]), (x.argpartition(2, axis=-1)[..., 2], a.argpartition(2, axis=-1)[..., 2]),
                      (x.byteswap(), a.byteswap()),
                      (lf.asarray(a > 0).choose([a, -a]), (a > 0).choose([a, -a]))]:
        assert isinstance(got, lf.Array)
        np.testing.assert_array_equal(np.asarray(got), want)
    assert x.item(7) == a.item(7) and x.item(1, 2, 3) == a.item(1, 2, 3) and x.item((0, 1, 2)) == a.item((0, 1, 2))
    assert x.tobytes() == a.tobytes() and 7.0 in x and 99.0 not in x
    assert [np.asarray(row).tolist() for row in x] == [row.tolist() for row in a]
    assert len(x.flat) == a.size and list(x.flat)[3].item() == a.flat[3]
    assert copy.copy(x) is not x and np.array_equal(np.asarray(copy.deepcopy(x)), a)
    y, b = x * 1, a.copy()
    y.fill(2.5)
    b.fill(2.5)
    np.testing.assert_array_equal(np.asarray(y), b)
    y, b = x * 1, a.copy()
    y.flat[[1, 5]] = -1.0
    b.flat[[1, 5]] = -1.0
    np.testing.assert_array_equal(np.asarray(y), b)
    y, b = x[:, ::-1] * 1, a[:, ::-1].copy()
    y.partition(1, axis=1)
    b.partition(1, axis=1)
    np.testing.assert_array_equal(np.asarray(y)[:, 1], b[:, 1])
    with pytest.raises(ValueError, match="ndim < 2"):
        lf.asarray(a[0, 0]).mT
    with pytest.raises(TypeError, match="0-d"):
        iter(lf.asarray(np.float64(1.0)))
    assert complex(lf.asarray(np.float64(2.0))) == 2 + 0j


def test_foreign_types_get_not_implemented():
    class Other:
        def __radd__(self, other):
            return "other"

    assert lf.asarray(np.ones(2)) + Other() == "other"


def test_errors_are_numpy_style_exceptions():
    with pytest.raises(ValueError, match="could not be broadcast"):
        lf.asarray(np.ones(3)) + lf.asarray(np.ones(4))
    with pytest.raises(ValueError, match="axis 5 is out of bounds"):
        lf.asarray(np.ones(3)).sum(axis=5)
    with pytest.raises(TypeError, match="datetime64"):
        lf.asarray(np.ones(3, dtype="datetime64[s]"))
    with pytest.raises(TypeError, match="complex64 or complex128"):
        lf.asarray(np.ones(3, dtype=np.clongdouble))
    with pytest.raises(IndexError):
        lf.asarray(np.ones(3))[3]
    with pytest.raises(RuntimeError, match="cuda"):
        lf.Context("cuda") if not lf.cuda.is_available() else (_ for _ in ()).throw(RuntimeError("cuda"))


def test_contexts_and_cuda_source():
    with lf.use("sim"):
        x = lf.asarray(np.ones(4, dtype=np.float32))
        y = (x + 1).sum()
        assert y.item() == 8.0
        assert lf.stats()["h2d_copies"] == 1
        assert "__global__" in lf.cuda_source(x * 2)
    assert lf.Context("reference").backend == "reference"


def test_streams_and_dlpack():
    with lf.use("sim"):
        s = lf.cuda.stream()
        x = lf.cuda.to_device(np.arange(4.0), stream=s)
        y = (x * 2).sum()
        pending = s.eval(y)
        pending.wait()
        assert y.item() == 12.0
        with s.auto_synchronize():
            z = x + 1
            s.eval(z)
        assert z.copy_to_host(stream=s).tolist() == [1.0, 2.0, 3.0, 4.0]
    assert np.from_dlpack(lf.asarray(np.arange(3.0)) * 2).tolist() == [0.0, 2.0, 4.0]


def test_numbas_synchronize_events_and_device_array_helpers(capsys):
    cuda = lf.cuda
    with lf.use("sim"):
        s = cuda.stream()
        start, end = cuda.event(), cuda.event()
        start.record(s)
        x = cuda.to_device(np.arange(5.0), stream=s)
        s.eval(x * 2)
        end.record(s)
        end.synchronize()
        assert start.query() and 0.0 <= cuda.event_elapsed_time(start, end) == start.elapsed_time(end)
        cuda.synchronize()
        with pytest.raises(ValueError, match="recorded"):
            cuda.event_elapsed_time(start, cuda.event())
        d = cuda.device_array(3)
        d.copy_to_device(np.array([1.0, 2.0, 3.0]))
        assert d.copy_to_host().tolist() == [1.0, 2.0, 3.0]
        with pytest.raises(ValueError, match="same shape and dtype"):
            d.copy_to_device(np.zeros(4))
        assert cuda.is_cuda_array(d) and not cuda.is_cuda_array(np.zeros(2))
        assert cuda.as_cuda_array(d) is d and cuda.as_cuda_array(np.zeros(2)).shape == (2,)
    assert cuda.detect() == cuda.is_available()
    assert "CUDA GPU" in capsys.readouterr().out


def test_view_reads_the_bits_as_another_dtype():
    x = np.array([1.5, -0.0, np.inf, -2.75], dtype=np.float32)
    a = lf.asarray(x)
    np.testing.assert_array_equal(np.asarray((a * 1).view(np.int32)), x.view(np.int32))
    np.testing.assert_array_equal(np.asarray(a.view("uint32").view(np.float32)), x)
    with pytest.raises(TypeError, match="same size"):
        a.view(np.float64).numpy()


def test_copy_to_host_into_an_array_writes_that_array():
    x = lf.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    out = np.full((2, 3), -1.0, np.float32)
    assert (x * 2).copy_to_host(out=out) is out  # computed straight into it
    assert out.tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    flags = lf.asarray(np.array([1, 0, 3])) > 0
    into = np.zeros(3, bool)
    flags.copy_to_host(out=into)
    assert into.tolist() == [True, False, True]
    # Another dtype, or a strided out: converted through a copy, as np.copyto does.
    wide = np.zeros((2, 3), np.float64)
    (x + 0.5).copy_to_host(out=wide)
    assert wide[1, 2] == 5.5
    strided = np.zeros((2, 6), np.float32)[:, ::2]
    x.copy_to_host(out=strided)
    assert strided.tolist() == x.numpy().tolist()
    with pytest.raises(lf.ShapeError):
        x.copy_to_host(out=np.zeros(5, np.float32))
    with pytest.raises(lf.ShapeError):  # Numba refuses a broadcast too
        lf.asarray(np.arange(3.0)).copy_to_host(out=np.zeros((2, 3)))
    with pytest.raises(lf.DTypeError):  # a narrowing cast: refused, as Numba does
        (x + 0.5).astype(np.float64).copy_to_host(out=np.zeros((2, 3), np.float32))
    into_column = np.zeros((2, 3, 1), np.float32)  # axes of length 1 may differ, as in Numba
    x.copy_to_host(out=into_column)
    assert into_column[:, :, 0].tolist() == x.numpy().tolist()
    with pytest.raises(ValueError, match="shape"):
        x._a.read_into(np.zeros(6, np.float32))


def test_pinned_arrays_take_downloads_with_no_staging():
    with lf.use("sim") as cx:
        h = lf.cuda.pinned_array((4, 256), np.float32)
        assert isinstance(h, np.ndarray) and h.shape == (4, 256) and not h.any()
        h[:] = np.arange(1024, dtype=np.float32).reshape(4, 256)
        staged = cx.stats()["staged_bytes"]
        d = lf.cuda.to_device(h)  # uploaded now, straight from the pinned memory
        assert cx.stats()["staged_bytes"] == staged, "no staging copy"
        h[0, 0] = -1.0  # does not reach the device copy
        out = lf.cuda.pinned_array((4, 256), np.float32)
        before = cx.stats()["staged_bytes"]
        (d * 2).copy_to_host(out=out)
        assert cx.stats()["staged_bytes"] == before, "straight into pinned memory"
        assert out[0, 0] == 0.0 and out[3, 255] == 2046.0
        plain = np.empty((4, 256), np.float32)
        (d * 3).copy_to_host(out=plain)
        assert cx.stats()["staged_bytes"] > before, "pageable memory is staged"
        flags = lf.cuda.pinned_array(3, np.bool_)
        (lf.asarray(np.array([0, 2, 0])) > 1).copy_to_host(out=flags)
        assert flags.tolist() == [False, True, False]
        assert lf.cuda.pinned_array((2, 3), order="F").flags.f_contiguous
        with pytest.raises(ValueError, match="explicit strides"):
            lf.cuda.pinned_array(3, strides=(8,))


def test_mapped_arrays_are_written_by_the_device_in_place():
    with lf.use("sim") as cx:
        m = lf.cuda.mapped_array((2, 512), np.float64)
        assert isinstance(m, np.ndarray) and m.shape == (2, 512) and not m.any()
        d = lf.cuda.to_device(np.arange(1024, dtype=np.float64).reshape(2, 512))
        before = cx.stats()
        (d + 0.5).copy_to_host(out=m)
        after = cx.stats()
        assert m[0, 0] == 0.5 and m[1, 511] == 1023.5
        assert after["d2h_copies"] == before["d2h_copies"], "no copy: written in place"
        assert after["mapped_bytes"] - before["mapped_bytes"] == 8 * 1024
        assert lf.cuda.mapped_array((2, 3), order="F").flags.f_contiguous
        with pytest.raises(ValueError, match="explicit strides"):
            lf.cuda.mapped_array(3, strides=(8,))


def test_a_demand_larger_than_the_device_runs_in_chunks():
    n = 1 << 22  # 16 MiB of float32 per array
    a = np.arange(n, dtype=np.float32) % 61
    b = (np.arange(n, dtype=np.float32) * 7) % 53
    with lf.use(lf.Context("sim", device_memory_limit=8 << 20)) as cx:
        x, y = lf.asarray(a), lf.asarray(b)
        e = x * y + 1
        assert "pipeline (instead of the plan above)" in e.explain()
        np.testing.assert_array_equal(e.numpy(), a * b + 1)
        total = (x * x + y * y).sum()
        np.testing.assert_allclose(float(total), float(np.sum((a * a + b * b).astype(np.float64))), rtol=1e-5)
    with pytest.raises(TypeError):
        lf.Context("sim", 8 << 20)  # keywords only


def test_numpy_gets_a_computed_value_without_a_copy_and_cannot_change_it():
    with lf.use("cpu"):
        _a_computed_value_is_shared_read_only()


def _a_computed_value_is_shared_read_only():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    a = lf.asarray(x)
    # Into lazyfuse: a copy, so NumPy's later writes never reach the value.
    x[0, 0] = 100.0
    y = a * 2
    first = np.asarray(y)  # computed once, kept
    np.testing.assert_array_equal(first, np.arange(6).reshape(2, 3) * 2)
    # Out of lazyfuse: the kept value itself, read-only (as JAX's).
    second = np.asarray(y)
    assert np.shares_memory(first, second)
    assert not first.flags.writeable
    with pytest.raises(ValueError):
        first[0, 0] = 1.0
    with pytest.raises(ValueError):
        first.setflags(write=True)
    # A view handed out never sees a later write to the array.
    y[0, 0] = -1.0
    y += 1
    assert first[0, 0] == 0.0 and first[1, 2] == 10.0
    np.testing.assert_array_equal(np.asarray(y)[0], [0.0, 3.0, 5.0])
    # `copy=True` (and `np.array`) give new, writeable memory.
    fresh = np.array(a * 3)
    assert fresh.flags.writeable and not np.shares_memory(fresh, np.asarray(a))
    # The memory outlives the lazyfuse array.
    kept = np.asarray(lf.asarray(np.ones(1000, dtype=np.float64)) * 5)
    del a, y
    import gc
    gc.collect()
    assert kept.sum() == 5000.0
    # bool, float16 and 0-d values too.
    for v in (np.array([True, False]), np.array([1.5, 2.5], np.float16), np.float64(4.0)):
        w = lf.asarray(np.asarray(v))
        got = np.asarray(w)
        assert got.dtype == np.asarray(v).dtype and got.shape == np.shape(v)
        np.testing.assert_array_equal(got, v)


def test_results_reuse_dropped_memory_never_memory_still_viewed():
    """A large result's memory is kept for the next result of its size once
    nothing holds it (``Context.release_memory`` frees it); a NumPy view
    still holding one is never written."""
    with lf.use("cpu") as cx:
        n = 1 << 19  # 2 MiB of float32
        x = lf.asarray(np.arange(n, dtype=np.float32))
        held = np.asarray(x * 2)
        for k in range(3, 6):
            np.testing.assert_array_equal(np.asarray(x * k)[-3:], (n - 3 + np.arange(3)) * k)
        np.testing.assert_array_equal(held[-3:], (n - 3 + np.arange(3)) * 2)
        del held
        assert cx.release_memory() >= 4 * n
        assert cx.release_memory() == 0


def test_a_value_handed_to_numpy_comes_back_without_a_copy(backend):
    """``lf.asarray(np.asarray(y))``: the read-only view of ``y``'s value
    (which nobody can make writeable) comes back as that value, shared;
    a part of it, or any other NumPy array, is copied."""
    cx = lf.current_context()
    y = lf.asarray(np.arange(12, dtype=np.float32).reshape(3, 4)) * 2
    view = np.asarray(y)
    before = cx.stats()["host_copy_bytes"]
    again = lf.asarray(view)
    np.testing.assert_array_equal(np.asarray(again + 1), view + 1)
    if backend == "cpu":  # (a device's value comes to NumPy as a copy of its own)
        assert cx.stats()["host_copy_bytes"] == before
        assert np.shares_memory(np.asarray(again), view)
    part = lf.asarray(view[1:])
    assert cx.stats()["host_copy_bytes"] > before
    np.testing.assert_array_equal(np.asarray(part), view[1:])


def test_asarray_copy_follows_the_array_api():
    x = np.arange(4.0)
    a = lf.asarray(x)
    # copy=False: a lazyfuse array of the same dtype as it is; a NumPy
    # array, or a cast, needs a copy: ValueError, saying why.
    assert lf.asarray(a, copy=False) is a
    assert lf.asarray(a, dtype="float64", copy=False) is a
    with pytest.raises(ValueError, match="owner may still write"):
        lf.asarray(x, copy=False)
    with pytest.raises(ValueError, match="float64 array to float32 needs a copy"):
        lf.asarray(a, dtype=np.float32, copy=False)
    # copy=True: a new handle; writing it leaves the first alone.
    b = lf.asarray(a, copy=True)
    assert b is not a
    b[0] = 9.0
    np.testing.assert_array_equal(np.asarray(a), x)
    assert np.asarray(b)[0] == 9.0
    h = a.astype("bfloat16")
    assert lf.asarray(h, dtype="bfloat16", copy=False) is h
    np.testing.assert_array_equal(np.asarray(lf.asarray(x, copy=True)), x)


def test_stats_count_the_copies_at_the_boundary():
    with lf.use("cpu") as cx:
        copied = lambda: cx.stats()["host_copy_bytes"]  # noqa: E731
        x = np.arange(1000, dtype=np.float64)
        before = copied()
        a = lf.asarray(x)
        assert copied() - before == x.nbytes  # taken in: one copy
        y = a * 2
        before = copied()
        np.asarray(y)
        np.asarray(y)
        assert copied() == before  # handed out: the kept value itself
        y.numpy()
        assert copied() - before == x.nbytes  # a writeable copy asked for


def test_dlpack_shares_the_kept_value_read_only():
    with lf.use("cpu"):
        y = lf.asarray(np.arange(6.0)) * 3
        first = np.from_dlpack(y)  # NumPy 2 asks for DLPack 1.0
        np.testing.assert_array_equal(first, np.arange(6.0) * 3)
        assert not first.flags.writeable
        assert np.shares_memory(first, np.asarray(y))
        fresh = np.from_dlpack(y, copy=True)
        assert fresh.flags.writeable and not np.shares_memory(fresh, first)
        # An old consumer gets a copy, or an error when it may not copy.
        assert y.__dlpack__() is not None
        with pytest.raises(BufferError):
            y.__dlpack__(copy=False)
