"""Tracing Python functions into lazyfuse expressions.

A function decorated with ``vectorize`` or ``cuda.reduce`` is called once
on symbolic arguments. Operators, comparisons, ``math.*`` (and NumPy's
ufuncs), ``abs``, ``min``/``max`` of two values and ``lazyfuse.where``
record an expression string in lazyfuse's expression language, which the
native side parses into a ufunc. Python control flow on a symbolic value
(``if``, ``and``, ``a if c else b``) cannot be recorded by a call: the
function's source then runs through ``lazyfuse._branches``, which traces
both ways of each such branch and joins them with ``where``.
"""

import inspect
import math
import types

from . import _branches
from .errors import CompileError


class _Branching(CompileError):
    """Raised by a symbolic value asked for its truth value: the traced
    function branches on it."""

# math's functions by the name of the lazyfuse (NumPy) operation.
_MATH = {
    "sqrt": "sqrt", "exp": "exp", "expm1": "expm1", "log": "log", "log2": "log2",
    "log10": "log10", "log1p": "log1p", "sin": "sin", "cos": "cos", "tan": "tan",
    "asin": "arcsin", "acos": "arccos", "atan": "arctan", "sinh": "sinh",
    "cosh": "cosh", "tanh": "tanh", "asinh": "arcsinh", "acosh": "arccosh",
    "atanh": "arctanh", "fabs": "abs", "floor": "floor", "ceil": "ceil",
    "trunc": "trunc", "isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite",
    "atan2": "arctan2", "hypot": "hypot", "copysign": "copysign", "fmod": "fmod",
    "pow": "power", "erf": "erf", "erfc": "erfc", "gamma": "gamma", "lgamma": "lgamma",
    "radians": "deg2rad",
    "degrees": "rad2deg", "gcd": "gcd", "lcm": "lcm", "nextafter": "nextafter",
    "exp2": "exp2", "cbrt": "cbrt",
}


def _text(value):
    if isinstance(value, Sym):
        return value.text
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float)):
        if value != value:
            return "nan"
        if value in (float("inf"), float("-inf")):
            return "inf" if value > 0 else "(-inf)"
        return repr(value)
    raise CompileError(
        f"{type(value).__name__} values cannot be traced (expected numbers and the function's arguments)"
    )


def _call(name, *args):
    return Sym(f"{name}({', '.join(_text(a) for a in args)})")


def _binary(symbol):
    def forward(self, other):
        return Sym(f"({_text(self)} {symbol} {_text(other)})")

    def reflected(self, other):
        return Sym(f"({_text(other)} {symbol} {_text(self)})")

    return forward, reflected


class Sym:
    """A symbolic value: the expression that computes it."""

    __slots__ = ("text",)
    __array_priority__ = 1000

    def __init__(self, text):
        self.text = text

    __add__, __radd__ = _binary("+")
    __sub__, __rsub__ = _binary("-")
    __mul__, __rmul__ = _binary("*")
    __truediv__, __rtruediv__ = _binary("/")
    __floordiv__, __rfloordiv__ = _binary("//")
    __mod__, __rmod__ = _binary("%")
    __pow__, __rpow__ = _binary("**")
    __and__, __rand__ = _binary("&")
    __or__, __ror__ = _binary("|")
    __xor__, __rxor__ = _binary("^")
    __lshift__, __rlshift__ = _binary("<<")
    __rshift__, __rrshift__ = _binary(">>")
    __lt__, _ = _binary("<")
    __le__, _ = _binary("<=")
    __gt__, _ = _binary(">")
    __ge__, _ = _binary(">=")
    __eq__, _ = _binary("==")
    __ne__, _ = _binary("!=")
    __hash__ = object.__hash__

    def __neg__(self):
        return Sym(f"(-{self.text})")

    def __pos__(self):
        return self

    def __abs__(self):
        return _call("abs", self)

    def __invert__(self):
        return Sym(f"(~{self.text})")

    def __bool__(self):
        raise _Branching(
            "a traced value has no truth value while tracing: `if`, `and`, `or`, `not` and "
            "`a if c else b` cannot be recorded (use lazyfuse.where(c, a, b), & | ~)"
        )

    def __float__(self):
        raise CompileError("a traced value cannot be converted to a Python float while tracing")

    __int__ = __index__ = __float__

    # NumPy's ufuncs call these methods on objects (np.sqrt(x) -> x.sqrt()).
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args: _call(name, self, *args)


def where(cond, a, b):
    """``cond ? a : b`` while tracing."""
    return _call("where", cond, a, b)


def _minimum(a, b, *rest):
    if rest:
        raise CompileError("min/max of more than two values cannot be traced")
    return _call("minimum", a, b)


def _maximum(a, b, *rest):
    if rest:
        raise CompileError("min/max of more than two values cannot be traced")
    return _call("maximum", a, b)


_math_shim = types.SimpleNamespace(
    **{name: (lambda op: lambda *args: _call(op, *args))(op) for name, op in _MATH.items()},
    pi=math.pi,
    e=math.e,
    tau=math.tau,
    inf=math.inf,
    nan=math.nan,
)


def _unused(name, names):
    """``name`` with underscores appended until no name in ``names`` has it."""
    while name in names:
        name += "_"
    return name


def expression(function, what):
    """The expression string of ``function`` and its argument names."""
    try:
        names = list(inspect.signature(function).parameters)
    except (TypeError, ValueError) as e:
        raise CompileError(f"{what}: cannot read the arguments of {function!r}: {e}") from None
    patched = dict(function.__globals__)
    patched.update(math=_math_shim, min=_minimum, max=_maximum)
    for name, value in function.__globals__.items():
        # `from math import sqrt` binds math's own functions.
        op = _MATH.get(getattr(value, "__name__", ""))
        if op is not None and getattr(value, "__module__", None) == "math":
            patched[name] = getattr(_math_shim, value.__name__)
    traced = types.FunctionType(
        function.__code__, patched, function.__name__, function.__defaults__, function.__closure__
    )
    # The expression language reads `inf` and `nan` as constants unless an
    # argument has the name: such an argument gets another in the expression.
    params, names = names, [_unused(n, names) if n in ("inf", "nan") else n for n in names]
    args = {param: Sym(name) for param, name in zip(params, names)}
    try:
        result = traced(*args.values())
    except _Branching:
        scope = dict(patched)
        scope.update(inspect.getclosurevars(function).nonlocals)
        result = _branches.run(function, scope, args, Sym, where)
    except (TypeError, AttributeError) as error:
        # An operation the symbols do not have (`.real`, a comparison of a
        # method): the function is not an expression of its arguments.
        raise CompileError(f"{what}: the function cannot be traced ({error})") from None
    try:
        return _text(result), names
    except CompileError as e:
        raise CompileError(f"{what}: the function returned {result!r}: {e}") from None
