"""Numba's ``cuda.libdevice`` in ``@cuda.jit`` kernels and its function
table ``cuda.libdevicefuncs``: libdevice's functions computed by
lazyfuse's own math, with libdevice's types, checked against NumPy and
``math`` (issue 47)."""

import math

import numpy as np
import pytest

from lazyfuse import CompileError, cuda
from lazyfuse.cuda import libdevice
from lazyfuse.cuda.libdevicefuncs import create_signature, functions


def _run(name, *values):
    ret, args = functions["__nv_" + name]
    sig = create_signature(ret, args)
    params = ", ".join(f"a{i}" for i in range(len(values)))
    scope = {"libdevice": libdevice}
    exec(f"def k(r, {params}):\n    r[0] = libdevice.{name}({params})\n", scope)
    out = np.zeros(1, sig.return_type.name)
    typed = [np.dtype(t.name).type(v) for t, v in zip(sig.args, values)]
    cuda.jit(scope["k"])[1, 1](out, *typed)
    return out[0]


CASES = [
    ("sinf", (0.5,), math.sin(0.5)), ("atan2", (1.0, 0.0), math.atan2(1.0, 0.0)),
    ("round", (2.5,), 3.0), ("round", (-2.5,), -3.0), ("roundf", (-1.4,), -1.0),
    ("nearbyint", (2.5,), 2.0), ("fdim", (3.0, 1.0), 2.0), ("fdim", (1.0, 3.0), 0.0),
    ("signbitd", (-0.0,), 1), ("fmax", (math.nan, 2.0), 2.0), ("exp10", (2.0,), 100.0),
    ("rsqrtf", (4.0,), 0.5), ("tgamma", (5.0,), 24.0), ("saturatef", (1.5,), 1.0),
    ("saturatef", (math.nan,), 0.0), ("remainder", (5.0, 2.0), 1.0), ("ldexp", (1.5, 3), 12.0),
    ("powi", (2.0, 10), 1024.0), ("isnand", (math.nan,), 1), ("finitef", (math.inf,), 0),
    ("double2int_rn", (2.5,), 2), ("double2int_rd", (-2.5,), -3), ("float2ll_rz", (-2.7,), -2),
    ("hadd", (2**31 - 1, 2**31 - 1), 2**31 - 1), ("rhadd", (1, 2), 2), ("uhadd", (-1, -1), -1),
    ("mulhi", (2**30, 8), 2), ("umulhi", (-1, 2), 1), ("umin", (-1, 5), 5), ("umax", (-1, 5), -1),
    ("brev", (1,), -2**31), ("clz", (1,), 31), ("clzll", (1,), 63), ("ffs", (8,), 4),
    ("popcll", (-1,), 64), ("sad", (3, 10, 1), 8), ("usad", (3, 10, 1), 8), ("llabs", (-4,), 4),
]


@pytest.mark.parametrize("name, values, want", CASES)
def test_function_values(backend, name, values, want):
    got = _run(name, *values)
    assert got == pytest.approx(want, rel=1e-6, nan_ok=True)


def test_results_through_pointers(backend):
    @cuda.jit
    def kernel(s, c, frac, exp, x):
        i = cuda.grid(1)
        if i < len(x):
            s[i], c[i] = libdevice.sincos(x[i])
            frac[i], exp[i] = libdevice.frexp(x[i])

    x = np.linspace(1.0, 10.0, 50)
    s, c, frac = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    exp = np.zeros(50, np.int32)
    kernel[2, 32](s, c, frac, exp, x)
    np.testing.assert_allclose(s, np.sin(x))
    np.testing.assert_allclose(c, np.cos(x))
    want_frac, want_exp = np.frexp(x)
    np.testing.assert_array_equal(frac, want_frac)
    np.testing.assert_array_equal(exp, want_exp)


def test_table_and_signatures():
    sig = create_signature(*functions["__nv_sincosf"])
    assert len(sig.return_type) == 2 and sig == "Tuple(float32, float32)(float32)"
    assert create_signature(*functions["__nv_frexp"]) == "Tuple(float64, int32)(float64)"
    assert all(hasattr(libdevice, name[5:]) for name in functions)
    with pytest.raises(RuntimeError, match="inside a @cuda.jit kernel"):
        libdevice.sinf(1.0)


def test_a_call_with_the_wrong_arguments_is_refused():
    @cuda.jit
    def kernel(r):
        r[0] = libdevice.sin(1.0, 2.0)

    with pytest.raises(CompileError, match="libdevice.sin with other than 1"):
        kernel[1, 1](np.zeros(1))
