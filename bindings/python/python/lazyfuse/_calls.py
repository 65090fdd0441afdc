"""Calls in translated kernels (see ``_jit``): the launch geometry
(``cuda.grid``, ``gridsize``, ``syncthreads``), shared and local arrays,
atomics, ``math.*``, Python's and Numba's builtins (``abs``, ``min``/``max``,
``len``, ``round``, ``float``/``int``/``bool``, ``cuda.selp``), conversions
by Numba's or NumPy's type objects (``float32(x)``, ``np.int64(x)``), and
device functions (inlined by ``_jit``)."""

import ast

from .errors import CompileError
from ._trace import _MATH

_ATOMICS = {"add": "add", "max": "max", "min": "min", "exch": "exchange",
            "compare_and_swap": "cas", "cas": "cas"}
_NUMPY_DTYPES = {
    "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "bool_", "float_", "int_",
}


def _dtype_name(node, env):
    """A dtype written in the source: ``numba.float32``, ``np.float64``, ``float32``, ``'f4'``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        import numpy as np
        return np.dtype(node.value).name
    if isinstance(node, ast.Attribute) and node.attr in _NUMPY_DTYPES:
        import numpy as np
        return np.dtype(getattr(np, node.attr)).name
    if isinstance(node, ast.Name):
        value = env.get(node.id)
        name = getattr(value, "name", None) or getattr(value, "__name__", None)
        if name:
            import numpy as np
            return np.dtype(name).name
    raise CompileError(f"line {node.lineno}: cannot read a dtype from {ast.unparse(node)!r}")

class Calls:
    """The call half of the translator. Expects ``expr``, ``fail``, ``env``,
    ``arrays``, ``written``, ``inlines`` (whether a called value is a device
    function) and ``inline_call``."""

    def call(self, e):
        if e.keywords and not (isinstance(e.func, ast.Attribute) and e.func.attr == "array"):
            self.fail(e, "keyword arguments")
        func = e.func
        path = ast.unparse(func)
        tail = path.split(".")
        args = e.args
        if tail[-1] in ("grid", "gridsize") and len(tail) >= 2:
            n = args[0].value if args and isinstance(args[0], ast.Constant) else None
            if n not in (1, 2, 3):
                self.fail(e, f"{path} of other than a constant 1, 2 or 3")
            return (tail[-1], n)
        if tail[-1] == "syncthreads":
            return ("sync",)
        if len(tail) >= 2 and tail[-2] in ("shared", "local") and tail[-1] == "array":
            kw = {k.arg: k.value for k in e.keywords}
            shape = kw.get("shape", args[0] if args else None)
            dtype = kw.get("dtype", args[1] if len(args) > 1 else None)
            if shape is None or dtype is None:
                self.fail(e, f"{path} without a shape and a dtype")
            dims = shape.elts if isinstance(shape, ast.Tuple) else [shape]
            sizes = []
            for d in dims:
                value = d.value if isinstance(d, ast.Constant) else self.env.get(getattr(d, "id", None))
                if isinstance(value, bool) or not isinstance(value, (int, __import__("numpy").integer)):
                    self.fail(e, "an array shape that is not made of constants")
                sizes.append(int(value))
            return (f"{tail[-2]}_array", _dtype_name(dtype, self.env), sizes)
        if len(tail) >= 2 and tail[-2] == "atomic" and tail[-1] in _ATOMICS:
            if tail[-1] == "compare_and_swap" and len(args) == 3:
                # Numba's compare_and_swap(ary, old, val) works on ary[0].
                args = [args[0], ast.Constant(0, lineno=e.lineno, col_offset=0)] + list(args[1:])
            arity = 4 if _ATOMICS[tail[-1]] == "cas" else 3
            if len(args) != arity or not isinstance(args[0], ast.Name):
                self.fail(e, f"{path} with these arguments (expected {arity}: array, index, "
                             f"{'old, value' if arity == 4 else 'value'})")
            array = args[0].id
            index = args[1]
            items = index.elts if isinstance(index, ast.Tuple) else [index]
            if array in self.arrays:
                self.written.add(array)
            return ("atomic", _ATOMICS[tail[-1]], array, [self.expr(i) for i in items],
                    [self.expr(a) for a in args[2:]])
        if len(tail) == 2 and tail[0] == "math" and tail[1] in _MATH:
            return ("call", _MATH[tail[1]], [self.expr(a) for a in args])
        if path == "abs" and len(args) == 1:
            return ("unary", "abs", self.expr(args[0]))
        if path in ("min", "max") and len(args) >= 2:
            op = "minimum" if path == "min" else "maximum"
            value = self.expr(args[0])
            for arg in args[1:]:  # Python's order: the first of equal values
                value = ("bin", op, value, self.expr(arg))
            return value
        if path == "round" and len(args) == 1:  # Python's: half to even, an int
            return ("cast", "int64", ("unary", "round", self.expr(args[0])))
        if path == "cuda.selp" and len(args) == 3:
            return ("select", self.expr(args[0]), self.expr(args[1]), self.expr(args[2]))
        if path == "len" and len(args) == 1 and isinstance(args[0], ast.Name):
            return ("shape", args[0].id, 0)
        if path in ("float", "int", "bool") and len(args) == 1:
            dtype = {"float": "float64", "int": "int64", "bool": "bool"}[path]
            return ("cast", dtype, self.expr(args[0]))
        target = self.env.get(path) if isinstance(func, ast.Name) else None
        if self.inlines(target):
            return self.inline_call(target, e)
        dtype = self.cast_dtype(func)
        if dtype is not None and len(args) == 1:
            return ("cast", dtype, self.expr(args[0]))
        self.fail(e, f"a call of '{path}'")

    def cast_dtype(self, func):
        """The dtype a call of ``func`` converts to: a Numba type
        (``float32(x)``) or NumPy's (``np.int64(x)``); None for other calls."""
        import numpy as np
        if isinstance(func, ast.Name):
            value = self.env.get(func.id)
            is_type = getattr(value, "dtype", None) is not None and hasattr(value, "name")
            if not (is_type or (isinstance(value, type) and issubclass(value, np.generic))):
                return None
        elif not (isinstance(func, ast.Attribute) and func.attr in _NUMPY_DTYPES):
            return None
        try:
            return _dtype_name(func, self.env)
        except (CompileError, TypeError):
            return None
