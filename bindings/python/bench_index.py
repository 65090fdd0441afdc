"""Advanced indexing from Python against NumPy, in one process.

    python bindings/python/bench_index.py [--n 1000] [--repeats 15]

Cases, each on an ``n`` × ``n`` float64 array (lazyfuse on its default
context, the CPU), with ``n`` random indices:
- rows ``np.take(x, idx, axis=0, out=out)``, columns ``axis=1``, and a
  flat take of ``n * n`` random indices, each into a preallocated array;
- ``x[rows, cols]`` for ``n * n`` random pairs (one gather: the indices
  checked and combined on the host), read into a preallocated array;
- ``y[idx] = row`` (a scatter of rows, repeats landing their last) and
  ``y[y > 0.5] = 0`` (a mask and one value), each on a fresh copy, then read
  into a preallocated array.

Prints the minimum and the median over the repeats (the first two are
dropped: compilation, first touches). Cases alternate within each repeat,
so all see the same machine.
"""

import argparse

import numpy as np

import lazyfuse as lf
from bench_timing import interleaved, report


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    n = args.n
    rng = np.random.default_rng(0)
    a = rng.random((n, n))
    idx = rng.integers(0, n, n)
    flat_idx = rng.integers(0, n * n, n * n)
    rows, cols = rng.integers(0, n, n * n), rng.integers(0, n, n * n)
    row = rng.random(n)
    x = lf.asarray(a)
    out = np.empty_like(a)
    flat_out = np.empty(n * n)

    def scatter_lazy():
        y = x.copy()
        y[idx] = row
        y.copy_to_host(out)

    def scatter_numpy():
        y = a.copy()
        y[idx] = row
        np.copyto(out, y)

    def mask_lazy():
        y = x.copy()
        y[y > 0.5] = 0.0
        y.copy_to_host(out)

    def mask_numpy():
        y = a.copy()
        y[y > 0.5] = 0.0
        np.copyto(out, y)

    for lazy, eager in [(scatter_lazy, scatter_numpy), (mask_lazy, mask_numpy)]:
        lazy()
        want = out.copy()
        eager()
        np.testing.assert_array_equal(want, out)
    cases = {
        "take rows, lazyfuse": lambda: lf.take(x, idx, axis=0, out=out),
        "take rows, NumPy": lambda: np.take(a, idx, axis=0, out=out),
        "take columns, lazyfuse": lambda: lf.take(x, idx, axis=1, out=out),
        "take columns, NumPy": lambda: np.take(a, idx, axis=1, out=out),
        "take flat, lazyfuse": lambda: lf.take(x, flat_idx, out=flat_out),
        "take flat, NumPy": lambda: np.take(a, flat_idx, out=flat_out),
        "x[rows, cols], lazyfuse": lambda: x[rows, cols].copy_to_host(flat_out),
        "x[rows, cols], NumPy": lambda: np.copyto(flat_out, a[rows, cols]),
        "y[idx] = row, lazyfuse": scatter_lazy,
        "y[idx] = row, NumPy": scatter_numpy,
        "y[y > 0.5] = 0, lazyfuse": mask_lazy,
        "y[y > 0.5] = 0, NumPy": mask_numpy,
    }
    report(f"{n} x {n}, float64", interleaved(cases, args.repeats), 28)


if __name__ == "__main__":
    main()
