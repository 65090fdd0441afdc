"""``@vectorize`` and ``@jit`` functions of complex values.

Tracing (``_trace``) builds native expressions, which hold real dtypes
only; a complex array is a pair of real arrays (``_complex``). So a
function that meets complex values is called on lazy arrays instead: its
arithmetic, ``abs``, ``.real``/``.imag``/``.conjugate()`` and its
``cmath``/``math``/``numpy`` calls build the same fused expression that the
operations on complex lazy arrays build, element by element as Numba's
loop would compute it. ``cmath`` and ``math`` in the function's globals
are lazyfuse's functions during the call (the modules themselves take
Python numbers only).

What needs a value of each element (``if`` on an argument, loops of
data-dependent length) cannot run this way: it is a ``CompileError``
naming the function, as Numba's own typing errors are.
"""

import types

import numpy as np

from ._registry import FUNCTIONS
from .errors import CompileError

#: ``cmath``'s (and ``math``'s) names → NumPy's, for lazyfuse's functions.
_MATH_NAMES = {
    "exp": "exp", "log": "log", "log10": "log10", "log2": "log2", "log1p": "log1p",
    "expm1": "expm1", "sqrt": "sqrt", "sin": "sin", "cos": "cos", "tan": "tan",
    "asin": "arcsin", "acos": "arccos", "atan": "arctan", "sinh": "sinh", "cosh": "cosh",
    "tanh": "tanh", "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh",
    "phase": "angle", "isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite",
    "fabs": "absolute", "floor": "floor", "ceil": "ceil", "trunc": "trunc", "hypot": "hypot",
    "atan2": "arctan2", "pow": "power", "copysign": "copysign",
}
_CONSTANTS = {"pi": np.pi, "e": np.e, "tau": 2 * np.pi, "inf": np.inf, "nan": np.nan,
              "infj": complex(0, np.inf), "nanj": complex(0, np.nan)}


def mentions_complex(signatures):
    """Whether any of Numba's ``signatures`` names a complex type (one
    that does not parse is left to whoever compiles it)."""
    for signature in signatures:
        try:
            result, inputs = _parse(signature, "")
        except CompileError:
            continue
        if any(dtype.kind == "c" for dtype in (result, *inputs)):
            return True
    return False


def _lazy_math(module):
    """A stand-in for ``math``/``cmath`` whose functions are lazyfuse's."""
    names = {name: FUNCTIONS[numpy_name] for name, numpy_name in _MATH_NAMES.items()
             if numpy_name in FUNCTIONS}
    names.update({name: value for name, value in _CONSTANTS.items() if hasattr(module, name)})
    return types.SimpleNamespace(**names)


class Untraceable(CompileError):
    """A function that calling on lazy arrays cannot apply (it branches on
    values, or loops while they say): with signatures, ``@vectorize``
    compiles it from its source instead (``_numba``)."""


class ComplexCalls:
    """A ``@vectorize`` function applied by calling it on lazy arrays (see
    the module documentation), with Numba's signatures: the first whose
    arguments the given ones cast to safely converts them, and its result
    type is the result's."""

    def __init__(self, function, signatures, what):
        self._what = what
        # Parsed at the first complex call: a real-only ufunc never needs
        # them.
        self._given, self._signatures = signatures, None
        self._plain, self._function = function, None

    def call(self, arrays, lazy_of):
        """The result for ``arrays`` (lazy arrays or anything ``lazy_of``
        makes one of), a lazy array of their broadcast shape."""
        arrays = [lazy_of(a) for a in arrays]
        if self._function is None:
            self._signatures = [_parse(s, self._what) for s in self._given]
            self._function = _with_lazy_math(self._plain)
        result_dtype = None
        if self._signatures:
            result_dtype, inputs = self._chosen(arrays)
            arrays = [a if a.dtype == dtype else a.astype(dtype) for a, dtype in zip(arrays, inputs)]
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
        try:
            result = self._function(*arrays)
        except (TypeError, ValueError) as error:
            raise Untraceable(
                f"{self._what}: calling it on complex arrays failed ({error}); without "
                "signatures only functions whose steps act element by element (arithmetic, "
                "math functions, no branches on the values) run on complex values") from None
        if not hasattr(result, "shape"):
            result = lazy_of(np.asarray(result))
        if tuple(result.shape) != tuple(shape):
            result = FUNCTIONS["broadcast_to"](result, shape)
        return result if result_dtype is None else result.astype(result_dtype)

    def _chosen(self, arrays):
        for result, inputs in self._signatures:
            if len(inputs) == len(arrays) and all(
                    np.can_cast(a.dtype, dtype, "safe") for a, dtype in zip(arrays, inputs)):
                return result, inputs
        given = ", ".join(str(a.dtype) for a in arrays)
        raise CompileError(f"{self._what}: no signature takes ({given}) (the signatures: "
                           f"{', '.join(_text(s) for s in self._signatures)})")


def _with_lazy_math(function):
    """``function`` with ``math`` and ``cmath`` (where its globals or its
    closure name them) bound to lazyfuse's functions."""
    def lazy(value):
        is_math = isinstance(value, types.ModuleType) and value.__name__ in ("math", "cmath")
        return _lazy_math(value) if is_math else value

    def cell(old):
        try:
            return types.CellType(lazy(old.cell_contents))
        except ValueError:  # not yet assigned: kept, to be assigned later
            return old

    scope = {name: lazy(value) for name, value in function.__globals__.items()}
    closure = function.__closure__ and tuple(map(cell, function.__closure__))
    return types.FunctionType(function.__code__, scope, function.__name__,
                              function.__defaults__, closure)


def _parse(signature, what):
    """``"complex64(complex64, float32)"`` → ``(dtype, [dtypes])``."""
    text = str(signature).replace(" ", "")
    if not text.endswith(")") or "(" not in text:
        raise CompileError(f"{what}: signature {signature!r} (expected 'result(argument, ...)')")
    result, arguments = text[:-1].split("(", 1)
    names = {"boolean": "bool", "bool_": "bool"}
    try:
        return np.dtype(names.get(result, result)), [
            np.dtype(names.get(a, a)) for a in arguments.split(",") if a]
    except TypeError:
        raise CompileError(f"{what}: signature {signature!r} names an unknown type") from None


def _text(signature):
    result, inputs = signature
    return f"{result}({', '.join(str(d) for d in inputs)})"
