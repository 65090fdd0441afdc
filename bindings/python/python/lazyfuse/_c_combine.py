"""A C function of two values (CuPy's ``ReductionKernel`` reduce
expression, translated by ``_c_translate``) as an expression of
lazyfuse's expression language, the form a native custom reduction
(``_native.Reducer``, as ``cuda.reduce`` makes one) combines with.

The translated Python spells out C's types: each conversion is a call
(``np.float32(x)``), so the operands of every other operation already
have one type, which lazyfuse's expression language computes in, as C
does. Running that Python on symbolic values that know their dtype
records the expression: a conversion of a constant is the constant in the
new type, a conversion of a value to its own type (unsigned arithmetic
wrapping back, as lazyfuse's unsigned arithmetic wraps) changes nothing,
and any other conversion — to a wider type and back, a comparison's bool
to a number — has no counterpart in the language: the function is then
refused (``None``), as is one the language has no operation for
(``cuda.fma``, ``remainder``), so that the caller reduces another way.
``if`` on a symbolic value (C's ``?:``, a ``__device__`` function that
branches, ``fminf``'s NaN test) joins both ways by ``where``, as
``_trace`` does for ``cuda.reduce``.
"""

import math
import types

import numpy as np

from . import _branches
from ._c_tables import FLOATS
from ._functions import DeviceFunction
from .errors import CompileError


class _Inexpressible(CompileError):
    """What the function does has no counterpart in the expression
    language (caught by ``expression``, which then returns None)."""


def _dtype_of_constant(value):
    """The dtype of a constant operand, or None for Python's numbers,
    which are weak in the expression language (they take the other
    operand's dtype, as in NumPy 2)."""
    return np.dtype(value.dtype).name if isinstance(value, np.generic) else None


def _constant_text(value):
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, (int, np.integer)):
        return f"({int(value)})" if value < 0 else str(int(value))
    value = float(value)
    if value != value:
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "(-inf)"
    return f"({value!r})" if value < 0 else repr(value)


def _joined_dtype(what, x, y):
    """The dtype an operation of ``x`` and ``y`` (traced values or
    constants, one at least traced) computes in: the one dtype of the
    traced values and the NumPy constants, which a Python number fits
    (an int any but bool, a float a float's, a bool bool)."""
    dtype = next(v.dtype for v in (x, y) if isinstance(v, _Value))
    for v in (x, y):
        have = v.dtype if isinstance(v, _Value) else _dtype_of_constant(v)
        weak_fits = have is None and (
            isinstance(v, int) and not isinstance(v, bool) and dtype != "bool"
            or isinstance(v, float) and dtype in FLOATS
            or isinstance(v, bool) and dtype == "bool")
        if have != dtype and not weak_fits:
            raise _Inexpressible(f"{what} of a {dtype} and a {have or type(v).__name__}")
    return dtype


def _text(v):
    return v.text if isinstance(v, _Value) else _constant_text(v)


def _arithmetic(symbol, floats_only=False, ints_only=False):
    def forward(self, other):
        return _binary(symbol, self, other, floats_only, ints_only)

    def reflected(self, other):
        return _binary(symbol, other, self, floats_only, ints_only)

    return forward, reflected


def _binary(symbol, x, y, floats_only, ints_only):
    dtype = _joined_dtype(symbol, x, y)
    if floats_only and dtype not in FLOATS or ints_only and dtype in FLOATS:
        # `/` of integers is C's truncating division, which the
        # translator writes otherwise; `&`, `<<`… of floats are errors.
        raise _Inexpressible(f"{symbol} of {dtype}")
    return _Value(f"({_text(x)} {symbol} {_text(y)})", dtype)


def _comparison(symbol):
    def compare(self, other):
        _joined_dtype(symbol, self, other)
        return _Value(f"({self.text} {symbol} {_text(other)})", "bool")

    return compare


class _Value:
    """A symbolic value of the traced function: the expression computing
    it and its dtype."""

    __slots__ = ("text", "dtype")
    __array_ufunc__ = None  # a NumPy constant's operator defers to ours

    def __init__(self, text, dtype):
        self.text, self.dtype = text, dtype

    __add__, __radd__ = _arithmetic("+")
    __sub__, __rsub__ = _arithmetic("-")
    __mul__, __rmul__ = _arithmetic("*")
    __truediv__, __rtruediv__ = _arithmetic("/", floats_only=True)
    __floordiv__, __rfloordiv__ = _arithmetic("//")
    __mod__, __rmod__ = _arithmetic("%")
    __pow__, __rpow__ = _arithmetic("**")
    __and__, __rand__ = _arithmetic("&", ints_only=True)
    __or__, __ror__ = _arithmetic("|", ints_only=True)
    __xor__, __rxor__ = _arithmetic("^", ints_only=True)
    __lshift__, __rlshift__ = _arithmetic("<<", ints_only=True)
    __rshift__, __rrshift__ = _arithmetic(">>", ints_only=True)
    __lt__, __le__ = _comparison("<"), _comparison("<=")
    __gt__, __ge__ = _comparison(">"), _comparison(">=")
    __eq__, __ne__ = _comparison("=="), _comparison("!=")
    __hash__ = None

    def __neg__(self):
        return _Value(f"(-{self.text})", self.dtype)

    def __pos__(self):
        return self

    def __abs__(self):
        return _Value(f"abs({self.text})", self.dtype)

    def __invert__(self):
        if self.dtype in FLOATS:
            raise _Inexpressible(f"~ of {self.dtype}")
        return _Value(f"(~{self.text})", self.dtype)

    def __bool__(self):
        # An `if` on the value: `expression` runs the function again
        # through `_branches`, which takes both ways.
        raise _Branching("a branch on a traced value")

    def __index__(self):
        raise _Inexpressible("a traced value used as an index or a count")

    __int__ = __float__ = __index__

    # `and`, `or`, `not` of traced conditions (`_branches` calls these).
    def logical_and(self, other):
        return _Value(f"logical_and({self.text}, {_text(other)})", "bool")

    def logical_or(self, other):
        return _Value(f"logical_or({self.text}, {_text(other)})", "bool")

    def logical_not(self):
        return _Value(f"logical_not({self.text})", "bool")


