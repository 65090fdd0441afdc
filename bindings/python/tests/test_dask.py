"""Dask arrays of lazyfuse chunks (``lazyfuse.dask``): Dask's operations
against NumPy's, the ``"lazyfuse"`` array backend, one launch per fused
task, pickling, a 2-process ``distributed`` cluster (and a worker killed
mid-computation), bad input, and xarray over lazyfuse arrays."""

import os
import pickle
import time

import numpy as np
import pytest

import lazyfuse as lf

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
import lazyfuse.dask as ld  # noqa: E402  (after dask's importorskip)

RNG = np.random.default_rng(7)
X = RNG.standard_normal((300, 40)).astype(np.float32)
Y = RNG.standard_normal((40, 24)).astype(np.float32)

OPERATIONS = {
    "element-wise chain": (lambda d, y: np.exp(d) * 2 + np.sin(d) - 1,
                           lambda x, y: np.exp(x) * 2 + np.sin(x) - 1),
    "sum": (lambda d, y: d.sum(), lambda x, y: x.sum()),
    "sum axis 0": (lambda d, y: d.sum(axis=0), lambda x, y: x.sum(axis=0)),
    "sum axis 1": (lambda d, y: (d * d).sum(axis=1), lambda x, y: (x * x).sum(axis=1)),
    "max axis 0 keepdims": (lambda d, y: d.max(axis=0, keepdims=True),
                            lambda x, y: x.max(axis=0, keepdims=True)),
    "mean": (lambda d, y: d.mean(axis=1), lambda x, y: x.mean(axis=1)),
    "std": (lambda d, y: d.std(axis=0), lambda x, y: x.std(axis=0)),
    "var": (lambda d, y: d.var(), lambda x, y: x.var()),
    "standardise": (lambda d, y: (d - d.mean(0)) / d.std(0), lambda x, y: (x - x.mean(0)) / x.std(0)),
    "argmin": (lambda d, y: d.argmin(axis=0), lambda x, y: x.argmin(axis=0)),
    "slicing": (lambda d, y: d[7:290:3, ::-2], lambda x, y: x[7:290:3, ::-2]),
    "fancy rows": (lambda d, y: d[[5, 250, 3, 120]], lambda x, y: x[[5, 250, 3, 120]]),
    "rechunk": (lambda d, y: d.rechunk((64, 16)) * 3, lambda x, y: x * 3),
    "transpose": (lambda d, y: d.T + 1, lambda x, y: x.T + 1),
    "matmul": (lambda d, y: d @ y, lambda x, y: x @ y),
    "tensordot": (lambda d, y: da.tensordot(d, d, axes=([0], [0])),
                  lambda x, y: np.tensordot(x, x, axes=([0], [0]))),
    "astype": (lambda d, y: d.astype(np.float64) / 3, lambda x, y: x.astype(np.float64) / 3),
    "map_blocks": (lambda d, y: d.map_blocks(lambda b: np.tanh(b) * b), lambda x, y: np.tanh(x) * x),
    "cumsum": (lambda d, y: d.cumsum(axis=0), lambda x, y: x.cumsum(axis=0)),
    "where": (lambda d, y: da.where(d > 0, d, 0).sum(axis=1), lambda x, y: np.where(x > 0, x, 0).sum(axis=1)),
    "map_overlap": (lambda d, y: d.map_overlap(lambda b: b * 2, depth=1, boundary="reflect"),
                    lambda x, y: x * 2),
    # Dask's percentile merges per-chunk ones (approximate by design): the
    # same over NumPy chunks is the reference.
    "percentile": (lambda d, y: da.percentile(d[:, 0], [10, 50, 90]),
                   lambda x, y: da.percentile(da.from_array(x, chunks=(75, 40))[:, 0],
                                              [10, 50, 90]).compute()),
    "topk": (lambda d, y: da.topk(d[:, 0], 5), lambda x, y: np.sort(x[:, 0])[::-1][:5]),
    "histogram": (lambda d, y: da.histogram(d, bins=10, range=(-3, 3))[0],
                  lambda x, y: np.histogram(x, bins=10, range=(-3, 3))[0]),
    "concatenate": (lambda d, y: da.concatenate([d, d[:, ::-1]], axis=1),
                    lambda x, y: np.concatenate([x, x[:, ::-1]], axis=1)),
}


def _chunked():
    return ld.from_array(X, chunks=(75, 40)), ld.from_array(Y, chunks=(20, 24))


