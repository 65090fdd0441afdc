"""Which values of a kernel are complex (``_complex_values``), decided
before translating, as Numba's type inference decides: a literal, an
element of a complex array, ``complex(…)``, a ``cmath`` function, a
device function returning one, an operation with a complex operand, and
a local any of whose assigned values is complex (``acc = 0`` then
``acc += a[i]``). Also the tables of the NumPy ufuncs a complex value
goes through."""

import ast
import cmath

import numpy as np

from ._control import own_nodes
from ._functions import _as_device_function, _binds

#: The ``cmath`` functions of a complex value (``_kernel_cmath``'s).
_CMATH_COMPLEX = {
    "exp", "log", "log10", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
    "cosh", "tanh", "asinh", "acosh", "atanh", "rect",
}
#: NumPy's ufuncs of complex values with complex results: ``cmath``'s
#: function of the same value, or ``_kernel_cmath``'s.
_NP_CMATH = {
    "sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "asin", "arccos": "acos",
    "arctan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "arcsinh": "asinh",
    "arccosh": "acosh", "arctanh": "atanh", "exp": "exp", "log": "log", "log10": "log10",
    "sqrt": "sqrt", "log2": "log2", "maximum": "maximum", "minimum": "minimum",
    "fmax": "fmax", "fmin": "fmin",
}
#: NumPy's arithmetic ufuncs, as Python's operators.
_NP_OPERATORS = {
    "add": ast.Add, "subtract": ast.Sub, "multiply": ast.Mult, "divide": ast.Div,
    "true_divide": ast.Div, "power": ast.Pow,
}
#: NumPy's ufuncs of complex values with real (boolean) results.
_NP_COMPARISONS = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}


def _path(func):
    try:
        return ast.unparse(func)
    except Exception:  # noqa: BLE001 (an odd node: no path)
        return ""


def _call_path(func, scope):
    """A callee's path (``cmath.exp``), also for a global or closure name
    bound to one of ``cmath``'s functions (``f = cmath.exp``)."""
    if isinstance(func, ast.Name) and func.id not in scope.bound:
        value = scope.env.get(func.id)
        name = getattr(value, "__name__", None)
        if callable(value) and isinstance(name, str) and getattr(cmath, name, None) is value:
            return f"cmath.{name}"
    return _path(func)


def _complex_type(func, env):
    """``complex64``/``complex128`` when calling ``func`` converts to a
    complex dtype (``np.complex64(x)``, Numba's ``complex128(x)``)."""
    from ._calls import _dtype_name
    from .errors import CompileError
    if not isinstance(func, (ast.Name, ast.Attribute)):
        return None
    if isinstance(func, ast.Name) and func.id == "complex":
        return None
    if isinstance(func, ast.Attribute) and func.attr in ("complex64", "complex128"):
        return func.attr  # np.complex64
    try:
        name = _dtype_name(func, env)
    except (CompileError, TypeError, KeyError, AttributeError, ValueError):
        return None
    return name if isinstance(name, str) and name.startswith("complex") else None


class _Scope:
    """What deciding complexity needs of a function being translated or
    looked into: its complex locals and arrays, its names, its globals."""

    def __init__(self, complex_locals, complex_arrays, bound, env):
        self.complex_locals, self.complex_arrays = complex_locals, complex_arrays
        self.bound, self.env = bound, env


def is_complex(scope, e):
    """Whether expression ``e`` has a complex value in ``scope``."""
    kind = type(e)
    if kind is ast.Constant:
        return isinstance(e.value, complex)
    if kind is ast.Name:
        if e.id in scope.complex_locals:
            return True
        return e.id not in scope.bound and isinstance(
            scope.env.get(e.id), (complex, np.complexfloating))
    if kind is ast.Subscript:
        return (isinstance(e.value, ast.Name) and e.value.id in scope.complex_arrays
                and not any(isinstance(i, ast.Slice) for i in (
                    e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice])))
    if kind is ast.BinOp:
        return is_complex(scope, e.left) or is_complex(scope, e.right)
    if kind is ast.UnaryOp:
        return not isinstance(e.op, ast.Not) and is_complex(scope, e.operand)
    if kind is ast.IfExp:
        return is_complex(scope, e.body) or is_complex(scope, e.orelse)
    if kind is ast.Call:
        return _call_is_complex(scope, e)
    return False


def _call_is_complex(scope, e):
    path = _call_path(e.func, scope)
    tail = path.split(".")
    if path == "complex" and "complex" not in scope.bound:
        return True
    if path == "pow" and len(e.args) == 2 and "pow" not in scope.bound:
        return is_complex(scope, e.args[0]) or is_complex(scope, e.args[1])
    if len(tail) == 2 and tail[0] == "cmath" and tail[1] in _CMATH_COMPLEX:
        return True
    if isinstance(e.func, ast.Attribute) and e.func.attr == "conjugate":
        return is_complex(scope, e.func.value)
    if (len(tail) == 2 and tail[0] in ("np", "numpy") and tail[1] in (
            set(_NP_CMATH) | set(_NP_OPERATORS) | {"negative", "positive", "conjugate", "conj",
                                                   "square", "reciprocal"})):
        return any(is_complex(scope, a) for a in e.args)
    if _complex_type(e.func, scope.env):
        return True
    target = scope.env.get(e.func.id) if isinstance(e.func, ast.Name) else None
    function = _as_device_function(target)
    if function is None:
        return False
    complex_params = frozenset(p for p, a in zip(function.params, e.args) if is_complex(scope, a))
    arrays = frozenset(p for p, a in zip(function.params, e.args)
                       if isinstance(a, ast.Name) and a.id in scope.complex_arrays)
    return returns_complex(function, complex_params, arrays)


_RETURNS = {}


def returns_complex(function, complex_params, complex_arrays):
    """Whether device ``function`` returns a complex value when the
    parameters ``complex_params`` are complex numbers and
    ``complex_arrays`` complex arrays."""
    key = (function, complex_params, complex_arrays)
    if key not in _RETURNS:
        _RETURNS[key] = False  # a recursive call (refused later) decides nothing
        scope = _Scope(dict.fromkeys(complex_params), set(complex_arrays),
                       _binds(function.params, function.tree), function.scope())
        complex_locals(scope, function.tree)
        _RETURNS[key] = any(is_complex(scope, n.value) for n in own_nodes(function.tree)
                            if isinstance(n, ast.Return) and n.value is not None)
    return _RETURNS[key]


def complex_locals(scope, tree):
    """Adds to ``scope.complex_locals`` each local of ``tree`` assigned a
    complex value somewhere (until none is added: a local may be complex
    because another is)."""
    added = True
    while added:
        added = False
        for node in ast.walk(tree):
            pairs = []
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                    pairs = list(zip(target.elts, node.value.elts))
                else:
                    pairs = [(target, node.value)]
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                pairs = [(node.target, node.value)]
            for target, value in pairs:
                if (isinstance(target, ast.Name) and target.id not in scope.complex_locals
                        and is_complex(scope, value)):
                    scope.complex_locals[target.id] = None
                    added = True


def mentions_complex(tree, env):
    """Whether a function may compute on complex numbers without being
    given any: a complex literal, ``complex``, ``cmath``, a complex global
    or conversion."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, complex):
            return True
        if isinstance(node, ast.Name) and (node.id in ("complex", "cmath") or isinstance(
                env.get(node.id), (complex, np.complexfloating))):
            return True
        if isinstance(node, ast.Call) and _complex_type(node.func, env):
            return True
    return False
