"""Complex arrays and the FFT from Python against NumPy (pocketfft) and
JAX (``jax.jit``), in one process: NumPy arrays in, NumPy arrays out.

    python bindings/python/bench_complex.py [--rounds 3] [--repeats 7]

Each round times every implementation (median of ``--repeats`` calls) one
after the other; a cell gives lazyfuse's time over the other's for each
round (below 1: lazyfuse is faster). JAX is skipped when it is missing.
"""

import argparse
import time

import numpy as np

import lazyfuse as lf

try:
    import jax
    import jax.numpy as jnp
except ImportError:  # pragma: no cover - JAX is optional
    jax = jnp = None


def chain(xp, x):
    """A complex element-wise chain: a phase, a product, a square, a modulus."""
    z = xp.exp(1j * x) * (x + 2j)
    return xp.abs(z * z + 1)


def optics(xp, phase):
    """A phase screen's far field: ``|fftshift(fft2(ifftshift(e^(2πi φ))))|²``."""
    field = xp.exp(1j * 2 * np.pi * phase)
    return xp.abs(xp.fft.fftshift(xp.fft.fft2(xp.fft.ifftshift(field)))) ** 2


def cases(rng):
    """(name, NumPy inputs, function of a namespace and the inputs)."""
    c64 = lambda shape: (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    f32 = lambda shape: rng.standard_normal(shape).astype(np.float32)
    return [
        ("complex chain 1e3", (f32(1000),), chain),
        ("complex chain 1e6", (f32(10**6),), chain),
        ("complex chain 1e7", (f32(10**7),), chain),
        ("fft 2^20 complex64", (c64(1 << 20),), lambda xp, z: xp.fft.fft(z)),
        ("rfft 2^20 float32", (f32(1 << 20),), lambda xp, x: xp.fft.rfft(x)),
        ("fft2 1024^2 complex64", (c64((1024, 1024)),), lambda xp, z: xp.fft.fft2(z)),
        ("optics 1024^2", (rng.random((1024, 1024)).astype(np.float32),), optics),
    ]


def median_time(f, repeats):
    f()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def runners(function, inputs):
    """name → a call from NumPy inputs to a NumPy result."""
    lazy = [lf.asarray(x) for x in inputs]
    result = {
        "numpy": lambda: function(np, *inputs),
        "lazyfuse": lambda: np.asarray(function(lf, *lazy)),
    }
    if jax is not None:
        jitted = jax.jit(lambda *a: function(jnp, *a))
        on_jax = [jnp.asarray(x) for x in inputs]
        result["jax"] = lambda: np.asarray(jitted(*on_jax))
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"lazyfuse / other, {args.rounds} rounds (median of {args.repeats} calls each)")
    print("| case | lazyfuse / NumPy | lazyfuse / JAX |")
    print("|---|---|---|")
    for name, inputs, function in cases(rng):
        run = runners(function, inputs)
        want = run["numpy"]()
        np.testing.assert_allclose(run["lazyfuse"](), want, rtol=2e-3, atol=2e-3 * np.abs(want).max())
        ratios = {"numpy": [], "jax": []}
        for _ in range(args.rounds):
            times = {k: median_time(f, args.repeats) for k, f in run.items()}
            for other in ratios:
                if other in times:
                    ratios[other].append(times["lazyfuse"] / times[other])
        cells = [", ".join(f"{r:.2f}" for r in ratios[o]) or "—" for o in ("numpy", "jax")]
        print(f"| {name} | {cells[0]} | {cells[1]} |", flush=True)


if __name__ == "__main__":
    main()
