"""Whole programs, written as NumPy users write them, against NumPy,
numexpr, Numba and JAX (``jax.jit``) in one process.

Each program takes NumPy arrays and gives NumPy arrays back, as a user
meets it: lazyfuse's inputs are made once by ``lf.asarray`` and its
results read by ``lf.compute`` (several outputs in one demand); JAX's
inputs are put on its device once and its results read by ``np.asarray``;
Numba's and numexpr's write new NumPy arrays. Every contender's results
are checked against NumPy's before anything is timed. Times are medians
of interleaved rounds, each round a few consecutive calls of one
contender after an untimed one; compare the ratios (this machine is
shared).

With ``--gpu`` (a CUDA GPU and CuPy): lazyfuse on ``cuda`` against CuPy
and ``cupy.fuse`` (element-wise programs), inputs and results in device
memory (lazyfuse's results kept by one ``eval`` of all of them, then one
element of the last read back, which waits for the queued work), CuPy's
rounds ended by a device synchronisation; results are checked against
CuPy's.

Usage: python bindings/python/bench_programs.py [--sizes 100000,1000000,10000000]
       [--repeats 7] [--programs black_scholes,softmax,...] [--backend cpu]
       [--gpu] [--out FILE.md] [--svg FILE.svg]
"""

import argparse
import math
import statistics
import sys
import time

import numpy as np

import lazyfuse as lf

try:
    import numexpr
except ImportError:
    numexpr = None
try:
    import numba
except ImportError:
    numba = None
try:
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = None

R, V = 0.02, 0.30  # Black–Scholes' rate and volatility
A1, A2, A3, A4, A5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
RSQRT2PI = 0.39894228040143267793994605993438


# ---------------------------------------------------------------- programs
# Each is written once over a NumPy-like namespace `xp` (NumPy, lazyfuse's
# arrays through NumPy's functions, or jax.numpy) and returns a tuple.

def black_scholes(xp, S, X, T):
    def cnd(d):
        k = 1.0 / (1.0 + 0.2316419 * xp.abs(d))
        w = 1.0 - RSQRT2PI * xp.exp(-0.5 * d * d) * (
            k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))))
        return xp.where(d < 0, 1.0 - w, w)
    sqrt_t = xp.sqrt(T)
    d1 = (xp.log(S / X) + (R + 0.5 * V * V) * T) / (V * sqrt_t)
    d2 = d1 - V * sqrt_t
    cnd1, cnd2 = cnd(d1), cnd(d2)
    exp_rt = xp.exp(-R * T)
    call = S * cnd1 - X * exp_rt * cnd2
    put = X * exp_rt * (1.0 - cnd2) - S * (1.0 - cnd1)
    return call, put


def softmax(xp, x):
    e = xp.exp(x - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True),)


def standardise(xp, x):
    return ((x - x.mean(axis=0)) / x.std(axis=0),)


def kmeans_assign(xp, p, c):
    return (((p[:, None, :] - c[None]) ** 2).sum(-1).argmin(1),)


def logsumexp(xp, x):
    m = x.max(axis=1)
    return (m + xp.log(xp.exp(x - m[:, None]).sum(axis=1)),)


def layer_norm(xp, x, g, b):
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return ((x - mean) / xp.sqrt(var + 1e-5) * g + b,)


def heat_step(xp, u):
    inner = u[1:-1, 1:-1]
    lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * inner
    return (inner + 0.1 * lap,)


def masked_mean(xp, x):
    keep = x > 0.25
    return (xp.where(keep, x, 0.0).sum() / keep.sum(),)


def pairwise(xp, a, b):
    return (xp.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)),)


# ---------------------------------------------------------------- inputs

