"""The standards lazyfuse speaks beyond NumPy's own namespace: the array API
standard's introspection (``__array_namespace__``, devices, namespace
info) and CuPy's helpers (``get_array_module``, ``asnumpy``, ``fuse``)."""

import numpy as np
import pytest

import lazyfuse as lf


def test_arrays_name_their_namespace_and_version():
    x = lf.asarray(np.arange(4.0))
    assert x.__array_namespace__() is lf
    assert x.__array_namespace__(api_version="2023.12") is lf
    assert lf.__array_api_version__ == "2024.12"
    with pytest.raises(ValueError, match="2019.01"):
        x.__array_namespace__(api_version="2019.01")
    # The array API's `bool` dtype, without shadowing the builtin.
    assert lf.bool is np.bool_ and lf.asarray([1, 0], dtype=lf.bool).dtype == np.bool_


def test_namespace_info_lists_capabilities_devices_and_dtypes():
    info = lf.__array_namespace_info__()
    assert info.capabilities()["boolean indexing"] is True
    assert info.capabilities()["data-dependent shapes"] is True
    devices = info.devices()
    assert lf.Device("cpu") in devices and lf.Device("sim") in devices
    assert (lf.Device("cuda") in devices) == lf.cuda.is_available()
    assert info.default_device() == lf.Device(lf.current_context().backend)
    defaults = info.default_dtypes()
    assert defaults["real floating"] == np.float64 and defaults["indexing"] == np.int64
    assert set(info.dtypes(kind="unsigned integer")) == {"uint8", "uint16", "uint32", "uint64"}
    # The standard's dtypes: float16 and bfloat16 are lazyfuse's beyond it.
    assert set(info.dtypes(kind=("bool", "real floating"))) == {"bool", "float32", "float64"}
    assert defaults["complex floating"] == np.complex128
    assert set(info.dtypes(kind="complex floating")) == {"complex64", "complex128"}
    assert len(info.dtypes()) == 13


def test_arrays_move_between_devices():
    with lf.use("cpu"):
        x = lf.asarray(np.arange(6.0).reshape(2, 3)) * 2
    assert x.device == lf.Device("cpu") and x.to_device("cpu") is x
    on_sim = x.to_device(lf.Device("sim"))
    assert on_sim.device == lf.Device("sim")
    np.testing.assert_array_equal(np.asarray(on_sim + 1), np.arange(6.0).reshape(2, 3) * 2 + 1)
    made = [lf.zeros(3, device="sim"), lf.ones((2,), device=lf.Device("sim")),
            lf.full(2, 7, device="sim"), lf.arange(5, device="sim"),
            lf.asarray([1.0, 2.0], device="sim"), lf.empty(1, device=lf.Device("sim"))]
    assert all(a.device == lf.Device("sim") for a in made)
    with pytest.raises(lf.ArgumentError, match="backend 'tpu'"):
        x.to_device("tpu")
    with pytest.raises(lf.ArgumentError, match="stream"):
        x.to_device("sim", stream=1)


