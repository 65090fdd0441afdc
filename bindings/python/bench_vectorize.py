"""The tutorials' ``@vectorize`` on NumPy arguments, as their users call
it, against Numba's ``@vectorize(target="parallel")`` and NumPy's own
expression, and ``lf.asarray(x)`` against ``x.copy()`` — ratios, rounds
interleaved in one process (issue 44's targets: lazyfuse no slower than
Numba's parallel target at every size; ``asarray`` at most 1.2× a copy).

Each lazyfuse call copies its three NumPy arguments in (a value never
changes, so it cannot share memory its owner may write), computes, and
hands the result to NumPy with ``np.asarray``.

Usage: python bench_vectorize.py [--sizes 1000,100000,1000000,10000000]
       [--rounds 11]
"""

import argparse
import statistics
import time

import numpy as np

import lazyfuse as lf

try:
    import numba
except ImportError:  # the Numba column is then left out
    numba = None


@lf.vectorize(["float32(float32, float32, float32)"], target="cpu")
def lf_discriminant(a, b, c):
    return b * b - 4 * a * c


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,100000,1000000,10000000")
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--verbose", action="store_true", help="also print the medians in µs")
    args = parser.parse_args()
    nb_discriminant = None
    if numba is not None:
        @numba.vectorize(["float32(float32, float32, float32)"], target="parallel")
        def nb_discriminant(a, b, c):
            return b * b - 4 * a * c
    print("| elements | lazyfuse / Numba parallel | lazyfuse / NumPy | lf.asarray / x.copy() |")
    print("|---:|---:|---:|---:|")
    for n in (int(s) for s in args.sizes.split(",")):
        rng = np.random.default_rng(0)
        a, b, c, x = (rng.random(n, dtype=np.float32) + 1 for _ in range(4))
        runs = {"lazyfuse": lambda: np.asarray(lf_discriminant(a, b, c)),
                "NumPy": lambda: b * b - 4 * a * c,
                "asarray": lambda: lf.asarray(x), "copy": lambda: x.copy()}
        if nb_discriminant is not None:
            runs["Numba"] = lambda: nb_discriminant(a, b, c)
        for run in runs.values():
            for _ in range(5):
                run()
        times = {name: [] for name in runs}
        for _ in range(args.rounds):
            for name, run in runs.items():
                # One untimed call first, as bench_programs.py does: a call
                # right after another library's pays for that library's
                # threads (Numba's workers spin a while after each parallel
                # loop, on the cores lazyfuse's workers need, and the
                # reverse). On two cores the ratios still move between runs.
                run()
                start = time.perf_counter()
                for _ in range(3):
                    run()
                times[name].append((time.perf_counter() - start) / 3)
        median = {name: statistics.median(t) for name, t in times.items()}
        if args.verbose:
            print({name: round(t * 1e6, 1) for name, t in median.items()})
        numba_ratio = f"{median['lazyfuse'] / median['Numba']:.2f}" if "Numba" in median else "—"
        print(f"| {n:.0e} | {numba_ratio} | {median['lazyfuse'] / median['NumPy']:.2f} "
              f"| {median['asarray'] / median['copy']:.2f} |")


if __name__ == "__main__":
    main()
