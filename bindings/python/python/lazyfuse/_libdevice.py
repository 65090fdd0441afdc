"""Numba's ``cuda.libdevice`` (``libdevice.sinf(x)``, ``libdevice.sincos(x)``…)
and its function table ``cuda.libdevicefuncs`` (``functions``,
``create_signature``), over lazyfuse's own math.

NVIDIA's libdevice is a bitcode library of the CUDA math functions, named
``__nv_<name>``; Numba's ``libdevice.<name>`` calls one. lazyfuse links no
libdevice: each function it has here is computed by the kernel builder's
operation of the same meaning (``__nv_sinf`` is ``sin`` of a float32,
``__nv_frexp`` the kernel dialect's ``math.frexp``…), with libdevice's
argument and result types (arguments converted to them, as Numba's
signatures convert). The table lists these functions only, in Numba's
form: ``functions[name] = (return type, [arg(name, type, is_ptr)])``, where
pointer arguments are extra results (``__nv_sincos``'s two). Left out, as
they would not compute what libdevice does: directed rounding (``_rd``,
``_ru``, ``_rz`` of arithmetic), bit reinterpretations, Bessel functions,
inverse error functions, ``sinpi``-style exact reductions, 24-bit and
128-bit products. ``_calls`` translates a call
(``libdevice_call``) through the function's ``_lf_translate``.
"""

import types
from collections import namedtuple

from ._numba import Signature, Tuple, float32, float64, int32, int64, void

#: An argument of a libdevice function (Numba's ``libdevicefuncs.arg``).
arg = namedtuple("arg", ("name", "ty", "is_ptr"))

_F = {"f": float32, "": float64}
_DTYPES = {float32: "float32", float64: "float64", int32: "int32", int64: "int64"}

#: Float functions of one argument: libdevice's name (``__nv_<name>`` of
#: float64, ``__nv_<name>f`` of float32) and the builder's operation.
_UNARY = {
    "acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh", "atan": "arctan",
    "atanh": "arctanh", "cbrt": "cbrt", "ceil": "ceil", "cos": "cos", "cosh": "cosh", "erf": "erf",
    "erfc": "erfc", "exp": "exp", "exp2": "exp2", "expm1": "expm1", "fabs": "abs",
    "floor": "floor", "lgamma": "lgamma", "log": "log", "log10": "log10", "log1p": "log1p",
    "log2": "log2", "nearbyint": "rint", "rint": "rint", "sin": "sin", "sinh": "sinh",
    "sqrt": "sqrt", "tan": "tan", "tanh": "tanh", "tgamma": "gamma", "trunc": "trunc",
}
#: Float functions of two arguments.
_BINARY = {
    "atan2": "arctan2", "copysign": "copysign", "fmod": "fmod", "hypot": "hypot",
    "nextafter": "nextafter", "pow": "power",
}
#: libdevice's fast float32 forms (``__nv_fast_sinf``): the same values here.
_FAST = {"sinf": "sin", "cosf": "cos", "tanf": "tan", "expf": "exp", "logf": "log",
         "log2f": "log2", "log10f": "log10"}


def _call(op):
    return lambda t, e, v: ("call", op, v)


def _round(t, e, v):
    """C's ``round``: half away from zero (``x - trunc(x)`` is exact)."""
    x = v[0]
    whole = ("call", "trunc", [x])
    away = ("bin", "greater_equal", ("call", "abs", [("bin", "subtract", x, whole)]), ("const", 0.5))
    step = ("select", ("bin", "less", x, ("const", 0.0)), ("const", -1.0), ("const", 1.0))
    return ("select", away, ("bin", "add", whole, step), whole)


def _fdim(t, e, v):
    """``x - y`` where ``x > y``, else 0 (NaN where either is)."""
    x, y = v
    return ("select", ("bin", "greater", x, y), ("bin", "subtract", x, y),
            ("select", ("bin", "less_equal", x, y), ("const", 0.0), ("bin", "add", x, y)))


