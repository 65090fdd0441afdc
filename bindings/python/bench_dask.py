"""Dask with lazyfuse chunks against Dask with NumPy chunks, in one process.

    python bindings/python/bench_dask.py --gigabytes 8 --repeats 3
    python bindings/python/bench_dask.py --gigabytes 1 --workers 2   # + distributed scaling

Programs (float32, chunks of ``--chunk-mb``):

- ``generated``: an element-wise chain and its sum over uniform random data
  generated chunk by chunk (``da.random.default_rng(0).random``), never all
  in memory: each backend draws with its own generator.
- ``in memory``: the same chain and sum, and a standardisation, over one
  NumPy array already in memory (``da.from_array``): the chunks' work alone.

Ratios are lazyfuse / NumPy (lower is better), medians of interleaved
rounds on the threaded scheduler. ``--workers N`` also times the generated
program on a ``lazyfuse.dask.LocalCluster`` of 1 and of N CPU worker
processes (one task and one lazyfuse thread each) and prints N workers'
throughput over one's.
"""

import argparse
import statistics
import time

import dask
import dask.array as da
import numpy as np

import lazyfuse as lf
import lazyfuse.dask as ld


def chain(x):
    return (np.exp(-x * x * 0.5) * np.cos(3.0 * x) + 0.5 * x).sum()


def standardise(x):
    z = (x - x.mean(axis=0)) / x.std(axis=0)
    return (z * z).mean()


def generated(backend, elements, chunk):
    with dask.config.set({"array.backend": backend}):
        x = da.random.default_rng(0).random((elements,), dtype=np.float32, chunks=chunk)
    return chain(x)


def timed(program, repeats):
    """Median seconds of ``program().compute()`` over ``repeats`` runs."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        value = program().compute()
        np.asarray(value)
        times.append(time.perf_counter() - start)
    return statistics.median(times), float(np.asarray(value))


def compare(name, programs, repeats):
    (t_np, v_np), (t_lf, v_lf) = (timed(programs[b], repeats) for b in ("numpy", "lazyfuse"))
    print(f"{name:28s} lazyfuse/NumPy {t_lf / t_np:5.2f}   (NumPy {v_np:.6g}, lazyfuse {v_lf:.6g})",
          flush=True)


def scaling(elements, chunk, workers):
    from distributed import Client
    rates = {}
    for n in (1, workers):
        with ld.LocalCluster(n_workers=n, backend="cpu", lazyfuse_threads=1,
                             dashboard_address=None, silence_logs=40) as cluster, Client(cluster):
            generated("lazyfuse", elements, chunk).compute()  # warm the workers
            start = time.perf_counter()
            generated("lazyfuse", elements, chunk).compute()
            rates[n] = elements / (time.perf_counter() - start)
    print(f"distributed, {workers} workers / 1 worker: {rates[workers] / rates[1]:.2f}× the throughput",
          flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gigabytes", type=float, default=8.0, help="generated float32 data")
    parser.add_argument("--memory-gigabytes", type=float, default=1.0, help="in-memory float32 data")
    parser.add_argument("--chunk-mb", type=float, default=64.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=0, help="also time N distributed workers")
    args = parser.parse_args()
    chunk = int(args.chunk_mb * 2**20 / 4)
    elements = max(int(args.gigabytes * 2**30 / 4) // chunk, 1) * chunk
    print(f"lazyfuse {lf.__name__}, dask {dask.__version__}, threaded scheduler; "
          f"{elements * 4 / 2**30:.2f} GiB generated, chunks of {chunk * 4 / 2**20:.0f} MiB")
    compare("generated: chain + sum", {b: (lambda b=b: generated(b, elements, chunk))
                                       for b in ("numpy", "lazyfuse")}, args.repeats)
    rows = max(int(args.memory_gigabytes * 2**30 / 4 / 256), 1)
    data = np.random.default_rng(1).random((rows, 256), dtype=np.float32)
    block = (max(chunk // 256, 1), 256)
    numpy_backed = da.from_array(data, chunks=block)
    lazy_backed = ld.from_array(data, chunks=block)
    for name, program in (("in memory: chain + sum", chain), ("in memory: standardise", standardise)):
        compare(name, {"numpy": lambda p=program: p(numpy_backed),
                       "lazyfuse": lambda p=program: p(lazy_backed)}, args.repeats)
    if args.workers > 1:
        scaling(elements, chunk, args.workers)


if __name__ == "__main__":
    main()