def inputs(name, n, rng):
    """The program's NumPy inputs for about `n` elements of work."""
    f = np.float32
    if name == "black_scholes":
        return (rng.uniform(5, 30, n).astype(f), rng.uniform(1, 100, n).astype(f),
                rng.uniform(0.25, 10, n).astype(f))
    if name in ("softmax", "logsumexp"):
        return (rng.standard_normal((max(n // 1024, 1), 1024)).astype(f),)
    if name == "standardise":
        return (rng.standard_normal((max(n // 64, 2), 64)).astype(f),)
    if name == "kmeans_assign":
        return (rng.standard_normal((max(n // 128, 1), 8)).astype(f),
                rng.standard_normal((16, 8)).astype(f))
    if name == "layer_norm":
        rows = max(n // 1024, 1)
        return (rng.standard_normal((rows, 1024)).astype(f),
                rng.standard_normal(1024).astype(f), rng.standard_normal(1024).astype(f))
    if name == "heat_step":
        side = max(int(math.sqrt(n)), 3)
        return (rng.standard_normal((side, side)).astype(f),)
    if name == "masked_mean":
        return (rng.uniform(-1, 1, n).astype(f),)
    if name == "pairwise":
        rows = max(int(math.sqrt(n / 8)), 1)
        return (rng.standard_normal((rows, 8)).astype(f),
                rng.standard_normal((rows, 8)).astype(f))
    if name == "monte_carlo_pi":
        return ()
    raise KeyError(name)


PROGRAMS = {
    "black_scholes": black_scholes, "softmax": softmax, "standardise": standardise,
    "kmeans_assign": kmeans_assign, "logsumexp": logsumexp, "layer_norm": layer_norm,
    "heat_step": heat_step, "masked_mean": masked_mean, "pairwise": pairwise,
    # Not over `xp`: each library draws with its own generator (the runners).
    "monte_carlo_pi": None,
}


# ---------------------------------------------------------------- contenders

def numpy_runner(name, args, n):
    if name == "monte_carlo_pi":
        rng = np.random.default_rng(1)
        return lambda: (4.0 * np.mean(rng.random(n, np.float32) ** 2
                                      + rng.random(n, np.float32) ** 2 < 1.0),)
    program = PROGRAMS[name]
    return lambda: program(np, *args)


def lazyfuse_runner(name, args, n):
    if name == "monte_carlo_pi":
        rng = lf.random.default_rng(1)
        return lambda: lf.compute(4.0 * ((rng.random(n, np.float32) ** 2
                                         + rng.random(n, np.float32) ** 2) < 1.0).mean())
    program = PROGRAMS[name]
    lazy = [lf.asarray(a) for a in args]
    return lambda: lf.compute(*program(np, *lazy))


def jax_runner(name, args, n):
    if jax is None:
        return None
    if name == "monte_carlo_pi":
        @jax.jit
        def pi(key):
            kx, ky = jax.random.split(key)
            x = jax.random.uniform(kx, (n,), jnp.float32)
            y = jax.random.uniform(ky, (n,), jnp.float32)
            return (4.0 * jnp.mean(x * x + y * y < 1.0),)
        key = jax.random.PRNGKey(1)
        return lambda: tuple(np.asarray(r) for r in pi(key))
    program = PROGRAMS[name]
    jitted = jax.jit(lambda *a: program(jnp, *a))
    on_device = [jax.device_put(a) for a in args]
    return lambda: tuple(np.asarray(r) for r in jitted(*on_device))


def numexpr_runner(name, args, n):
    if numexpr is None:
        return None
    if name == "black_scholes":
        S, X, T = args
        local = dict(S=S, X=X, T=T, R=np.float32(R), V=np.float32(V))
        d1 = "((log(S / X) + (R + 0.5 * V * V) * T) / (V * sqrt(T)))"
        d2 = f"({d1} - V * sqrt(T))"

        def cnd_expr(d):
            k = f"(1 / (1 + 0.2316419 * abs({d})))"
            poly = f"({k} * ({A1} + {k} * ({A2} + {k} * ({A3} + {k} * ({A4} + {k} * {A5})))))"
            w = f"(1 - {RSQRT2PI} * exp(-0.5 * {d} * {d}) * {poly})"
            return f"where({d} < 0, 1 - {w}, {w})"
        call = f"S * {cnd_expr(d1)} - X * exp(-R * T) * {cnd_expr(d2)}"
        put = f"X * exp(-R * T) * (1 - {cnd_expr(d2)}) - S * (1 - {cnd_expr(d1)})"
        return lambda: (numexpr.evaluate(call, local_dict=local),
                        numexpr.evaluate(put, local_dict=local))
    if name == "heat_step":
        (u,) = args
        local = dict(c=u[1:-1, 1:-1], n=u[:-2, 1:-1], s=u[2:, 1:-1], w=u[1:-1, :-2],
                     e=u[1:-1, 2:])
        return lambda: (numexpr.evaluate("c + 0.1 * (n + s + w + e - 4 * c)", local_dict=local),)
    if name == "masked_mean":
        (x,) = args
        return lambda: (numexpr.evaluate("sum(where(x > 0.25, x, 0))", local_dict=dict(x=x))
                        / numexpr.evaluate("sum(where(x > 0.25, 1, 0))", local_dict=dict(x=x)),)
    return None


def numba_runner(name, args, n):
    if numba is None:
        return None
    kernel = _numba_kernels().get(name)
    if kernel is None:
        return None
    if name == "monte_carlo_pi":
        return lambda: (kernel(n),)
    return lambda: kernel(*args)


_NUMBA = {}


def _numba_kernels():
    """Numba's versions, written as Numba users write them: explicit
    parallel loops (`prange`) with the math inline."""
    if _NUMBA:
        return _NUMBA
    njit, prange = numba.njit, numba.prange

    @njit(fastmath=False, parallel=True)
    def bs(S, X, T):
        call = np.empty_like(S)
        put = np.empty_like(S)
        for i in prange(S.shape[0]):
            sqrt_t = math.sqrt(T[i])
            d1 = (math.log(S[i] / X[i]) + (R + 0.5 * V * V) * T[i]) / (V * sqrt_t)
            d2 = d1 - V * sqrt_t
            c = [0.0, 0.0]
            for j, d in enumerate((d1, d2)):
                k = 1.0 / (1.0 + 0.2316419 * abs(d))
                w = 1.0 - RSQRT2PI * math.exp(-0.5 * d * d) * (
                    k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))))
                c[j] = 1.0 - w if d < 0 else w
            e = math.exp(-R * T[i])
            call[i] = S[i] * c[0] - X[i] * e * c[1]
            put[i] = X[i] * e * (1.0 - c[1]) - S[i] * (1.0 - c[0])
        return call, put

    @njit(parallel=True)
    def softmax_rows(x):
        out = np.empty_like(x)
        for i in prange(x.shape[0]):
            m = x[i].max()
            e = np.exp(x[i] - m)
            out[i] = e / e.sum()
        return (out,)

    @njit(parallel=True)
    def standardise_cols(x):
        rows, cols = x.shape
        mean = np.zeros(cols, np.float64)
        for i in range(rows):
            for j in range(cols):
                mean[j] += x[i, j]
        mean /= rows
        var = np.zeros(cols, np.float64)
        for i in range(rows):
            for j in range(cols):
                var[j] += (x[i, j] - mean[j]) ** 2
        std = np.sqrt(var / rows)
        out = np.empty_like(x)
        for i in prange(rows):
            for j in range(cols):
                out[i, j] = (x[i, j] - mean[j]) / std[j]
        return (out,)

    @njit(parallel=True)
    def kmeans(p, c):
        out = np.empty(p.shape[0], np.int64)
        for i in prange(p.shape[0]):
            best, arg = np.inf, 0
            for k in range(c.shape[0]):
                d = 0.0
                for j in range(p.shape[1]):
                    d += (p[i, j] - c[k, j]) ** 2
                if d < best:
                    best, arg = d, k
            out[i] = arg
        return (out,)

    @njit(parallel=True)
    def lse(x):
        out = np.empty(x.shape[0], x.dtype)
        for i in prange(x.shape[0]):
            m = x[i].max()
            out[i] = m + np.log(np.exp(x[i] - m).sum())
        return (out,)

    @njit(parallel=True)
    def ln(x, g, b):
        out = np.empty_like(x)
        for i in prange(x.shape[0]):
            mean = x[i].mean()
            var = ((x[i] - mean) ** 2).mean()
            out[i] = (x[i] - mean) / np.sqrt(var + 1e-5) * g + b
        return (out,)

    @njit(parallel=True)
    def heat(u):
        rows, cols = u.shape
        out = np.empty((rows - 2, cols - 2), u.dtype)
        for i in prange(1, rows - 1):
            for j in range(1, cols - 1):
                c = u[i, j]
                out[i - 1, j - 1] = c + 0.1 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1]
                                               + u[i, j + 1] - 4.0 * c)
        return (out,)

    @njit(parallel=True)
    def masked(x):
        total, count = 0.0, 0
        for i in prange(x.shape[0]):
            if x[i] > 0.25:
                total += x[i]
                count += 1
        return (total / count,)

    @njit(parallel=True)
    def pair(a, b):
        out = np.empty((a.shape[0], b.shape[0]), a.dtype)
        for i in prange(a.shape[0]):
            for k in range(b.shape[0]):
                d = 0.0
                for j in range(a.shape[1]):
                    d += (a[i, j] - b[k, j]) ** 2
                out[i, k] = math.sqrt(d)
        return (out,)

    @njit(parallel=True)
    def pi(n):
        inside = 0
        for _ in prange(n):
            x, y = np.random.random(), np.random.random()
            inside += x * x + y * y < 1.0
        return 4.0 * inside / n

    _NUMBA.update(black_scholes=bs, softmax=softmax_rows, standardise=standardise_cols,
                  kmeans_assign=kmeans, logsumexp=lse, layer_norm=ln, heat_step=heat,
                  masked_mean=masked, pairwise=pair, monte_carlo_pi=pi)
    return _NUMBA


def gpu_contenders():
    """lazyfuse on cuda, CuPy and cupy.fuse, all in device memory."""
    import cupy

    def sync():
        cupy.cuda.Device().synchronize()

    def wait_for(array):
        """`eval` returns once the work is queued on the demand's stream:
        reading one element of its last result waits for all of it (the
        stream runs the copy after the kernels), as `lazyfuse-gpu` does."""
        np.asarray(array.reshape(-1)[:1])

    def lazyfuse_gpu(name, args, n):
        if name == "monte_carlo_pi":
            rng = lf.random.default_rng(1)

            def pi():
                x, y = rng.random(n, np.float32), rng.random(n, np.float32)
                out = 4.0 * ((x * x + y * y) < 1.0).mean()
                lf._native.eval_all([out._a])
                wait_for(out)
                return (out,)
            return pi
        program = PROGRAMS[name]
        on_device = [lf.cuda.to_device(a) for a in args]

        def run():
            outs = program(np, *on_device)
            lf._native.eval_all([o._a for o in outs])
            wait_for(outs[-1])
            return outs
        return run

    def cupy_plain(name, args, n):
        if name == "monte_carlo_pi":
            def pi():
                x = cupy.random.random(n, dtype=np.float32)
                y = cupy.random.random(n, dtype=np.float32)
                out = 4.0 * (x * x + y * y < 1.0).mean()
                sync()
                return (out,)
            return pi
        program = PROGRAMS[name]
        on_device = [cupy.asarray(a) for a in args]

        def run():
            outs = program(cupy, *on_device)
            sync()
            return outs
        return run

    def cupy_fused(name, args, n):
        if name != "black_scholes":
            return None
        def black_scholes_fused(S, X, T):  # cupy.fuse names its kernel after the function
            return black_scholes(cupy, S, X, T)
        fused = cupy.fuse(black_scholes_fused)
        on_device = [cupy.asarray(a) for a in args]

        def run():
            outs = fused(*on_device)
            sync()
            return outs
        return run

    return {"lazyfuse": lazyfuse_gpu, "CuPy": cupy_plain, "cupy.fuse": cupy_fused}


def to_numpy(values):
    """Results as NumPy arrays, from whichever library made them."""
    out = []
    for v in values:
        get = getattr(v, "get", None)
        out.append(get() if callable(get) and not isinstance(v, np.ndarray) else np.asarray(v))
    return tuple(out)


CONTENDERS = {
    "lazyfuse": lazyfuse_runner, "NumPy": numpy_runner, "numexpr": numexpr_runner,
    "Numba": numba_runner, "JAX": jax_runner,
}


# ---------------------------------------------------------------- measuring

def check(name, want, got, who, n):
    """Every result close to the reference's (k-means: the same assignment
    for 99.9 % of the points, as float rounding may flip near ties; Monte
    Carlo: within eight standard deviations of pi)."""
    if name == "monte_carlo_pi":
        if abs(float(np.asarray(got[0])) - math.pi) > 8 * 1.7 / math.sqrt(n):
            raise AssertionError(f"{who} {name}: {got[0]} is not close to pi")
        return
    for w, g in zip(want, got):
        g = np.asarray(g)
        if name == "kmeans_assign":
            agree = np.mean(w == g)
            if agree < 0.999:
                raise AssertionError(f"{who} {name}: {agree:.4f} of the assignments agree")
            continue
        if not np.allclose(g, w, rtol=2e-3, atol=2e-3, equal_nan=True):
            bad = np.max(np.abs(g.astype(np.float64) - w))
            raise AssertionError(f"{who} {name}: differs from NumPy by up to {bad}")


def measure(runners, repeats, calls=3):
    """Median seconds per call of each runner, rounds interleaved.

    Each round times `calls` consecutive calls of a runner, after one
    untimed call: as a program runs in a user's loop. A single call right
    after another library's would pay for that library's idle threads
    (Numba's OpenMP workers spin for a while after each parallel loop, on
    the cores the next call needs), which no user of one library meets."""
    times = {who: [] for who in runners}
    for run in runners.values():
        # Warm: JAX and Numba compile at the first call; lazyfuse compiles
        # a kernel once it has run 2^17 elements, in the background below
        # 2^20 a launch. Steady state for all: ten calls and a tenth of a
        # second each.
        start, calls_made = time.perf_counter(), 0
        while calls_made < 10 or time.perf_counter() - start < 0.1:
            run()
            calls_made += 1
    for _ in range(repeats):
        for who, run in runners.items():
            run()
            start = time.perf_counter()
            for _ in range(calls):
                run()
            times[who].append((time.perf_counter() - start) / calls)
    return {who: statistics.median(t) for who, t in times.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000,10000000")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--programs", default=",".join(PROGRAMS))
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--gpu", action="store_true")
    parser.add_argument("--out")
    parser.add_argument("--svg", help="also draw the table (bench_plot.py)")
    options = parser.parse_args(argv)
    sizes = [int(float(s)) for s in options.sizes.split(",")]
    names = options.programs.split(",")
    contenders = gpu_contenders() if options.gpu else CONTENDERS
    backend = "cuda" if options.gpu else options.backend
    records = []
    lines = ["| program | elements | " + " | ".join(contenders) + " | lazyfuse / best other |",
             "|---|---:|" + "---:|" * (len(contenders) + 1)]
    with lf.Context(backend):
        for name in names:
            for n in sizes:
                args = inputs(name, n, np.random.default_rng(0))
                if options.gpu:
                    want = to_numpy(contenders["CuPy"](name, args, n)())
                else:
                    want = numpy_runner(name, args, n)()
                runners = {}
                for who, make in contenders.items():
                    try:
                        run = make(name, args, n)
                        if run is not None:
                            check(name, want, to_numpy(run()), who, n)
                            runners[who] = run
                    except Exception as error:  # a contender that cannot run it: its cell says —
                        if who == "lazyfuse":
                            raise
                        print(f"{who} {name} {n}: {type(error).__name__}: {error}", file=sys.stderr)
                median = measure(runners, options.repeats)
                base = median["lazyfuse"]
                others = {w: t for w, t in median.items() if w != "lazyfuse"}
                best = min(others, key=others.get)
                records.append((name, n, {w: t / base for w, t in others.items()}))
                cells = [f"{median[w] / base:.2f}" if w in median else "—" for w in contenders]
                line = (f"| {name} | {n:.0e} | " + " | ".join(cells)
                        + f" | {base / others[best]:.2f} ({best}) |")
                lines.append(line)
                print(line, flush=True)
    text = ("Times relative to lazyfuse (1.00; above 1 is slower than lazyfuse); "
            f"backend {backend}, medians of {options.repeats} interleaved rounds of 3 calls.\n\n"
            + "\n".join(lines) + "\n")
    if options.out:
        with open(options.out, "w") as f:
            f.write(text)
    if options.svg:
        import bench_plot
        others = [w for w in contenders if w != "lazyfuse"]
        bench_plot.write_svg(records, others, options.svg,
                             f"Whole programs, backend {backend}: time over lazyfuse's")
    print()
    print(text)


if __name__ == "__main__":
    sys.exit(main())
