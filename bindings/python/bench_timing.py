"""The timing loop the ``bench_*.py`` scripts share: cases alternate within
each repeat, so all see the same machine; the first two repeats
(compilation, first touches) are dropped from the report."""

import statistics
import time


def interleaved(cases, repeats):
    """Seconds each case (a name → callable dict) took, per repeat."""
    times = {name: [] for name in cases}
    for _ in range(repeats):
        for name, case in cases.items():
            start = time.perf_counter()
            case()
            times[name].append(time.perf_counter() - start)
    return times


def report(header, times, width=34):
    """Prints ``header`` then each case's minimum and median, in ms."""
    print(f"{header}, {len(next(iter(times.values())))} repeats (first 2 dropped)")
    for name, spent in times.items():
        kept = spent[2:] or spent
        print(f"{name:{width}s} min {min(kept) * 1e3:7.2f} ms   "
              f"median {statistics.median(kept) * 1e3:7.2f} ms")