def test_the_array_apis_special_forms():
    x = lf.asarray(np.arange(6.0).reshape(2, 3))
    # Default dtypes of creation functions given dtype=None.
    assert lf.zeros(2, dtype=None).dtype == np.float64 and lf.ones((), dtype=None).dtype == np.float64
    assert lf.empty(1, dtype=None).dtype == np.float64
    assert lf.arange(0.0, step=2).dtype == np.float64 and lf.arange(3).dtype == np.int64
    # isdtype and finfo over lazyfuse's dtype names; finfo's fields are Python floats.
    assert lf.isdtype(lf.float32, "real floating") and lf.isdtype(lf.int8, (lf.int8, "bool"))
    assert not lf.isdtype(lf.uint8, "signed integer") and lf.isdtype(x.dtype, "numeric")
    info = lf.finfo(lf.float32)
    assert type(info.eps) is float and info.bits == 32 and info.tiny == np.finfo(np.float32).tiny
    assert lf.finfo(x).dtype == np.float64
    # clip without bounds, var/std with a fractional correction or no axes,
    # running sums with their initial value.
    np.testing.assert_array_equal(np.asarray(lf.clip(x)), np.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose(np.asarray(lf.var(x, axis=0, correction=0.5)),
                               np.var(np.arange(6.0).reshape(2, 3), axis=0, ddof=0.5))
    np.testing.assert_array_equal(np.asarray(lf.std(x, axis=())), np.zeros((2, 3)))
    np.testing.assert_array_equal(np.asarray(lf.cumulative_sum(x, axis=1, include_initial=True)),
                                  [[0, 0, 1, 3], [0, 3, 7, 12]])
    np.testing.assert_array_equal(np.asarray(lf.cumulative_prod(lf.asarray([2, 3]), include_initial=True)),
                                  [1, 2, 6])
    with pytest.raises(lf.ArgumentError, match="axis must be given"):
        lf.cumulative_sum(x)
    # from_dlpack onto a device; a mask of no elements over no elements.
    moved = lf.from_dlpack(np.arange(3.0), device=lf.Device("sim"))
    assert moved.device == lf.Device("sim") and np.asarray(moved).tolist() == [0.0, 1.0, 2.0]
    assert lf.from_dlpack(x, device="cpu").device == lf.Device("cpu")
    # Descending sorts, stable: equal values keep their order.
    v = np.array([[3, 1, 3, 2, 1], [0, 5, 5, 5, 4]])
    np.testing.assert_array_equal(np.asarray(lf.sort(lf.asarray(v), descending=True)),
                                  -np.sort(-v, axis=-1))
    np.testing.assert_array_equal(np.asarray(lf.argsort(lf.asarray(v), descending=True)),
                                  np.argsort(-v, axis=-1, stable=True))
    np.testing.assert_array_equal(np.asarray(lf.argsort(lf.asarray(v), axis=0, descending=True)),
                                  np.argsort(-v, axis=0, stable=True))
    assert lf.isdtype(np.bool_, "bool") and not lf.isdtype(np.bool_, lf.uint8)
    # The linalg extension's trace and diagonal are over the last two axes.
    stack = np.arange(18.0).reshape(2, 3, 3)
    np.testing.assert_array_equal(np.asarray(lf.linalg.trace(lf.asarray(stack), offset=1)),
                                  np.linalg.trace(stack, offset=1))
    np.testing.assert_array_equal(np.asarray(lf.linalg.diagonal(lf.asarray(stack))),
                                  np.linalg.diagonal(stack))
    empty = lf.asarray(np.zeros((0, 1)))
    assert empty[lf.asarray(np.zeros((0, 0), bool))].shape == (0,)
    # (NumPy lets a mask's axis of length 0 cover any axis.)
    assert lf.asarray(np.ones((2, 3)))[np.zeros(0, bool)].shape == (0, 3)
    with pytest.raises(IndexError, match="did not match"):
        lf.asarray(np.ones((2, 3)))[np.zeros((0, 1), bool)]


def test_cupy_helpers():
    x = lf.asarray(np.linspace(0, 1, 5, dtype=np.float32))
    assert lf.get_array_module(x) is lf and lf.get_array_module(np.ones(2), x) is lf
    assert lf.get_array_module(np.ones(2), 3.0) is np
    value = lf.asnumpy(x * 2)
    assert isinstance(value, np.ndarray) and value.flags.writeable
    np.testing.assert_array_equal(value, np.linspace(0, 1, 5, dtype=np.float32) * 2)
    out = np.empty(5, np.float32)
    assert lf.asnumpy(x + 1, out=out) is out
    np.testing.assert_array_equal(out, np.linspace(0, 1, 5, dtype=np.float32) + 1)
    matrix = lf.asnumpy(lf.asarray(np.ones((2, 3))), order="F")
    assert matrix.flags.f_contiguous
    np.testing.assert_array_equal(lf.asnumpy([1, 2]), np.array([1, 2]))


def test_fuse_keeps_cupys_calling_conventions():
    @lf.fuse
    def squared_difference(a, b):
        return (a - b) * (a - b)

    @lf.fuse(kernel_name="axpy")
    def axpy(a, x, y):
        return a * x + y

    x, y = np.arange(4.0), np.ones(4)
    lazy = squared_difference(lf.asarray(x), lf.asarray(y))
    assert isinstance(lazy, lf.Array)
    assert squared_difference.__name__ == "squared_difference" and axpy.kernel_name == "axpy"
    np.testing.assert_array_equal(np.asarray(lazy), (x - y) ** 2)
    # NumPy arguments run in NumPy, as CuPy's fuse does.
    plain = axpy(2.0, x, y)
    assert isinstance(plain, np.ndarray)
    np.testing.assert_array_equal(plain, 2 * x + y)
    # One kernel for the whole fused function.
    cx = lf.Context("sim")
    with cx:
        a, b = lf.asarray(x), lf.asarray(y)
    before = cx.stats()["kernel_launches"]
    np.asarray(axpy(3.0, squared_difference(a, b), b))
    assert cx.stats()["kernel_launches"] - before == 1
