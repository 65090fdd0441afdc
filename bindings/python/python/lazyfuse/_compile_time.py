"""What a kernel knows when it is compiled: numbers, types, functions and
tuples read from globals and closures, locals assigned a number once,
kernel intrinsics passed as values, global NumPy arrays frozen as read-only
parameters (``cuda.const.array_like``). A mixin of the translator
(``_jit.Translator``)."""

import ast
import collections
import enum
import math
import operator

import numpy as np

from ._functions import _Renamer

#: Attributes of ``cuda`` that are values of the running thread, not
#: functions: an argument naming one is computed, not known when compiling.
_VALUE_ATTRIBUTES = {"cuda.warpsize", "cuda.laneid"}
_INDEX_ATTRIBUTES = [["cuda", "threadIdx"], ["cuda", "blockIdx"], ["cuda", "blockDim"],
                     ["cuda", "gridDim"]]


def _constant(value):
    """A global or closure value a kernel may read as a constant (Numba
    freezes them at compile time): a number or a bool."""
    import numpy as np
    return isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating))

class _Intrinsic:
    """A kernel intrinsic known by its path (``cuda.atomic.add``), passed
    as a value."""

    def __init__(self, path):
        self._lf_path = path

def _intrinsic_path(value):
    """The path of the kernel intrinsic ``value`` is (a ``lazyfuse.cuda``
    intrinsic, a ``math`` function), or None."""
    path = getattr(value, "_lf_path", None)
    if path:
        return path
    import math
    name = getattr(value, "__name__", None)
    if name and getattr(math, name, None) is value:
        return "math." + name
    return None

class _ConstantAliases(ast.NodeTransformer):
    """Drops ``X = cuda.const.array_like(G)`` (noting ``X`` as ``G`` in
    ``names``) and reads ``cuda.const.array_like(G)`` elsewhere as ``G``:
    a constant array is the global array itself."""

    def __init__(self):
        self.names = {}

    @staticmethod
    def _array_like(node):
        return (isinstance(node, ast.Call) and ast.unparse(node.func).endswith("const.array_like")
                and len(node.args) == 1 and isinstance(node.args[0], ast.Name))

    def visit_Assign(self, node):
        if (len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and self._array_like(node.value)):
            self.names[node.targets[0].id] = node.value.args[0].id
            return None
        return self.generic_visit(node)

    def visit_Call(self, node):
        if self._array_like(node):
            return ast.copy_location(ast.Name(node.args[0].id, ast.Load()), node)
        return self.generic_visit(node)

def _constant_locals(tree, params):
    """``{name: value}`` of the locals a function assigns exactly once, at
    the top level of its body, from a number or a tuple of numbers."""
    stores = collections.Counter(
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    found = {}
    for stmt in tree.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)):
            continue
        name = stmt.targets[0].id
        if name in params or stores[name] != 1:
            continue
        try:
            value = ast.literal_eval(stmt.value)
        except ValueError:
            continue
        numbers = value if isinstance(value, tuple) else (value,)
        if all(isinstance(v, (int, float)) for v in numbers):
            found[name] = value
    return found