@pytest.mark.parametrize("name", list(OPERATIONS))
def test_dask_operations_on_lazyfuse_chunks_equal_numpy(name):
    lazy, want = OPERATIONS[name]
    d, y = _chunked()
    result = lazy(d, y)
    # (Dask gives histogram counts a NumPy meta whatever the chunks are.)
    assert isinstance(result._meta, lf.Array) or name == "histogram", type(result._meta)
    got = result.compute()  # the threaded scheduler
    assert isinstance(got, lf.Array), type(got)
    np.testing.assert_allclose(np.asarray(got), want(X, Y), rtol=2e-5, atol=2e-5)


def test_store_writes_numpy_memory():
    d, _ = _chunked()
    out = np.empty_like(X)
    da.store(d * 2, out)
    np.testing.assert_array_equal(out, X * 2)


def test_chunks_go_to_the_context_of_the_thread_that_makes_them():
    # The synchronous scheduler runs the tasks in this thread: `use` holds.
    with lf.use("sim"), dask.config.set(scheduler="sync"):
        d, _ = _chunked()
        got = (np.exp(d) + 1).sum(axis=1).compute()
        assert got._a.backend == "sim"
    np.testing.assert_allclose(np.asarray(got), (np.exp(X) + 1).sum(axis=1), rtol=1e-5)


def test_a_fused_task_is_one_launch_per_chunk():
    d, _ = _chunked()
    y = (np.exp(d) * 2 + 1).sum(axis=1)
    with dask.config.set(scheduler="sync"):
        before = lf.stats()["kernel_launches"]
        parts = dask.compute(*y.to_delayed().ravel())
        launches = lf.stats()["kernel_launches"] - before
    # Four chunks, each one task (the chain, its row sums and Dask's sum
    # over the partials' size-1 axis): one launch each.
    assert launches == 4 and all(isinstance(p, lf.Array) for p in parts)
    got = np.concatenate([np.asarray(p) for p in parts])
    np.testing.assert_allclose(got, (np.exp(X) * 2 + 1).sum(axis=1), rtol=1e-5)


def test_the_lazyfuse_backend_makes_lazyfuse_chunks():
    with dask.config.set({"array.backend": "lazyfuse"}):
        made = {
            "ones": (da.ones((40, 10), chunks=(10, 10), dtype=np.float32), np.ones((40, 10), np.float32)),
            "zeros": (da.zeros((30,), chunks=7), np.zeros(30)),
            "full": (da.full((6, 6), 2.5, chunks=3), np.full((6, 6), 2.5)),
            "arange": (da.arange(50, chunks=12), np.arange(50)),
        }
        normal = da.random.default_rng(3).standard_normal((4000,), chunks=1000)
        legacy = da.random.RandomState(3).uniform(size=(4000,), chunks=1000)
        again = da.random.default_rng(3).standard_normal((4000,), chunks=1000)
    for name, (lazy, want) in made.items():
        assert isinstance(lazy._meta, lf.Array), name
        got = lazy.compute()
        assert isinstance(got, lf.Array), name
        np.testing.assert_array_equal(np.asarray(got), want)
    for draws in (normal, legacy):
        assert isinstance(draws._meta, lf.Array)
        values = np.asarray(draws.compute())
        assert values.shape == (4000,) and len(np.unique(values)) == 4000
    # Seeded: the same draws again; chunks draw independent streams.
    np.testing.assert_array_equal(np.asarray(again.compute()), np.asarray(normal.compute()))
    assert abs(float(np.asarray(normal.compute()).mean())) < 0.1


def test_arrays_move_to_and_from_the_lazyfuse_backend():
    numpy_backed = da.from_array(X, chunks=(100, 40))
    moved = numpy_backed.to_backend("lazyfuse")
    assert isinstance(moved._meta, lf.Array)
    assert isinstance((moved + 1).compute(), lf.Array)
    back = moved.to_backend("numpy")
    assert isinstance(back.compute(), np.ndarray)
    np.testing.assert_array_equal(back.compute(), X)


def test_arrays_pickle_as_their_values():
    x = lf.asarray(X) * 2
    y = pickle.loads(pickle.dumps(x))
    assert isinstance(y, lf.Array) and y.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(y), X * 2)


def test_random_seeds_of_every_form_numpy_takes():
    from lazyfuse import random
    a = random.default_rng([1, 2, 3]).random(8)
    b = random.default_rng(np.array([1, 2, 3], np.uint32)).random(8)
    c = random.default_rng(np.random.SeedSequence([1, 2, 3])).random(8)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    np.testing.assert_array_equal(np.asarray(a), np.asarray(c))
    children = random.Philox(5).spawn(2)
    first, second = (np.asarray(random.default_rng(g).random(8)) for g in children)
    assert not np.array_equal(first, second)
    with pytest.raises(lf.ArgumentError, match="default_rng"):
        random.default_rng([1, -2])
    with pytest.raises(lf.ArgumentError, match="default_rng"):
        random.default_rng("seed")