class _Branching(_Inexpressible):
    """Raised by a ``_Value`` asked for its truth value."""


def _where(cond, x, y):
    """``x if cond else y`` of a traced condition."""
    if not isinstance(cond, _Value) or cond.dtype != "bool":
        raise _Inexpressible("a condition that is not a bool")
    if not isinstance(x, _Value) and not isinstance(y, _Value):
        # Two constants: the language would pick their dtype, not C.
        raise _Inexpressible("a choice between two constants")
    return _Value(f"where({cond.text}, {_text(x)}, {_text(y)})", _joined_dtype("?:", x, y))


def _converted(dtype):
    """``np.<dtype>(x)``: a constant converted as C converts it; a value
    only to its own type."""
    def convert(value):
        if isinstance(value, _Value):
            if value.dtype != dtype:
                raise _Inexpressible(f"a conversion of {value.dtype} to {dtype}")
            return value
        with np.errstate(all="ignore"):
            return np.array(value).astype(dtype)[()]
    return convert


def _function(name, result=None):
    """NumPy's ufunc ``name``, which the expression language has by that
    name: of traced floats, computed in their one dtype (giving
    ``result`` where that is another: bool for ``isnan``…); of
    constants, computed now."""
    def call(*args):
        if not any(isinstance(a, _Value) for a in args):
            return getattr(np, name)(*args)
        dtype = _joined_dtype(name, *args) if len(args) == 2 else args[0].dtype
        if dtype not in FLOATS:
            raise _Inexpressible(f"{name} of {dtype}")
        return _Value(f"{name}({', '.join(_text(a) for a in args)})", result or dtype)
    return call


_UNARY = ["sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
          "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
          "floor", "ceil", "trunc", "rint", "cbrt"]
_BINARY = ["power", "arctan2", "hypot", "copysign", "fmod", "nextafter"]
_TESTS = ["isnan", "isinf", "isfinite"]
_TYPES = ["bool_", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64"]

#: What the translated text calls ``np``: conversions and ufuncs.
_NP = types.SimpleNamespace(
    **{name: _converted("bool" if name == "bool_" else name) for name in _TYPES},
    **{name: _function(name) for name in _UNARY + _BINARY},
    **{name: _function(name, "bool") for name in _TESTS})


def _double(name):
    """``math.<name>``, which computes in double: of a double only."""
    def call(x):
        if not isinstance(x, _Value):
            return getattr(math, name)(x)
        if x.dtype != "float64":
            raise _Inexpressible(f"{name} of {x.dtype} in double")
        return _Value(f"{name}({x.text})", "float64")
    return call


#: What the translated text calls ``math``: its constants, and the
#: functions the language has (C's ``remainder`` and ``ldexp`` it has not).
_MATH = types.SimpleNamespace(inf=math.inf, nan=math.nan, pi=math.pi, e=math.e,
                              erf=_double("erf"), erfc=_double("erfc"),
                              gamma=_double("gamma"), lgamma=_double("lgamma"))


class _Refused:
    """A namespace the language has nothing of (``cuda.fma``, ``cuda.warpsize``)."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attribute):
        raise _Inexpressible(f"{self._name}.{attribute}")


def _extreme(name):
    """Python's ``min``/``max``, as the translated text takes C's ``min``
    and ``max`` (of floats, inside tests that let a NaN lose): NumPy's
    ``minimum``/``maximum`` (``name``)."""
    def call(x, y):
        if not isinstance(x, _Value) and not isinstance(y, _Value):
            return min(x, y) if name == "minimum" else max(x, y)
        return _Value(f"{name}({_text(x)}, {_text(y)})", _joined_dtype(name, x, y))
    return call


def _traced(function, scope):
    """``function`` with the globals ``scope``, to be called on traced
    values: where it branches on one, ``_branches`` runs it taking both
    ways."""
    rebound = types.FunctionType(function.__code__, scope, function.__name__,
                                 function.__defaults__, function.__closure__)

    def call(*args):
        try:
            return rebound(*args)
        except _Branching:
            names = rebound.__code__.co_varnames[:rebound.__code__.co_argcount]
            return _branches.run(rebound, scope, dict(zip(names, args)), _Value, _where)
    return call


def expression(env, name, dtype):
    """The expression of ``a`` and ``b`` that the translated ``__device__``
    function ``name`` computes — ``env``: its unit's namespace
    (``_c_translate.Unit.namespace``), ``name`` a function of two
    ``dtype`` values returning one — or None where the expression
    language cannot say what it does in ``dtype``."""
    scope = dict(env, np=_NP, math=_MATH, cuda=_Refused("cuda"), min=_extreme("minimum"),
                 max=_extreme("maximum"))
    for key, value in env.items():
        # The source's device functions, and C's signed division and
        # remainder (`_c_runtime`'s), as the kernels inline them.
        if isinstance(value, DeviceFunction):
            scope[key] = _traced(value.function, scope)
    try:
        result = scope[name](_Value("a", dtype), _Value("b", dtype))
    except Exception:
        # Whatever the translated Python cannot do on traced values (an
        # array indexed by one, a `while` on one, printf) leaves the
        # reduction to the rounds, which run it on real values (and
        # report what fails there).
        return None
    if not isinstance(result, _Value) or result.dtype != dtype:
        return None
    return result.text
