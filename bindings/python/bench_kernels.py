"""Kernels with math functions and complex numbers on the CPU: a
Mandelbrot escape count written as Numba's @cuda.jit with a complex local
(``abs(z)`` is ``hypot``) run by lazyfuse's ``cpu`` backend, against the
same loop under Numba's ``@njit(parallel=True)`` and NumPy's masked
iterations, in one process; medians, ratios (lazyfuse / other, lower is
better). The counts must agree with Numba's.

Usage: python bench_kernels.py [--sides 100,400,1000] [--repeats 5]
"""

import argparse
import time

import numpy as np

import lazyfuse  # noqa: F401  (before the kernels: their source is read)
from lazyfuse import cuda

ITERATIONS = 64


@cuda.jit
def lazyfuse_mandelbrot(counts, grid):
    i, j = cuda.grid(2)
    if i < grid.shape[0] and j < grid.shape[1]:
        c = grid[i, j]
        z = 0j
        n = 0
        while abs(z) <= 2 and n < ITERATIONS:
            z = z * z + c
            n += 1
        counts[i, j] = n


def numba_mandelbrot():
    """Numba's version, or None when Numba is not installed."""
    try:
        from numba import njit, prange
    except ImportError:
        return None

    @njit(parallel=True)
    def mandelbrot(counts, grid):
        for i in prange(grid.shape[0]):
            for j in range(grid.shape[1]):
                c = grid[i, j]
                z = 0j
                n = 0
                while abs(z) <= 2 and n < ITERATIONS:
                    z = z * z + c
                    n += 1
                counts[i, j] = n
    return mandelbrot


def numpy_mandelbrot(grid):
    z = np.zeros_like(grid)
    counts = np.zeros(grid.shape, np.int32)
    going = np.ones(grid.shape, bool)
    for _ in range(ITERATIONS):
        going &= np.abs(z) <= 2
        z[going] = z[going] ** 2 + grid[going]
        counts += going
    return counts


def median_seconds(run, repeats):
    run()  # compiled, warmed
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sides", default="100,400,1000")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    numba = numba_mandelbrot()
    print("| grid | lazyfuse / Numba | lazyfuse / NumPy |\n|---|---:|---:|")
    for side in (int(s) for s in args.sides.split(",")):
        re, im = np.meshgrid(np.linspace(-2, 0.5, side), np.linspace(-1.2, 1.2, side))
        grid = re + 1j * im
        ours = np.zeros(grid.shape, np.int32)
        blocks = ((side + 15) // 16, (side + 15) // 16)
        t_ours = median_seconds(lambda: lazyfuse_mandelbrot[blocks, (16, 16)](ours, grid),
                                args.repeats)
        t_numpy = median_seconds(lambda: numpy_mandelbrot(grid), max(args.repeats // 2, 1))
        np.testing.assert_array_equal(ours, numpy_mandelbrot(grid))
        vs_numba = "—"
        if numba is not None:
            theirs = np.zeros_like(ours)
            vs_numba = f"{t_ours / median_seconds(lambda: numba(theirs, grid), args.repeats):.2f}"
            np.testing.assert_array_equal(ours, theirs)
        print(f"| {side}×{side} | {vs_numba} | {t_ours / t_numpy:.2f} |")


if __name__ == "__main__":
    main()
