"""lazyfuse from Python against NumPy, numexpr and lazyfuse's own Rust API.

The expression suite's cases E1–E5 on float32 inputs, every contender
measured in this one process (compare the ratios; absolute times on a
shared machine are noise):

- lazyfuse (Python): builds the expression from Python (operators and
  NumPy's ufuncs on ``lazyfuse.Array``) and demands it, element-wise results
  into a preallocated NumPy array (``copy_to_host(out=...)``), reductions as
  a number (``float``);
- lazyfuse (Rust): the same case built and demanded the same way through
  the Rust API (``_native.bench_rust_case``): the cost of Python is the
  ratio of the two;
- NumPy: the same Python expression on NumPy arrays, as users write it (one
  thread, a temporary per operation);
- numexpr (when installed): ``numexpr.evaluate`` of the expression string,
  element-wise results into ``out=``, on its default thread count.

Then the per-call overhead: E1 on 1,000 elements, the median time of one
call of each contender.

Usage: python bindings/python/bench.py [--sizes 1000000,10000000]
       [--repeats 10] [--backend cpu] [--out FILE.md]
"""

import argparse
import statistics
import sys
import time

import numpy as np

import lazyfuse as lf
from lazyfuse import _native

try:
    import numexpr
except ImportError:  # the numexpr column is then left out
    numexpr = None

CASES = {
    "E1": "a*b + c",
    "E2": "sqrt(b*b - 4*a*c)",
    "E3": "((a + 1.5)*b - c)/(a + 2.0)*0.5 + sin(a)*cos(b) - exp(-c) + tanh(a*b)",
    "E4": "sum((a - b)**2)",
    "E5": "max(abs(a - b))",
}


def build(case, a, b, c):
    """The case on NumPy or lazyfuse arrays (NumPy's ufuncs stay lazy on
    lazyfuse arrays)."""
    if case == "E1":
        return a * b + c
    if case == "E2":
        return np.sqrt(b * b - 4 * a * c)
    if case == "E3":
        return (((a + 1.5) * b - c) / (a + 2.0) * 0.5 + np.sin(a) * np.cos(b)
                - np.exp(-c) + np.tanh(a * b))
    if case == "E4":
        return ((a - b) ** 2).sum()
    return np.abs(a - b).max()


def inputs(n, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 1.5, n).astype(np.float32)
    b = rng.uniform(2.5, 3.5, n).astype(np.float32)  # b*b > 4ac: E2 has no NaN
    c = rng.uniform(0.1, 0.9, n).astype(np.float32)
    return a, b, c


def best_of(repeats, run):
    run()  # warm-up: compiles and caches
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def lazyfuse_run(case, arrays, out):
    result = build(case, *arrays)
    if result.ndim == 0:
        return float(result)
    return result.copy_to_host(out=out)


def numexpr_run(case, a, b, c, out):
    expression = CASES[case]
    if case == "E5":
        # numexpr's reductions are sum and prod only: max on its result.
        return numexpr.evaluate("abs(a - b)", local_dict={"a": a, "b": b}).max()
    if case == "E4":
        return numexpr.evaluate(expression, local_dict={"a": a, "b": b})
    return numexpr.evaluate(expression, local_dict={"a": a, "b": b, "c": c}, out=out)


def measure(n, repeats, cx):
    host = inputs(n)
    arrays = [lf.asarray(x, context=cx) for x in host]
    out = np.empty(n, np.float32)
    rows = []
    for case in CASES:
        row = {"case": case, "n": n}
        row["numpy"] = best_of(repeats, lambda: build(case, *host))
        if numexpr is not None:
            row["numexpr"] = best_of(repeats, lambda: numexpr_run(case, *host, out))
        row["python"] = best_of(repeats, lambda: lazyfuse_run(case, arrays, out))
        row["rust"] = _native.bench_rust_case(case, [a._a for a in arrays], out, repeats)
        # The results agree (float32 sums of 10^7 terms: a loose tolerance).
        want = build(case, *[x.astype(np.float64) for x in host])
        got = lazyfuse_run(case, arrays, out)
        if not np.allclose(got, want, rtol=1e-3, atol=1e-3):
            raise SystemExit(f"{case} at n={n}: lazyfuse's result differs from NumPy's")
        rows.append(row)
    return rows


def per_call(cx, calls=2000):
    host = inputs(1000, seed=1)
    arrays = [lf.asarray(x, context=cx) for x in host]
    out = np.empty(1000, np.float32)
    contenders = {
        "numpy": lambda: build("E1", *host),
        "python": lambda: lazyfuse_run("E1", arrays, out),
    }
    if numexpr is not None:
        contenders["numexpr"] = lambda: numexpr_run("E1", *host, out)
    result = {}
    for name, run in contenders.items():
        for _ in range(50):
            run()
        times = []
        for _ in range(calls):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        result[name] = statistics.median(times)
    return result


def boundary(n, repeats, cx):
    """What crossing the boundary costs at ``n`` float32 elements, as a
    share of NumPy's ``x.copy()`` measured alongside (issue 44's targets:
    ``lf.asarray`` at most 1.2, ``np.asarray`` of a computed array at most
    0.05)."""
    x = np.random.default_rng(3).random(n, dtype=np.float32)
    computed = lf.asarray(x, context=cx) * 2
    np.asarray(computed)
    contenders = {
        "x.copy()": x.copy,
        "lf.asarray(x)": lambda: lf.asarray(x, context=cx),
        "np.asarray(computed)": lambda: np.asarray(computed),
    }
    best = {name: float("inf") for name in contenders}
    for _ in range(max(repeats, 3)):
        for name, run in contenders.items():
            start = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - start)
    return {name: t / best["x.copy()"] for name, t in best.items() if name != "x.copy()"}


def report(rows, overhead, backend):
    ms = lambda s: f"{s * 1e3:.3f}"  # noqa: E731
    lines = [
        f"lazyfuse {backend} backend; NumPy {np.__version__}"
        + (f", numexpr {numexpr.__version__} ({numexpr.get_num_threads()} threads)" if numexpr else ", no numexpr")
        + "; best of the repeats, milliseconds",
        "",
        "| case | n | NumPy | numexpr | lazyfuse (Python) | lazyfuse (Rust) | Python / Rust | NumPy / lazyfuse |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        ne = ms(r["numexpr"]) if "numexpr" in r else "—"
        lines.append(
            f"| {r['case']} | {r['n']:.0e} | {ms(r['numpy'])} | {ne} | {ms(r['python'])} | "
            f"{ms(r['rust'])} | {r['python'] / r['rust']:.2f}× | {r['numpy'] / r['python']:.1f}× |"
        )
    lines += ["", "Per call, E1 on 1,000 elements (median): "
              + ", ".join(f"{name} {t * 1e6:.1f} µs" for name, t in overhead.items())]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000,10000000")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--out", help="also write the report to this file")
    args = parser.parse_args(argv)
    cx = lf.Context(args.backend)
    rows = []
    for n in (int(float(s)) for s in args.sizes.split(",")):
        rows += measure(n, args.repeats, cx)
    text = report(rows, per_call(cx), args.backend)
    crossing = boundary(max(int(float(s)) for s in args.sizes.split(",")), args.repeats, cx)
    text += ("\n\nThe boundary at the largest size, time over NumPy's `x.copy()` (best of the"
             " repeats): " + ", ".join(f"{k} {v:.3g}" for k, v in crossing.items()))
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