def test_complex_chunks_are_lazyfuse_complex_arrays():
    z = X[:, :8] + 1j * X[:, 8:16]
    d = ld.from_array(z, chunks=(75, 4))
    assert isinstance(d._meta, lf.ComplexArray)
    total = (d * 2j + 1).sum(axis=0).compute()
    assert isinstance(total, lf.ComplexArray)
    np.testing.assert_allclose(np.asarray(total), (z * 2j + 1).sum(axis=0), rtol=2e-5)
    power = (d.conj() * d).real.mean(axis=1).compute()
    np.testing.assert_allclose(np.asarray(power), (z.conj() * z).real.mean(axis=1), rtol=2e-5)
    spectrum = da.fft.fft(d.rechunk((75, 8)), axis=1).compute()
    np.testing.assert_allclose(np.asarray(spectrum), np.fft.fft(z, axis=1), rtol=2e-5, atol=2e-4)
    np.testing.assert_array_equal(np.asarray(da.concatenate([d, d[:2]]).compute()),
                                  np.concatenate([z, z[:2]]))
    moved = da.from_array(z, chunks=(75, 4)).to_backend("lazyfuse")
    assert isinstance(moved._meta, lf.ComplexArray)
    assert pickle.loads(pickle.dumps(d.compute())).dtype == z.dtype


def test_bad_chunks_give_clear_errors():
    d = ld.from_array(X, chunks=(75, 40))
    with pytest.raises(ValueError):
        (d + ld.from_array(X[:, :7], chunks=(75, 7))).compute()


# ---------------------------------------------------------------- distributed

@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = ld.LocalCluster(n_workers=2, backend="cpu", dashboard_address=None,
                              silence_logs=40)
    with distributed.Client(cluster) as client:
        yield client
    cluster.close()


def test_a_two_process_cluster_computes_numpy_equal_results(client):
    z = X[:, :8] - 2j * X[:, 8:16]
    spectrum = np.abs(da.fft.fft(ld.from_array(z, chunks=(75, 8)), axis=1)).compute()
    np.testing.assert_allclose(np.asarray(spectrum), np.abs(np.fft.fft(z, axis=1)), rtol=2e-5, atol=2e-4)
    d, y = _chunked()
    for name in ("standardise", "matmul", "sum axis 0", "rechunk"):
        lazy, want = OPERATIONS[name]
        got = lazy(d, y).compute()
        assert isinstance(got, lf.Array), name
        np.testing.assert_allclose(np.asarray(got), want(X, Y), rtol=2e-5, atol=2e-5)
    # The chunks were computed on both worker processes, in lazyfuse.
    launches = client.run(lambda: __import__("lazyfuse").stats()["kernel_launches"])
    assert len(launches) == 2 and all(n > 0 for n in launches.values()), launches
    backends = client.run(lambda: __import__("lazyfuse").current_context().backend)
    assert set(backends.values()) == {"cpu"}


async def _exit_process():
    os._exit(1)


def _slow(block):
    time.sleep(0.3)
    return block * 2


def test_a_worker_killed_mid_computation_is_recomputed_exactly(client):
    d = ld.from_array(X, chunks=(25, 40))
    future = client.compute(d.map_blocks(_slow).sum(axis=0))
    time.sleep(0.6)
    victim = sorted(client.scheduler_info()["workers"])[0]
    client.run(_exit_process, workers=[victim], wait=False)
    got = future.result(timeout=120)
    assert victim not in client.scheduler_info()["workers"]  # it died (its nanny restarts it)
    np.testing.assert_allclose(np.asarray(got), (X * 2).sum(axis=0), rtol=2e-5, atol=2e-5)


# ---------------------------------------------------------------- xarray

def test_xarray_over_lazyfuse_arrays_stays_lazy_and_equals_numpy():
    xr = pytest.importorskip("xarray")
    labelled = xr.DataArray(lf.asarray(X), dims=("time", "site"))
    result = ((labelled - labelled.mean("time")) ** 2).sum("site")
    assert isinstance(result.data, lf.Array)
    np.testing.assert_allclose(np.asarray(result.data), ((X - X.mean(0)) ** 2).sum(1), rtol=1e-4)
    through_dask = xr.DataArray(ld.from_array(X, chunks=(100, 40)), dims=("time", "site"))
    anomaly = (through_dask - through_dask.mean("time")).std("time")
    got = anomaly.compute().data
    assert isinstance(got, lf.Array)
    np.testing.assert_allclose(np.asarray(got), (X - X.mean(0)).std(0), rtol=1e-4)
