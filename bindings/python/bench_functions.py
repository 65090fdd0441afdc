"""NumPy functions from Python against NumPy, in one process.

    python bindings/python/bench_functions.py [--n 2000] [--repeats 12]

Cases (lazyfuse on its default context, the CPU; each result read into a
preallocated NumPy array, NumPy's copied into one):
- ``x.sum(axis=0)`` and ``x.max(axis=0)`` of an ``n`` × ``n`` float32 array
  (a reduction over the leading axis);
- ``einsum("ij,jk->ik")`` (a matrix product) of ``n/4`` × ``n/4`` float32
  matrices, and ``einsum("ij,ij->i")`` (dots) of ``n`` × ``n``;
- ``searchsorted`` of ``n * n / 4`` values in ``n * 50`` sorted ones, and
  ``interp`` at them;
- ``sort`` and stable ``argsort`` of the rows of ``n/2`` × ``n/2`` float64;
- ``histogram`` (100 bins) and ``bincount`` of ``n * n`` values;
- integer index arithmetic, ``(i % 1000) * 3 + i // 7`` of ``n * n`` int64;
- the mean square of ``n * n`` standard normal draws, and the sum of as
  many uniform ones (lazyfuse's are generated inside the reduction; the
  values are not NumPy's, so only their moments are checked).

Prints the minimum and the median over the repeats (the first two are
dropped). NumPy's einsum is given ``optimize=True`` (its BLAS path).
"""

import argparse

import numpy as np

import lazyfuse as lf
from bench_timing import interleaved, report


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=12)
    args = parser.parse_args()
    n = args.n
    rng = np.random.default_rng(0)
    square = rng.random((n, n), dtype=np.float32)
    small = rng.random((n // 4, n // 4), dtype=np.float32)
    sorted_values = np.sort(rng.random(n * 50))
    probes = rng.random(n * n // 4)
    rows = rng.random((n // 2, n // 2))
    data = rng.standard_normal(n * n)
    counts = rng.integers(0, 1000, n * n)
    positions = rng.integers(-10 ** 12, 10 ** 12, n * n)
    x, s, a, v, r, d, c, p = map(lf.asarray, (square, small, sorted_values, probes, rows, data,
                                              counts, positions))
    line = np.empty(n, np.float32)
    product = np.empty_like(small)
    found = np.empty(probes.size, np.int64)
    interpolated = np.empty(probes.size)
    sorted_rows = np.empty_like(rows)
    order = np.empty(rows.shape, np.int64)
    hist = np.empty(100, np.int64)
    bins = np.empty(1000, np.int64)
    arithmetic = np.empty(n * n, np.int64)

    cases = {
        "sum(axis=0), lazyfuse": lambda: x.sum(axis=0).copy_to_host(line),
        "sum(axis=0), NumPy": lambda: np.copyto(line, square.sum(axis=0)),
        "max(axis=0), lazyfuse": lambda: x.max(axis=0).copy_to_host(line),
        "max(axis=0), NumPy": lambda: np.copyto(line, square.max(axis=0)),
        "einsum ij,jk->ik, lazyfuse": lambda: lf.einsum("ij,jk->ik", s, s).copy_to_host(product),
        "einsum ij,jk->ik, NumPy": lambda: np.copyto(
            product, np.einsum("ij,jk->ik", small, small, optimize=True)),
        "einsum ij,ij->i, lazyfuse": lambda: lf.einsum("ij,ij->i", x, x).copy_to_host(line),
        "einsum ij,ij->i, NumPy": lambda: np.copyto(
            line, np.einsum("ij,ij->i", square, square, optimize=True)),
        "searchsorted, lazyfuse": lambda: lf.searchsorted(a, v).copy_to_host(found),
        "searchsorted, NumPy": lambda: np.copyto(found, np.searchsorted(sorted_values, probes)),
        "interp, lazyfuse": lambda: lf.interp(v, a, a * 2).copy_to_host(interpolated),
        "interp, NumPy": lambda: np.copyto(
            interpolated, np.interp(probes, sorted_values, sorted_values * 2)),
        "sort rows, lazyfuse": lambda: lf.sort(r, axis=1).copy_to_host(sorted_rows),
        "sort rows, NumPy": lambda: np.copyto(sorted_rows, np.sort(rows, axis=1)),
        "argsort rows (stable), lazyfuse": lambda: lf.argsort(r, axis=1).copy_to_host(order),
        "argsort rows (stable), NumPy": lambda: np.copyto(
            order, np.argsort(rows, axis=1, kind="stable")),
        "histogram, lazyfuse": lambda: lf.histogram(d, 100)[0].copy_to_host(hist),
        "histogram, NumPy": lambda: np.copyto(hist, np.histogram(data, 100)[0]),
        "bincount, lazyfuse": lambda: lf.bincount(c, minlength=1000).copy_to_host(bins),
        "bincount, NumPy": lambda: np.copyto(bins, np.bincount(counts, minlength=1000)),
        "i % 1000 * 3 + i // 7, lazyfuse": lambda: ((p % 1000) * 3 + p // 7).copy_to_host(arithmetic),
        "i % 1000 * 3 + i // 7, NumPy": lambda: np.copyto(
            arithmetic, (positions % 1000) * 3 + positions // 7),
    }
    # Each lazyfuse case computes what NumPy does.
    names = list(cases)
    for lazy, eager in zip(names[::2], names[1::2]):
        cases[lazy]()
        outputs = (line, product, found, interpolated, sorted_rows, order, hist, bins, arithmetic)
        mine = [o.copy() for o in outputs]
        cases[eager]()
        theirs = outputs
        for m, t in zip(mine, theirs):
            np.testing.assert_allclose(m, t, rtol=1e-4)
    # Random draws: lazyfuse's are not NumPy's values; their moments agree.
    lazy_rng, numpy_rng = lf.random.default_rng(0), np.random.default_rng(0)
    draws = {
        "mean of normal² draws, lazyfuse": lambda: (lazy_rng.standard_normal(n * n) ** 2).mean().item(),
        "mean of normal² draws, NumPy": lambda: (numpy_rng.standard_normal(n * n) ** 2).mean(),
        "sum of uniform draws, lazyfuse": lambda: lazy_rng.random(n * n).sum().item() / (n * n),
        "sum of uniform draws, NumPy": lambda: numpy_rng.random(n * n).sum() / (n * n),
    }
    for name, draw in draws.items():
        want = 1.0 if "normal" in name else 0.5
        assert abs(draw() - want) < 0.05 + 5 / n, name
    report(f"n = {n}", interleaved(cases | draws, args.repeats))


if __name__ == "__main__":
    main()