def _fmax_fmin(order):
    def build(t, e, v):
        a, b = v  # the other where one is a NaN (b != b)
        keep_a = ("bin", "logical_or", ("bin", "not_equal", b, b), ("bin", order, a, b))
        return ("select", keep_a, a, b)
    return build


def _library(name):
    """A ``_kernel_math`` function (CPython's algorithm), inlined."""
    return lambda t, e, v: t.library_call(name, e)


def _unsigned(op, dtype):
    """An operation on the arguments read as unsigned ``dtype``."""
    return lambda t, e, v: ("bin", op, *[("cast", dtype, a) for a in v])


def _halving(rounding, dtype):
    """``(x + y + rounding) >> 1`` without overflow (computed in 64 bits)."""
    return lambda t, e, v: ("bin", "right_shift", ("bin", "add", ("bin", "add", *[
        ("cast", "int64", ("cast", dtype, a)) for a in v]), ("const", rounding)), ("const", 1))


def _high(dtype, wide):
    """The high 32 bits of a 32-bit product (``mulhi``, ``umulhi``)."""
    return lambda t, e, v: ("bin", "right_shift", ("bin", "multiply", *[
        ("cast", wide, ("cast", dtype, a)) for a in v]), ("cast", wide, ("const", 32)))


def _sad(dtype):
    """``|x - y| + z`` (``__sad``, ``__usad``)."""
    def build(t, e, v):
        x, y, z = [("cast", "int64", ("cast", dtype, a)) for a in v]
        return ("bin", "add", ("call", "abs", [("bin", "subtract", x, y)]), z)
    return build


