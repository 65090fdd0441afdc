"""The cost of one @cuda.jit launch from Python (the launch builds a lazy
graph node; nothing runs): a 1000-element kernel on a lazyfuse array, best
of rounds, in microseconds. ``--against path/to/cuda.py`` times another
version of ``lazyfuse/cuda.py`` (e.g. ``git show REV:bindings/python/python/lazyfuse/cuda.py``)
beside this one, rounds interleaved (bench/RESULTS.md, session 31).

Usage: python bench_launch.py [--against FILE] [--rounds 7] [--calls 1000]
"""

import argparse
import importlib.util
import sys
import time

import numpy as np

import lazyfuse as lf
from lazyfuse import cuda


def increment(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=1000)
    args = parser.parse_args()
    kernels = {"this": cuda.jit(increment)}
    if args.against:
        spec = importlib.util.spec_from_file_location("lazyfuse._cuda_against", args.against)
        other = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = other
        spec.loader.exec_module(other)
        kernels["against"] = other.jit(increment)
    x = lf.asarray(np.zeros(1000, np.float32))
    for kernel in kernels.values():
        kernel[4, 256](x)
    best = dict.fromkeys(kernels, float("inf"))
    for _ in range(args.rounds):
        for name, kernel in kernels.items():
            start = time.perf_counter()
            for _ in range(args.calls):
                kernel[4, 256](x)
            best[name] = min(best[name], (time.perf_counter() - start) / args.calls * 1e6)
    line = ", ".join(f"{name} {us:.2f} µs a launch" for name, us in best.items())
    if args.against:
        line += f"; this / against {best['this'] / best['against']:.2f}"
    print(line)


if __name__ == "__main__":
    main()
