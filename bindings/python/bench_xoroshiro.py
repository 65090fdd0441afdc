"""Numba's xoroshiro128+ states made by lazyfuse.cuda.random against
Numba's own host initialisation, in one process (bench/RESULTS.md,
session 31). Prints, per count, both times (best of --repeats calls after
one warm-up each) and whether the states are the same bits.

Usage: python bench_xoroshiro.py [--sizes 1000,100000,1000000] [--repeats 3]
"""

import argparse
import time

import numpy as np

from lazyfuse._cuda_random import init_xoroshiro128p_states_host


def best(function, repeats):
    function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,100000,1000000")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    try:
        from numba.cuda.random import init_xoroshiro128p_states_cpu, xoroshiro128p_dtype
    except Exception as error:  # Numba absent, or without its CUDA target
        print(f"Numba's numba.cuda.random is not usable here ({type(error).__name__}): lazyfuse only")
        init_xoroshiro128p_states_cpu = None
    for n in (int(s) for s in args.sizes.split(",")):
        ours = init_xoroshiro128p_states_host(n, 1)
        took_ours = best(lambda: init_xoroshiro128p_states_host(n, 1), args.repeats)
        line = f"{n:>9} states: lazyfuse {took_ours * 1e3:8.2f} ms"
        if init_xoroshiro128p_states_cpu is not None:
            theirs = np.empty(n, dtype=xoroshiro128p_dtype)
            took = best(lambda: init_xoroshiro128p_states_cpu(theirs, 1, 0), args.repeats)
            same = np.array_equal(ours[:, 0], theirs["s0"]) and np.array_equal(ours[:, 1], theirs["s1"])
            line += (f", Numba {took * 1e3:8.2f} ms, lazyfuse / Numba {took_ours / took:.2f}, "
                     f"same states: {same}")
        print(line)


if __name__ == "__main__":
    main()