def _table():
    """``{libdevice name: (return type, args, translation)}``; a translation
    takes the translator, the call and the converted argument values."""
    table = {}

    def add(name, ret, argtypes, build, ptrs=()):
        args = [arg(n, ty, False) for n, ty in zip("xyz", argtypes)]
        args += [arg(f"r{i}", ty, True) for i, ty in enumerate(ptrs)]
        table["__nv_" + name] = (ret, args, build)

    for suffix, ty in _F.items():
        for name, op in _UNARY.items():
            add(name + suffix, ty, [ty], _call(op))
        for name, op in _BINARY.items():
            add(name + suffix, ty, [ty, ty], _call(op))
        add("exp10" + suffix, ty, [ty], lambda t, e, v: ("call", "power", [("const", 10.0), v[0]]))
        add("rsqrt" + suffix, ty, [ty], lambda t, e, v: ("call", "reciprocal", [("call", "sqrt", v)]))
        add("rcbrt" + suffix, ty, [ty], lambda t, e, v: ("call", "reciprocal", [("call", "cbrt", v)]))
        add("round" + suffix, ty, [ty], _round)
        add("fdim" + suffix, ty, [ty, ty], _fdim)
        add("fmax" + suffix, ty, [ty, ty], _fmax_fmin("greater_equal"))
        add("fmin" + suffix, ty, [ty, ty], _fmax_fmin("less_equal"))
        add("remainder" + suffix, ty, [ty, ty], _library("remainder"))
        add("ldexp" + suffix, ty, [ty, int32], _library("ldexp"))
        add("scalbn" + suffix, ty, [ty, int32], _library("ldexp"))
        add("pow" + ("if" if suffix else "i"), ty, [ty, int32], lambda t, e, v: ("bin", "power", *v))
        add("fma" + suffix, ty, [ty, ty, ty], lambda t, e, v: ("fma", *v))
        add("frexp" + suffix, ty, [ty], _library("frexp"), ptrs=[int32])
        add("modf" + suffix, ty, [ty], _library("modf"), ptrs=[ty])
        add("sincos" + suffix, void, [ty],
            lambda t, e, v: ("let", [], ("tuple", [("call", "sin", v), ("call", "cos", v)])),
            ptrs=[ty, ty])
        for test in ("isnan", "isinf"):
            add(test + ("f" if suffix else "d"), int32, [ty], _call(test))
        add("signbit" + ("f" if suffix else "d"), int32, [ty],
            lambda t, e, v: ("bin", "less", ("call", "copysign", [("bin", "add", ("bin", "multiply", (
                "call", "abs", v), ("const", 0.0)), ("const", 1.0)), v[0]]), ("const", 0.0)))
    add("finitef", int32, [float32], _call("isfinite"))
    add("isfinited", int32, [float64], _call("isfinite"))
    for name, op in _FAST.items():
        add("fast_" + name, float32, [float32], _call(op))
    add("fast_exp10f", float32, [float32], lambda t, e, v: ("call", "power", [("const", 10.0), v[0]]))
    add("fast_powf", float32, [float32, float32], _call("power"))
    add("fast_fdividef", float32, [float32, float32], lambda t, e, v: ("bin", "divide", *v))
    add("fast_sincosf", void, [float32],
        lambda t, e, v: ("let", [], ("tuple", [("call", "sin", v), ("call", "cos", v)])),
        ptrs=[float32, float32])
    # Arithmetic rounded to nearest (the builder's own rounding).
    for prefix, ty in (("d", float64), ("f", float32)):
        for name, op in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                         ("div", "divide")):
            if not (prefix == "d" and name == "sub"):  # libdevice has no __nv_dsub_rn
                add(f"{prefix}{name}_rn", ty, [ty, ty], lambda t, e, v, op=op: ("bin", op, *v))
        add(f"{prefix}sqrt_rn", ty, [ty], _call("sqrt"))
        add(f"{prefix}rcp_rn", ty, [ty], _call("reciprocal"))
    add("fma_rn", float64, [float64] * 3, lambda t, e, v: ("fma", *v))
    add("fmaf_rn", float32, [float32] * 3, lambda t, e, v: ("fma", *v))
    add("frsqrt_rn", float32, [float32], lambda t, e, v: ("call", "reciprocal", [("call", "sqrt", v)]))
    add("saturatef", float32, [float32], lambda t, e, v: ("select", ("bin", "greater_equal", v[0], (
        "const", 1.0)), ("const", 1.0), ("select", ("bin", "greater", v[0], ("const", 0.0)), v[0],
                                         ("const", 0.0))))
    # Conversions: rounded to nearest (even), down, up, toward zero.
    rounding = {"rn": "rint", "rd": "floor", "ru": "ceil", "rz": "trunc"}
    for source, sty in (("double", float64), ("float", float32)):
        for target, tty in (("int", int32), ("ll", int64)):
            for mode, op in rounding.items():
                add(f"{source}2{target}_{mode}", tty, [sty],
                    lambda t, e, v, op=op: ("call", op, v))
    add("double2float_rn", float32, [float64], lambda t, e, v: v[0])
    add("int2double_rn", float64, [int32], lambda t, e, v: v[0])
    add("int2float_rn", float32, [int32], lambda t, e, v: v[0])
    add("ll2double_rn", float64, [int64], lambda t, e, v: v[0])
    add("ll2float_rn", float32, [int64], lambda t, e, v: v[0])
    # Integer functions.
    add("abs", int32, [int32], lambda t, e, v: ("unary", "abs", v[0]))
    add("llabs", int64, [int64], lambda t, e, v: ("unary", "abs", v[0]))
    for name, ty, op, dtype in (("min", int32, "minimum", None), ("max", int32, "maximum", None),
                                ("llmin", int64, "minimum", None), ("llmax", int64, "maximum", None),
                                ("umin", int32, "minimum", "uint32"), ("umax", int32, "maximum", "uint32"),
                                ("ullmin", int64, "minimum", "uint64"),
                                ("ullmax", int64, "maximum", "uint64")):
        add(name, ty, [ty, ty], _unsigned(op, dtype) if dtype else
            (lambda t, e, v, op=op: ("bin", op, *v)))
    for name, op in (("popc", "popc"), ("clz", "clz"), ("ffs", "ffs"), ("brev", "brev")):
        add(name, int32, [int32], _call(op))
        add(name + "ll", int64 if name == "brev" else int32, [int64], _call(op))
    add("hadd", int32, [int32, int32], _halving(0, "int32"))
    add("rhadd", int32, [int32, int32], _halving(1, "int32"))
    add("uhadd", int32, [int32, int32], _halving(0, "uint32"))
    add("urhadd", int32, [int32, int32], _halving(1, "uint32"))
    add("mulhi", int32, [int32, int32], _high("int32", "int64"))
    add("umulhi", int32, [int32, int32], _high("uint32", "uint64"))
    add("sad", int32, [int32] * 3, _sad("int32"))
    add("usad", int32, [int32] * 3, _sad("uint32"))
    return table


