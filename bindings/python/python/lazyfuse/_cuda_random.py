"""Numba's ``numba.cuda.random``: the xoroshiro128+ generator, one state
per thread, with Numba's streams bit for bit.

``create_xoroshiro128p_states(n, seed)`` makes the states on the host, as
Numba does, and returns them as a device array of ``n`` rows of two
uint64 words (``s0``, ``s1``; Numba uses a record dtype of those fields,
which lazyfuse arrays do not hold). State ``i`` is state 0 advanced by
``i`` jumps of 2**64 steps: the jump is linear over GF(2), so its 128×128
bit matrix and the matrix's powers (as tables of byte images) give every
state in ``log2(n)`` vectorised steps instead of ``n`` sequential jumps.

The functions kernels call (``xoroshiro128p_uniform_float32`` …) are
device functions written in the kernel dialect, inlined where called;
called from Python on a NumPy array of states they run as plain Python.
"""

import math

import numpy as np

from ._jit import DeviceFunction
from .errors import ArgumentError

_MASK = (1 << 64) - 1
_JUMP = (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922)


# --- device functions (the kernel dialect) -----------------------------------
# Shift counts are uint32, as in Numba's source: a uint64 with an int64
# promotes to float64 in Numba's typing (and in kernels here).
def _next(states, index):
    s0 = states[index, 0]
    s1 = states[index, 1]
    result = s0 + s1
    s1 = s1 ^ s0
    states[index, 0] = ((s0 << np.uint32(55)) | (s0 >> np.uint32(9))) ^ s1 ^ (s1 << np.uint32(14))
    states[index, 1] = (s1 << np.uint32(36)) | (s1 >> np.uint32(28))
    return result


def _to_unit_float64(x):
    return float(x >> np.uint32(11)) * (1.0 / 9007199254740992.0)


_unit_float64 = DeviceFunction(_to_unit_float64)


def _uniform_float32(states, index):
    return np.float32(_unit_float64(xoroshiro128p_next(states, index)))


def _uniform_float64(states, index):
    return _unit_float64(xoroshiro128p_next(states, index))


def _normal_float32(states, index):
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return math.sqrt(np.float32(-2.0) * math.log(u1)) * math.cos(np.float32(2 * math.pi) * u2)


def _normal_float64(states, index):
    # Numba's draws float32 uniforms here too: the same stream.
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return math.sqrt(-2.0 * math.log(float(u1))) * math.cos(2 * math.pi * float(u2))


xoroshiro128p_next = DeviceFunction(_next)
xoroshiro128p_uniform_float32 = DeviceFunction(_uniform_float32)
xoroshiro128p_uniform_float64 = DeviceFunction(_uniform_float64)
xoroshiro128p_normal_float32 = DeviceFunction(_normal_float32)
xoroshiro128p_normal_float64 = DeviceFunction(_normal_float64)


# --- the states, made on the host --------------------------------------------
def _seeded(seed):
    """Numba's first state: splitmix64 of the seed, in both words."""
    z = (seed + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    z ^= z >> 31
    return z | (z << 64)


def _step(state):
    """One xoroshiro128+ step of a state held as one 128-bit int (``s0``
    in the low word)."""
    s0, s1 = state & _MASK, state >> 64
    s1 ^= s0
    r0 = (((s0 << 55) | (s0 >> 9)) & _MASK) ^ s1 ^ ((s1 << 14) & _MASK)
    r1 = ((s1 << 36) | (s1 >> 28)) & _MASK
    return r0 | (r1 << 64)


def _jump(state):
    """Numba's jump: 2**64 steps ahead."""
    out = 0
    for word in _JUMP:
        for b in range(64):
            if word >> b & 1:
                out ^= state
            state = _step(state)
    return out


def _byte_tables(columns):
    """A bit matrix as 16 tables of 256 images: ``tables[p, v]`` is the
    image of the state whose byte ``p`` is ``v`` (the others zero), as two
    uint64 words; a state's image is the XOR of its 16 bytes' images."""
    cols = np.array([[c & _MASK, c >> 64] for c in columns], np.uint64).reshape(16, 8, 2)
    tables = np.zeros((16, 256, 2), np.uint64)
    for b in range(8):
        step = 1 << b
        tables[:, step:2 * step] = tables[:, :step] ^ cols[:, b][:, None, :]
    return tables


def _apply_to_rows(tables, rows):
    """The matrix (``_byte_tables``) times each row of an ``(m, 2)`` uint64
    array of states."""
    out = np.zeros_like(rows)
    for p in range(16):
        word, shift = divmod(p, 8)
        byte = (rows[:, word] >> np.uint64(8 * shift)) & np.uint64(255)
        out ^= tables[p][byte.astype(np.intp)]
    return out


#: The jump's powers J**(2**k), as byte tables, made as they are needed.
_JUMP_POWERS = []


def _jump_power(k):
    """J**(2**k) as byte tables: J's from its columns, then by squaring
    (the matrix applied to its own columns)."""
    while len(_JUMP_POWERS) <= k:
        if not _JUMP_POWERS:
            _JUMP_POWERS.append(_byte_tables([_jump(1 << b) for b in range(128)]))
            continue
        last = _JUMP_POWERS[-1]
        # J**(2m) = J**m · J**m: the image of each basis state, twice.
        basis = np.zeros((128, 2), np.uint64)
        basis[np.arange(64), 0] = np.uint64(1) << np.arange(64, dtype=np.uint64)
        basis[np.arange(64, 128), 1] = np.uint64(1) << np.arange(64, dtype=np.uint64)
        images = _apply_to_rows(last, _apply_to_rows(last, basis))
        columns = [int(lo) | (int(hi) << 64) for lo, hi in images]
        _JUMP_POWERS.append(_byte_tables(columns))
    return _JUMP_POWERS[k]


def init_xoroshiro128p_states_host(n, seed, subsequence_start=0):
    """Numba's states as an ``(n, 2)`` uint64 NumPy array."""
    if n < 0:
        raise ArgumentError(f"create_xoroshiro128p_states: n={n} (expected a count >= 0)")
    states = np.zeros((n, 2), np.uint64)
    if n == 0:
        return states
    first = _seeded(int(seed) & _MASK)
    states[0] = (first & _MASK, first >> 64)
    start, k = int(subsequence_start), 0
    while start:  # J**subsequence_start, by its binary digits
        if start & 1:
            states[:1] = _apply_to_rows(_jump_power(k), states[:1])
        start >>= 1
        k += 1
    done, k = 1, 0
    while done < n:  # states[done:2*done] = J**done · states[:done]
        take = min(done, n - done)
        states[done:done + take] = _apply_to_rows(_jump_power(k), states[:take])
        done += take
        k += 1
    return states
