"""Statistics of more float32 data than this machine holds, generated chunk
by chunk as Dask arrays of lazyfuse chunks, with Dask's progress bar.

    python bindings/python/examples/dask_statistics.py --gigabytes 32
    python bindings/python/examples/dask_statistics.py --gigabytes 32 --workers 2

Each chunk's task draws its random numbers and reduces them in one fused
lazyfuse program; only the per-chunk partial results are kept, so memory
stays at a few chunks whatever ``--gigabytes`` is. ``--workers N`` runs the
same on a ``lazyfuse.dask.LocalCluster`` of N worker processes (one per GPU
where there are GPUs).
"""

import argparse
import time

import dask
import dask.array as da
import numpy as np

import lazyfuse.dask as ld


def statistics(x):
    """Mean, standard deviation, the share beyond 3 sigma and the maximum
    of a standard normal sample: 0, 1, 0.0027 and about 6."""
    return x.mean(), x.std(), (abs(x) > 3.0).mean(), x.max()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gigabytes", type=float, default=4.0)
    parser.add_argument("--chunk-mb", type=float, default=128.0)
    parser.add_argument("--workers", type=int, default=0,
                        help="a distributed cluster of this many worker processes")
    args = parser.parse_args()
    columns = 1024
    rows_per_chunk = max(int(args.chunk_mb * 2**20 / 4 / columns), 1)
    rows = max(int(args.gigabytes * 2**30 / 4 / columns) // rows_per_chunk, 1) * rows_per_chunk
    with dask.config.set({"array.backend": "lazyfuse"}):
        x = da.random.default_rng(2026).standard_normal(
            (rows, columns), dtype=np.float32, chunks=(rows_per_chunk, columns))
    print(f"{x.nbytes / 2**30:.1f} GiB of float32 in {x.npartitions} chunks of lazyfuse arrays "
          f"({type(x._meta).__module__}.{type(x._meta).__name__})")
    start = time.perf_counter()
    if args.workers:
        from distributed import Client, progress
        with ld.LocalCluster(n_workers=args.workers, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            futures = client.compute(list(statistics(x)))
            progress(futures)
            values = client.gather(futures)
    else:
        from dask.diagnostics import ProgressBar
        with ProgressBar():
            values = dask.compute(*statistics(x))
    seconds = time.perf_counter() - start
    mean, std, tails, largest = (float(np.asarray(v)) for v in values)
    print(f"\nmean {mean:.6f}  std {std:.6f}  beyond 3 sigma {tails:.6f}  max {largest:.3f}")
    print(f"{x.nbytes / 2**30 / seconds:.2f} GiB/s generated and reduced")


if __name__ == "__main__":
    main()