_TABLE = _table()

#: Numba's table: ``{"__nv_sinf": (float32, [arg("x", float32, False)]), …}``.
functions = {name: (ret, args) for name, (ret, args, _) in sorted(_TABLE.items())}


def create_signature(retty, args):
    """The signature of ``libdevice.<name>`` for a table entry (Numba's):
    pointer arguments are results, after the return value; several
    results make a ``Tuple``."""
    results = [a.ty for a in args if a.is_ptr]
    if retty != void:
        results.insert(0, retty)
    ret = Tuple(results) if len(results) > 1 else results[0]
    return Signature(ret, [a.ty for a in args if not a.is_ptr])


class _Function:
    """``libdevice.<name>``: translated inside kernels; not callable from Python."""

    def __init__(self, name):
        self.__name__ = name
        self._lf_path = "cuda.libdevice." + name
        ret, args, _ = _TABLE["__nv_" + name]
        self.__doc__ = f"libdevice's __nv_{name}: {create_signature(ret, args)}"

    def _lf_translate(self, translator, e):
        """A call of it in a kernel (``_calls``)."""
        return libdevice_call(translator, e, self.__name__)

    def __call__(self, *args):
        raise RuntimeError(f"libdevice.{self.__name__}() is only translated inside a @cuda.jit kernel")

    def __repr__(self):
        return f"<libdevice function {self.__name__}>"


def libdevice_call(translator, e, name):
    """``libdevice.<name>(args)`` in a kernel: the arguments converted to
    libdevice's types, the operation, the result(s) converted to its
    result types (a tuple for several)."""
    entry = _TABLE.get("__nv_" + name)
    if entry is None:
        translator.fail(e, f"libdevice.{name} (lazyfuse's libdevice has the functions listed in "
                           "cuda.libdevicefuncs.functions)")
    ret, args, build = entry
    inputs = [a for a in args if not a.is_ptr]
    if len(e.args) != len(inputs) or e.keywords:
        translator.fail(e, f"libdevice.{name} with other than {len(inputs)} positional arguments")
    values = [("cast", _DTYPES[a.ty], translator.expr(x)) for a, x in zip(inputs, e.args)]
    value = build(translator, e, values)
    results = ([] if ret == void else [ret]) + [a.ty for a in args if a.is_ptr]
    if len(results) == 1:
        return ("cast", _DTYPES[results[0]], value)
    if value[0] != "let" or value[2][0] != "tuple":
        translator.fail(e, f"libdevice.{name}'s results")
    parts = [("cast", _DTYPES[ty], part) for ty, part in zip(results, value[2][1])]
    return ("let", value[1], ("tuple", parts))


def modules(package):
    """``(libdevice, libdevicefuncs)``: the modules ``<package>.libdevice``
    (a function per table entry, named without ``__nv_``) and
    ``<package>.libdevicefuncs`` (the table)."""
    functions_module = types.ModuleType(package + ".libdevice", "libdevice's functions (``_libdevice``).")
    for name in _TABLE:
        setattr(functions_module, name[5:], _Function(name[5:]))
    table_module = types.ModuleType(package + ".libdevicefuncs",
                                    "libdevice's function table (``_libdevice``).")
    table_module.__dict__.update(functions=functions, create_signature=create_signature, arg=arg)
    return functions_module, table_module

