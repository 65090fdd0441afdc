"""Joining and slice assignment from Python against NumPy, in one process.

    python bindings/python/bench_join.py [--n 1000000] [--repeats 15]

Cases, each on float64 (lazyfuse on its default context, the CPU):
- ``concatenate`` of four arrays of ``n`` elements read into a preallocated
  NumPy array (``copy_to_host(out)`` / ``np.concatenate(out=)``), and into a
  new one (``numpy()`` / ``np.concatenate``);
- 100 slice assignments ``y[a:b] = float`` over ``4 n`` elements, then the
  value read into a new NumPy array.

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
    parser.add_argument("--n", type=int, default=10**6)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    n = args.n
    rng = np.random.default_rng(0)
    pieces = [rng.random(n) for _ in range(4)]
    lazy = [lf.asarray(p) for p in pieces]
    out = np.empty(4 * n)
    step = 4 * n // 100

    def assign_lazy():
        y = lf.zeros(4 * n)
        for i in range(100):
            y[i * step:(i + 1) * step] = float(i)
        return y.numpy()

    def assign_numpy():
        y = np.zeros(4 * n)
        for i in range(100):
            y[i * step:(i + 1) * step] = float(i)
        return y

    np.testing.assert_array_equal(lf.concatenate(lazy).numpy(), np.concatenate(pieces))
    np.testing.assert_array_equal(assign_lazy(), assign_numpy())
    cases = {
        "concatenate into out, lazyfuse": lambda: lf.concatenate(lazy).copy_to_host(out),
        "concatenate into out, NumPy": lambda: np.concatenate(pieces, out=out),
        "concatenate, lazyfuse numpy()": lambda: lf.concatenate(lazy).numpy(),
        "concatenate, NumPy": lambda: np.concatenate(pieces),
        "100 slice assignments, lazyfuse": assign_lazy,
        "100 slice assignments, NumPy": assign_numpy,
    }
    report(f"n = {n}, float64", interleaved(cases, args.repeats), 34)


if __name__ == "__main__":
    main()
