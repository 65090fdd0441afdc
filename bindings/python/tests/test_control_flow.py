"""`break`, `continue` and `return` inside loops, in kernels and device
functions. The device functions are checked against themselves run as
plain Python, one call per element, so every result is Python's."""

import numpy as np
import pytest

import lazyfuse as lf
from lazyfuse import CompileError, cuda, guvectorize

BACKENDS = ["cpu", "sim"]


@cuda.jit(device=True)
def escape_time(x, y, max_iters):
    """The Mandelbrot tutorial's function: a `return` inside the loop."""
    zr = 0.0
    zi = 0.0
    for i in range(max_iters):
        zr, zi = zr * zr - zi * zi + x, 2 * zr * zi + y
        if zr * zr + zi * zi >= 4:
            return i
    return max_iters


@cuda.jit(device=True)
def first_multiple(n, d):
    """The loop's variable after a `break` keeps the value it had."""
    for k in range(1, n):
        if k % d == 0:
            break
    return k


@cuda.jit(device=True)
def skip_and_stop(n):
    """`continue` of the outer loop, `break` of the inner one only."""
    total = 0
    for a in range(n):
        if a % 3 == 0:
            continue
        for b in range(a):
            if b * a > n:
                break
            total += b
        total += a
    return total


@cuda.jit(device=True)
def collatz_steps(n, limit):
    """`while True` left by `break`, `continue`, and a `return` from it."""
    steps = 0
    while True:
        if n == 1:
            break
        steps += 1
        if steps > limit:
            return -1
        if n % 2 == 0:
            n //= 2
            continue
        n = 3 * n + 1
    return steps


@cuda.jit(device=True)
def integer_root(n):
    """A counting-down range left by `return`, and the statements after it."""
    root = -1
    for k in range(n, -1, -1):
        if k * k <= n:
            root = k
            break
    if root < 0:
        return 0
    while root * root > n:
        root -= 1
    return root


@cuda.jit
def control_flow(x, y, ints, out):
    i = cuda.grid(1)
    if i >= x.size:
        return
    out[i, 0] = escape_time(x[i], y[i], 40)
    out[i, 1] = first_multiple(ints[i] + 2, 3)
    out[i, 2] = skip_and_stop(ints[i])
    out[i, 3] = collatz_steps(ints[i] + 1, 30)
    out[i, 4] = integer_root(ints[i])


@pytest.mark.parametrize("backend", BACKENDS)
def test_break_continue_and_return_in_loops_are_pythons(backend):
    rng = np.random.default_rng(3)
    n = 70  # threads of one warp take different exits
    x, y = rng.uniform(-2, 1, n), rng.uniform(-1.2, 1.2, n)
    ints = rng.integers(0, 40, n)
    out = np.zeros((n, 5), dtype=np.int64)
    with lf.use(backend):
        control_flow[3, 32](x, y, ints, out)
    want = [[escape_time(a, b, 40), first_multiple(k + 2, 3), skip_and_stop(k),
             collatz_steps(k + 1, 30), integer_root(k)] for a, b, k in zip(x, y, ints)]
    np.testing.assert_array_equal(out, want)


@cuda.jit
def mark_until_positive(a):
    """A bare `return` inside a kernel's loop ends the thread's work."""
    for j in range(a.size):
        if a[j] > 0:
            return
        a[j] = 1
    a[0] = 7  # only when no element was positive


@cuda.jit
def search_sorted(a, out):
    """A `while` whose test reads memory behind `and`: it runs again
    before every iteration."""
    i = cuda.grid(1)
    if i < out.size:
        j = 0
        while j < a.size and a[j] < i:
            j += 1
        out[i] = j


@pytest.mark.parametrize("backend", BACKENDS)
def test_kernel_loops_left_by_return_and_tests_that_read_memory(backend):
    with lf.use(backend):
        a = np.array([0.0, -1.0, 3.0, 0.0])
        mark_until_positive[1, 1](a)
        assert a.tolist() == [1.0, 1.0, 3.0, 0.0]
        a = np.zeros(3)
        mark_until_positive[1, 1](a)
        assert a.tolist() == [7.0, 1.0, 1.0]

        out = np.zeros(12, dtype=np.int64)
        search_sorted[1, 16](np.arange(0.0, 20.0, 2.0), out)
        assert out.tolist() == [int(np.searchsorted(np.arange(0, 20, 2), i)) for i in range(12)]


def test_a_break_inside_prange_is_a_compile_error():
    def stops(x, out):
        for i in lf.prange(x.shape[0]):
            if x[i] < 0:
                break
            out[i] = x[i]

    with pytest.raises(CompileError, match="a break or return inside prange"):
        guvectorize(["void(float64[:], float64[:])"], "(n)->(n)")(stops)
