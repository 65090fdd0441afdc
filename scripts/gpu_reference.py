"""CuPy on the cases `lazyfuse-gpu` times, for ratios measured in the same run.

Each case is timed as lazyfuse's are: wall time of one run that ends with the
device idle (a synchronize), median of REPS after three warm-ups. CuPy runs
each operation as its own kernel (its default); `cupy.fuse` rows show what a
fused CuPy kernel does. Prints one JSON object per case.

Usage: python3 scripts/gpu_reference.py [N] [REPS]
"""

import json
import math
import sys
import time

import cupy as cp
import numpy as np

N = int(float(sys.argv[1])) if len(sys.argv) > 1 else 100_000_000
REPS = int(sys.argv[2]) if len(sys.argv) > 2 else 20


def median_ms(body):
    for _ in range(3):
        body()
        cp.cuda.Device().synchronize()
    samples = []
    for _ in range(REPS):
        start = time.perf_counter()
        body()
        cp.cuda.Device().synchronize()
        samples.append((time.perf_counter() - start) * 1e3)
    samples.sort()
    return samples[len(samples) // 2]


def report(name, nbytes, body):
    ms = median_ms(body)
    print(json.dumps({"case": name, "n": N, "median_ms": round(ms, 4), "gbps": round(nbytes / ms / 1e6, 1)}))


rng = np.random.default_rng(0)
host = [rng.random(N, dtype=np.float32) for _ in range(3)]
a, b, c = (cp.asarray(h) for h in host)
four = 4 * N



@cp.fuse()
def fused_axpy(a, b, c):
    return a * b + c


@cp.fuse()
def fused_chain(a, b, c):
    return cp.sin(a) * cp.cos(b) + cp.sqrt(cp.abs(c))


report("copy (device to device)", 2 * four, lambda: a.copy())
report("axpy a*b+c (resident)", 4 * four, lambda: a * b + c)
report("axpy a*b+c (resident) cupy.fuse", 4 * four, lambda: fused_axpy(a, b, c))
report("chain sin(a)*cos(b)+sqrt(abs(c)) (resident)", 4 * four, lambda: cp.sin(a) * cp.cos(b) + cp.sqrt(cp.abs(c)))
report("chain sin(a)*cos(b)+sqrt(abs(c)) (resident) cupy.fuse", 4 * four, lambda: fused_chain(a, b, c))
report("sum(a*b) (resident)", 2 * four, lambda: float((a * b).sum()))
report("max(abs(a-b)) (resident)", 2 * four, lambda: float(cp.abs(a - b).max()))
out = np.empty(N, dtype=np.float32)
report("download a (read_into)", four, lambda: a.get(out=out))
report("upload a (to_device)", four, lambda: cp.asarray(host[0]))


def host_to_host():
    x, y, z = (cp.asarray(h) for h in host)
    (x * y + z).get(out=out)


report("axpy a*b+c host to host", 4 * four, host_to_host)
assert math.isfinite(float(out[0]))