class CompileTime:
    """The translator's compile-time values. Expects ``env``, ``bound``,
    ``arrays``, ``ndims``, ``implicit``, ``implicit_names``,
    ``constant_locals`` and ``fail``."""

    def global_arrays(self, tree):
        """``tree`` with ``X = cuda.const.array_like(G)`` dropped (``X``
        read as ``G``) and every global NumPy array it reads renamed to an
        implicit array parameter (registered in ``self.implicit``)."""
        aliases = _ConstantAliases()
        tree = aliases.visit(tree)
        if aliases.names:
            tree = _Renamer(aliases.names).visit(tree)
        found = {}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Name) and node.id not in self.bound
                    and node.id not in self.arrays and isinstance(self.env.get(node.id), np.ndarray)):
                value = self.env[node.id]
                if value.dtype.names is not None:  # records: a frozen array per field
                    if id(value) not in self.implicit_names:
                        self.implicit_names[id(value)] = self.record_global(node.id, value)
                    found[node.id] = self.implicit_names[id(value)]
                    continue
                if id(value) not in self.implicit_names:
                    name = f"_lf_global{len(self.implicit_names)}_{node.id}"
                    self.implicit_names[id(value)] = name
                    if value.dtype.kind == "c":  # its two planes, a complex array (`_complex_values`)
                        planes = self.global_complexes[name] = (f"{name}__lfre", f"{name}__lfim")
                        parts = zip(planes, (value.real, value.imag))
                    else:
                        parts = [(name, value)]
                    for part, plane in parts:
                        self.implicit[part] = plane
                        self.arrays.add(part)
                        self.ndims[part] = value.ndim
                found[node.id] = self.implicit_names[id(value)]
        return _Renamer(found).visit(tree) if found else tree

    def static_value(self, node):
        """``(True, value)`` for what is known when the kernel is compiled:
        a number, a global or closure value (a type, a device function, a
        tuple), a kernel intrinsic named by its path (``cuda.atomic.add``),
        a tuple of such values; ``(False, None)`` for anything else."""
        if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int, float)):
            return True, node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            known, value = self.static_value(node.operand)
            if known and _constant(value):
                return True, -value if isinstance(node.op, ast.USub) else value
            return False, None
        if isinstance(node, ast.Name):
            if node.id in self.constant_locals:
                return True, self.constant_locals[node.id]
            if node.id in self.arrays or node.id in self.bound or node.id not in self.env:
                return False, None
            return True, self.env[node.id]
        if isinstance(node, ast.Tuple):
            values = [self.static_value(e) for e in node.elts]
            if all(known for known, _ in values):
                return True, tuple(v for _, v in values)
            return False, None
        if isinstance(node, ast.Attribute):
            path = ast.unparse(node)
            head = path.split(".")[0]
            if head in self.bound or head in self.arrays:
                return False, None
            if path in _VALUE_ATTRIBUTES or path.split(".")[:2] in _INDEX_ATTRIBUTES:
                return False, None  # a value of the thread (cuda.threadIdx.x): computed
            if path.startswith("math.") and isinstance(getattr(math, path[5:], None), float):
                return True, getattr(math, path[5:])
            if path.startswith(("cuda.", "math.")):
                return True, _Intrinsic(path)
            value = self.env.get(head)
            for attr in path.split(".")[1:]:
                value = getattr(value, attr, None)
            if value is not None and (_constant(value) or hasattr(value, "dtype")
                                      or isinstance(value, enum.Enum)):
                return True, value
        if isinstance(node, ast.Subscript):  # an Enum's member by name: Color["red"]
            known, cls = self.static_value(node.value)
            key = node.slice
            if known and isinstance(cls, enum.EnumMeta) and isinstance(key, ast.Constant):
                member = cls.__members__.get(key.value)
                if member is not None:
                    return True, member
        return False, None

    def folded_compare(self, e):
        """A comparison of values all known when compiling (Enum members,
        constants), decided now with Python's rules (``Color.red ==
        Shake.mint`` is False though both values are 3); None otherwise."""
        values = []
        for operand in [e.left, *e.comparators]:
            known, value = self.static_value(operand)
            if not known or isinstance(value, _Intrinsic):
                return None
            values.append(value)
        ops = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
               ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
               ast.Is: operator.is_, ast.IsNot: operator.is_not}
        result = True
        for op, (a, b) in zip(e.ops, zip(values, values[1:])):
            if type(op) not in ops:
                return None
            try:
                result = result and bool(ops[type(op)](a, b))
            except TypeError:
                return None
        return ("const", int(result), "bool")

    def constant_expr(self, value, node):
        """A compile-time number as an expression."""
        if not _constant(value):
            self.fail(node, f"a {type(value).__name__} used as a number")
        if isinstance(value, (bool, __import__("numpy").bool_)):
            return ("const", int(value), "bool")
        return ("const", value.item() if hasattr(value, "item") else value)

    def resolved_value(self, func):
        """The value a called name or attribute chain of globals holds
        (``cg.this_grid`` with ``from numba.cuda import cg``,
        ``libdevice.sinf``), or None: called things are found by their
        value, not their name."""
        chain = ast.unparse(func).split(".") if isinstance(func, (ast.Name, ast.Attribute)) else []
        if not chain or chain[0] in self.bound or chain[0] in self.arrays \
                or chain[0] not in self.env:
            return None
        value = self.env[chain[0]]
        for attr in chain[1:]:
            value = getattr(value, attr, None)
        return value

    def resolved_path(self, func):
        """The intrinsic path of what a call names (``resolved_value``), or None."""
        value = self.resolved_value(func)
        return _intrinsic_path(value) if value is not None else None

    def intrinsic_path(self, func):
        """The path of a kernel intrinsic a called name holds
        (``binop(ary, i, v)`` where ``binop`` is ``cuda.atomic.add``), or
        None."""
        if not isinstance(func, ast.Name) or func.id in self.bound:
            return None
        return _intrinsic_path(self.env.get(func.id))
