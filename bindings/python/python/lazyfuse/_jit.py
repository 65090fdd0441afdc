"""Kernels written in Python (Numba's ``@cuda.jit``, and ``@guvectorize``
bodies): the function's source is read with ``ast`` and translated into a
tree of tuples that the native side replays on lazyfuse's kernel builder
(``_native.build_kernel``).

``Translator`` handles statements and expressions; its mixins the rest:
control flow (``_control``: ``if``, ``for … in range``, ``while``,
``break``/``continue``, ``return`` anywhere), calls (``_calls``: ``math``,
builtins, type conversions, atomics, shared and local arrays, block votes,
intrinsics), compile-time values (``_compile_time``: globals, closures,
types and functions as values, constant locals, frozen global arrays),
tuples and loops over sequences (``_sequences``), slices of arrays
(``_slices``), ``print`` and ``raise`` (``_reports``) and inlined device
functions (``_inlining``, over ``_functions``). A local's dtype is that of
all the values assigned to it (Numba's unification: ``s = 0`` then
``s += 0.5`` is a float64) and, as in Python, it is visible in the whole
function, also when first assigned inside an ``if``/loop body (it is zero
until assigned). Anything else raises ``CompileError`` naming the file,
the line and the construct.
"""

import ast

import numpy as np

from .errors import CompileError

from ._calls import SPECIAL, Calls, _ufunc_on_arrays
from ._compile_time import CompileTime, _constant, _constant_locals
from ._complex_values import ComplexValues
from ._control import ControlFlow, known_truth
from ._functions import (  # noqa: F401  (DeviceFunction: the package's name for it)
    DeviceFunction, _binds, _LocalFunction, _parse, _where,
)
from ._inlining import Inlining
from ._record_values import RecordValues
from ._reports import RAISED, _RAISE, Reports, _Raises  # noqa: F401
from ._sequences import Sequences
from ._string_values import StringValues
from ._slices import Slices
from ._enum_values import EnumValues
from ._reshapes import Reshapes
from ._vector_values import VectorValues
from ._byte_views import ByteViews
from ._grid_groups import GridGroups
from ._zero_division import check_division

_BINOPS = {
    ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "divide",
    ast.FloorDiv: "floor_divide", ast.Mod: "remainder", ast.Pow: "power",
    ast.BitAnd: "bitwise_and", ast.BitOr: "bitwise_or", ast.BitXor: "bitwise_xor",
    ast.LShift: "left_shift", ast.RShift: "right_shift",
}
_COMPARE = {
    ast.Lt: "less", ast.LtE: "less_equal", ast.Gt: "greater", ast.GtE: "greater_equal",
    ast.Eq: "equal", ast.NotEq: "not_equal",
}


def _may_fault(node):
    """True when a translated expression reads memory or calls a device
    function: evaluating it where Python would not could read out of
    bounds or write."""
    if not isinstance(node, (tuple, list)):
        return False
    if isinstance(node, tuple) and node and node[0] in ("load", "atomic", "let"):
        return True
    return any(_may_fault(child) for child in node)


class Translator(ControlFlow, Calls, CompileTime, Sequences, Slices, Reports, Inlining,
                 ComplexValues, RecordValues, StringValues, VectorValues, EnumValues, Reshapes,
                 ByteViews, GridGroups):
    """Translates one function; ``arrays`` names its array arguments,
    ``complexes`` the two leaves (parts) of each complex argument,
    ``records`` the fields of each record argument (``_record_values``),
    ``strings`` the arrays of strings' code units (``_string_values``)."""

    def __init__(self, function, arrays, gufunc=False, ndims=None, tuples=None, fields=None,
                 dynamic_shared=None, debug=False, complexes=None, records=None, enums=None,
                 strings=None):
        self.function = function
        # The Enum arguments' classes (`_enum_values`): {parameter: class}.
        self.enums = dict(enums or {})
        # The exceptions the kernel raises, by code (1, 2, ...), and whether
        # they are reported (Numba's `debug=True`): a list shared with the
        # device functions inlined.
        self.raises, self.debug = [], debug
        # The launch's dynamic shared memory in bytes (`cuda.shared.array(0, …)`),
        # and the dtypes of the arrays that took it.
        self.dynamic_shared, self.dynamic_arrays = dynamic_shared, []
        # The dimensions of the array arguments, where known (``a.shape``
        # as a tuple).
        self.ndims = dict(ndims or {})
        self.tree = _parse(function)
        self.params = [a.arg for a in self.tree.args.args]
        self.arrays = set(arrays)
        self.env = dict(function.__globals__)
        if function.__closure__:
            names = function.__code__.co_freevars
            self.env.update({n: c.cell_contents for n, c in zip(names, function.__closure__)})
        self.gufunc = gufunc
        # Global NumPy arrays the kernel reads (Numba freezes them as
        # constants; `cuda.const.array_like(G)` names one): each becomes a
        # read-only array parameter the launch passes, by parameter name.
        self.implicit, self.implicit_names = {}, {}
        # Complex global arrays: each one's two planes (implicit arrays).
        self.global_complexes = {}
        # Names the function binds: they are its locals, never globals.
        self.bound = _binds(self.params, self.tree)
        # The number of fresh locals and call sites so far (`fresh`, each
        # inlined call's locals), from the first rewrite on.
        self.sites = [0]
        self.start_records(records)
        self.start_strings(strings)
        self.tree = self.global_arrays(self.tree)
        # Whether the kernel takes a grid group (`_grid_groups`): shared
        # with the device functions inlined, read by the launch.
        self.cooperative = [False]
        self.tree = self.rewrite_grid_groups(self.tree)
        self.tree = self.rewrite_records(self.tree)
        self.tree = self.rewrite_strings(self.tree)
        self.bound = _binds(self.params, self.tree) | self.record_names()
        self.env.setdefault("_lf_raise", _RAISE)
        self.constant_locals = {}
        if debug:  # Numba's Python error model: a division by zero raises
            self.tree = check_division(self.tree, self.env)
        self.tree = _Raises(self).apply(self.tree)
        # Locals the function's body assigns once, at its top level, a
        # number or a tuple of numbers (`N = 100`): known when compiling
        # too (shapes of shared and local arrays), as Numba's constant
        # propagation knows them.
        self.constant_locals = _constant_locals(self.tree, self.params)
        self.written = set()
        # Whether the kernel prints (its launch then runs at once, as Numba's).
        self.prints = [False]  # a list: device functions inlined share it
        # In an inlined device function: the local its `return` assigns.
        self.result = None
        self.returned = "_lf_returned"  # set by a `return` inside a loop
        # Device functions being inlined (recursion is refused).
        self.inlining = []
        # Locals holding tuples (`bin = (i, j)`, `m, n = a.shape` kept
        # whole, `p = cuda.grid(2)`): each name's element locals. One dict
        # for the kernel and every device function inlined into it.
        self.tuples = dict(tuples or {})
        # The field names of namedtuple arguments (`p.x` is an element).
        self.fields = dict(fields or {})
        self.bound |= {e for elements in self.tuples.values() for e in elements}
        # The shapes of the shared and local arrays declared so far (known
        # when compiling: `a.size`, `a.shape[d]`, `len(a)` are constants).
        self.declared_shapes, self.declared_dtypes = {}, {}
        # Reshapes of arrays (`y = a.reshape(n, -1)`): each name's array
        # and the locals holding its lengths (`_reshapes`).
        self.reshapes = {}
        # Slices of arrays (`row = a[i, :]`, `part = tile[1:3]`): each name's
        # array and, per dimension of that array, ("fixed", index) or
        # ("range", start, step, length). One dict for the kernel and every
        # device function inlined into it.
        self.views = {}
        # Views of arrays as another integer dtype (`w = a.view(np.uint16)`,
        # `_byte_views`), and the dtypes of the array arguments (the launch's).
        self.byte_views, self.array_dtypes = {}, {}
        # How many `if` blocks deep the translation is (`branch_bodies`).
        self.branches = 0
        self.start_complex({**(complexes or {}), **self.global_complexes})

    def fail(self, node, what):
        where = _where(self.function, node if hasattr(node, "lineno") else self.tree)
        raise CompileError(
            f"{self.function.__name__} ({where}): {what} is not in the subset lazyfuse translates "
            f"({ast.unparse(node) if isinstance(node, ast.AST) else node})"
        )

    def stmt(self, s):
        done = self.complex_stmt(s)
        if done is not None:
            return done
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                self.fail(s, "assigning to several targets")
            target = s.targets[0]
            if isinstance(target, ast.Tuple) and isinstance(s.value, ast.Tuple):
                return self.unpack(target, s.value, s)
            parts = self.tuple_parts(s.value)
            if parts is not None:
                if isinstance(target, ast.Tuple):
                    return self.unpack_parts(target, parts, s)
                if isinstance(target, ast.Name):
                    count = self.vector_of(s.value)
                    done = self.assign_tuple(target.id, parts, s)
                    if count:
                        self.bind_vector(target.id, count)
                    return done
            if isinstance(target, ast.Name) and self.is_sliced(s.value):
                return self.make_view(target.id, s.value)
            if isinstance(target, ast.Name):
                done = self.array_method(target.id, s.value, s)
                if done is not None:
                    return done
            unpacking = isinstance(target, ast.Tuple)
            value = self.expr(s.value, tuples=True) if unpacking else self.expr(s.value)
            done = self.assign(target, value, s)
            return list(done[1]) if done[0] == "multi" else [done]
        if isinstance(s, ast.AugAssign):
            op = _BINOPS.get(type(s.op))
            if op is None:
                self.fail(s, "this augmented assignment")
            current = self.expr(s.target)
            done = self.assign(s.target, ("bin", op, current, self.expr(s.value)), s)
            return list(done[1]) if done[0] == "multi" else [done]
        if isinstance(s, ast.If):
            test = self.expr(s.test)
            truth = known_truth(test)
            if truth is not None:  # a dead branch: pruned (`_control.known_truth`)
                return self.body(s.body if truth else s.orelse)
            return [("if", test, *self.branch_bodies(s.body, s.orelse))]
        if isinstance(s, ast.While):
            return self.while_loop(s)
        if isinstance(s, ast.For):
            return self.for_loop(s)
        if (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                and isinstance(s.value.func, ast.Name) and s.value.func.id == "print"
                and "print" not in self.bound):
            return [self.print_call(s.value)]
        if (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                and isinstance(s.value.func, ast.Name) and s.value.func.id == "_lf_printf"):
            return [self.printf_call(s.value)]  # CUDA C's printf (`_c_printf`)
        if isinstance(s, ast.Expr):
            ufunc = _ufunc_on_arrays(s.value, self.is_array_name)
            if ufunc is not None:
                return self.ufunc_loop(s.value, ufunc)
            return [("expr", self.expr(s.value))]
        if isinstance(s, ast.FunctionDef) and not s.decorator_list:
            # A function defined here: a value known when compiling, inlined
            # where it is called, reading this scope's names.
            self.env[s.name] = _LocalFunction(s, self.function, self.env, self.bound)
            return []
        self.fail(s, type(s).__name__)

    def branch_bodies(self, *blocks):
        """The blocks of an ``if``, translated (``branches`` counts how deep
        in them the translation is: a tuple re-bound to another length
        there is refused)."""
        self.branches += 1
        try:
            return [self.body(block) for block in blocks]
        finally:
            self.branches -= 1

    def assign(self, target, value, node):
        if isinstance(target, ast.Name):
            if target.id in self.arrays:
                self.fail(node, f"re-binding the array argument '{target.id}'")
            if isinstance(value, tuple) and value[0] in ("shared_array", "local_array"):
                self.declared_shapes[target.id] = tuple(value[2])
                self.declared_dtypes[target.id] = value[1]
                return ("declare_array", target.id, value)
            return ("assign", target.id, value)
        if isinstance(target, ast.Subscript):
            stored = self.view_store(target, value)
            if stored is not None:
                return ("multi", stored)
            array, indices = self.subscript(target)
            if array in self.arrays:
                self.written.add(array)
            return ("store", array, indices, value)
        if isinstance(target, ast.Tuple):
            # x, y = cuda.grid(2)
            if (isinstance(value, tuple) and value[0] in ("grid", "gridsize")
                    and value[1] == len(target.elts)
                    and all(isinstance(t, ast.Name) for t in target.elts)):
                return ("multi", [("assign", t.id, ("grid_part", value[0], value[1], i))
                                  for i, t in enumerate(target.elts)])
            if isinstance(value, tuple) and value[0] == "let" and value[2][0] == "tuple":
                # a, b = device_function(...): its statements, then each value.
                statements, parts = value[1], value[2][1]
                if len(parts) != len(target.elts):
                    self.fail(node, f"unpacking {len(parts)} returned values into "
                                    f"{len(target.elts)} targets")
                out = list(statements)
                for t, part in zip(target.elts, parts):
                    done = self.assign(t, part, node)
                    out.extend(done[1] if done[0] == "multi" else [done])
                return ("multi", out)
            self.fail(node, "unpacking other than of cuda.grid/gridsize, of a device function's "
                            "tuple or of a tuple written out (a, b = x, y)")
        self.fail(node, "this assignment target")

    def unpack(self, target, value, node):
        """`a, b = x, y` (also `a, b = b, a` and array elements): every value
        first, into temporaries, then every target, as Python does."""
        if len(target.elts) != len(value.elts):
            self.fail(node, f"unpacking {len(value.elts)} values into {len(target.elts)} targets")
        if any(isinstance(t, (ast.Starred, ast.Tuple)) for t in target.elts):
            self.fail(node, "starred or nested unpacking")
        temps = [f"_lf_unpack{node.lineno}_{node.col_offset}_{i}" for i in range(len(value.elts))]
        out = [("assign", t, self.expr(v)) for t, v in zip(temps, value.elts)]
        for t, temp in zip(target.elts, temps):
            done = self.assign(t, ("var", temp), node)
            out.extend(done[1] if done[0] == "multi" else [done])
        return out

    def for_loop(self, s):
        if s.orelse:
            self.fail(s, "for … else")
        call = s.iter
        counted = (isinstance(call, ast.Call) and isinstance(call.func, (ast.Name, ast.Attribute))
                   and ast.unparse(call.func).split(".")[-1] in ("range", "prange"))
        if not counted:
            return self.for_each(s)
        if not isinstance(s.target, ast.Name):
            self.fail(s, "a loop over something other than one name")
        name = call.func.id if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) else (
            call.func.attr if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) else None
        )
        if name not in ("range", "prange") or call.keywords:
            self.fail(s, "a loop other than `for i in range(…)`")
        args = [self.expr(a) for a in call.args]
        if len(args) == 1:
            start, stop, step = ("const", 0), args[0], ("const", 1)
        elif len(args) == 2:
            (start, stop), step = args, ("const", 1)
        elif len(args) == 3:
            start, stop, step = args
        else:
            self.fail(s, "range with this many arguments")
        kind = "prange" if name == "prange" and self.gufunc else "for"
        if kind == "prange" and len(args) == 3:
            self.fail(s, "prange with a step")
        if not (step[0] == "const" and isinstance(step[1], int) and step[1] > 0):
            kind = "for_signed"  # a step that may be negative: counts down as Python's
        return self.counted_loop(s, kind, s.target.id, (start, stop, step))


    def subscript(self, node):
        element = self.tuple_element(node.value) if not isinstance(node.value, ast.Name) else None
        if element is not None and element[0] == "array":  # x[0][i]: an array in a tuple
            node = ast.Subscript(ast.Name(element[1], ast.Load()), node.slice, node.ctx)
        if not isinstance(node.value, ast.Name):
            self.fail(node, "indexing something other than a named array")
        index = node.slice
        items = index.elts if isinstance(index, ast.Tuple) else [index]
        for item in items:
            if isinstance(item, ast.Slice):
                self.fail(node, "a slice used as a value (assign it to a name, or pass it to a "
                                "device function)")
        return self.through_view(node.value.id, self.index_items(index), node)


    def expr(self, e, tuples=False):
        """``e`` translated; ``tuples``: a device function's tuple is
        allowed (it is being unpacked)."""
        if self.any_complex:
            value = self.complex_to_real(e)
            if value is not None:
                return value
        if isinstance(e, ast.Constant):
            if isinstance(e.value, bool):
                return ("const", int(e.value), "bool")
            if isinstance(e.value, (int, float)):
                return ("const", e.value)
            self.fail(e, "this constant")
        if isinstance(e, ast.Name):
            if e.id in self.arrays:
                return ("array", e.id)
            if e.id in ("True", "False"):
                return ("const", int(e.id == "True"), "bool")
            if e.id not in self.bound:
                return self.global_value(e)
            if e.id in self.tuples:
                self.fail(e, f"the tuple '{e.id}' used as one value (index it or unpack it)")
            return ("var", e.id)
        if isinstance(e, ast.BinOp):
            op = _BINOPS.get(type(e.op))
            if op is None:
                self.fail(e, "this operator")
            return ("bin", op, self.expr(e.left), self.expr(e.right))
        if isinstance(e, ast.UnaryOp):
            if isinstance(e.op, ast.USub):
                return ("unary", "negative", self.expr(e.operand))
            if isinstance(e.op, ast.UAdd):
                return self.expr(e.operand)
            if isinstance(e.op, ast.Not):
                return ("unary", "logical_not", self.expr(e.operand))
            if isinstance(e.op, ast.Invert):
                return ("unary", "invert", self.expr(e.operand))
        if isinstance(e, ast.Compare):
            folded = self.folded_compare(e)
            if folded is not None:
                return folded
            enum_result = self.enum_compare(e)
            if enum_result is not None:
                return enum_result
            parts, left = [], self.expr(e.left)
            for op, right in zip(e.ops, e.comparators):
                name = _COMPARE.get(type(op))
                if name is None:
                    self.fail(e, "this comparison")
                right = self.expr(right)
                parts.append(("bin", name, left, right))
                left = right
            result = parts[0]
            for p in parts[1:]:
                result = ("bin", "logical_and", result, p)
            return result
        if isinstance(e, ast.BoolOp):
            return self.bool_op(e)
        if isinstance(e, ast.IfExp):
            test, body, orelse = self.expr(e.test), self.expr(e.body), self.expr(e.orelse)
            if not (_may_fault(body) or _may_fault(orelse)):
                return ("select", test, body, orelse)
            # Only the branch taken runs, as in Python: `a[i] if i < n else 0`.
            value = self.fresh("value")
            return ("let", [("hoist", [value]),
                            ("if", test, [("assign", value, body)], [("assign", value, orelse)])],
                    ("var", value))
        if isinstance(e, ast.Subscript):
            # arr.shape[d]
            if isinstance(e.value, ast.Attribute) and e.value.attr == "shape" and isinstance(
                e.value.value, ast.Name
            ):
                dim = e.slice
                negative = isinstance(dim, ast.UnaryOp) and isinstance(dim.op, ast.USub)
                value = dim.operand if negative else dim
                if not (isinstance(value, ast.Constant) and type(value.value) is int):
                    known, constant = self.static_value(e.slice)
                    if known and type(constant) is int:
                        return self.dim_length(e.value.value.id, constant, e)
                    return self.shape_at(e.value.value.id, self.expr(e.slice), e)
                dim = -value.value if negative else value.value
                return self.dim_length(e.value.value.id, dim, e)
            viewed = self.view_element(e)  # `a.view(dtype)[k]` (`_byte_views`)
            if viewed is not None:
                return viewed
            element = self.tuple_element(e)
            if element is not None:
                return element
            array, indices = self.subscript(e)
            return ("load", array, indices)
        if isinstance(e, ast.Attribute):
            return self.attribute(e)
        if isinstance(e, ast.Call):
            value = self.call(e)
            if value[0] == "let" and value[2][0] == "tuple" and not tuples:
                self.fail(e, "a device function's tuple used as one value (unpack it: "
                             "a, b = f(...))")
            return value
        self.fail(e, type(e).__name__)

    def bool_op(self, e):
        """``and``/``or`` as a bool. An operand that reads memory or calls a
        device function runs only when the ones before it did not decide,
        as in Python: `i < n and a[i] > 0` reads no element past `n`."""
        name = "logical_and" if isinstance(e.op, ast.And) else "logical_or"
        values = [self.expr(v) for v in e.values]
        if not any(_may_fault(v) for v in values[1:]):
            result = values[0]
            for v in values[1:]:
                result = ("bin", name, result, v)
            return result
        value = self.fresh("value")
        undecided = ("var", value) if name == "logical_and" else ("unary", "logical_not", ("var", value))
        rest = []  # `if undecided: value = v; <rest>`, innermost first
        for v in reversed(values[1:]):
            rest = [("if", undecided, [("assign", value, ("cast", "bool", v))] + rest, [])]
        return ("let", [("assign", value, ("cast", "bool", values[0]))] + rest, ("var", value))

    def fresh(self, kind):
        """A fresh local's name (no Python name can clash with it)."""
        self.sites[0] += 1
        return f"_lf_{kind}{self.sites[0]}"

    def global_value(self, e):
        """A name the function does not bind: a global or closure number
        (a constant, as Numba freezes it), else an error naming it."""
        if e.id not in self.env:
            self.fail(e, f"the name '{e.id}', defined nowhere (not an argument, a local or a global)")
        value = self.env[e.id]
        if not _constant(value):
            self.fail(e, f"the global '{e.id}' (a {type(value).__name__}; only numbers are constants "
                         "in kernels: pass arrays as arguments)")
        if isinstance(value, (bool, __import__("numpy").bool_)):
            return ("const", int(value), "bool")
        return ("const", value.item() if hasattr(value, "item") else value)

    def attribute(self, e):
        element = self.tuple_element(e)
        if element is not None:
            return element
        chain = ast.unparse(e).split(".")
        if len(chain) == 3 and chain[1] in SPECIAL and chain[2] in ("x", "y", "z"):
            return ("special", chain[1], chain[2])
        if len(chain) == 2 and chain[1] == "size" and chain[0] in self.declared_shapes:
            return ("const", int(np.prod(self.declared_shapes[chain[0]], dtype=np.int64)))
        if len(chain) == 2 and chain[1] == "size" and (chain[0] in self.views or chain[0] in self.reshapes):
            size = ("const", 1)
            for d in range(self.ndim_of(chain[0])):
                size = ("bin", "multiply", size, self.dim_length(chain[0], d, e))
            return size
        if len(chain) == 2 and chain[1] == "size" and chain[0] in self.arrays:
            return ("size", chain[0])
        if chain == ["cuda", "warpsize"]:
            return ("const", 32)
        if chain == ["cuda", "laneid"]:
            return self.lane_id()
        if len(chain) == 2 and chain[0] == "math" and chain[1] in ("pi", "e", "tau", "inf", "nan"):
            import math
            return ("const", getattr(math, chain[1]))
        known, value = self.static_value(e)
        if known and _constant(value):  # np.nan, a module's or a class's number
            return self.constant_expr(value, e)
        self.fail(e, "this attribute")


    def kernel(self):
        body = (self.complex_prelude + self.start_of_function(self.tree)
                + self.body(self.tree.body))
        hoisted = self.hoisted_parts(self.function_scoped())
        return [("hoist", hoisted)] + body if hoisted else body

    def element_function(self, inputs, output):
        """The body of a scalar function (``@vectorize`` code that tracing
        cannot express) as a gufunc's over ``()`` cores: each parameter a
        local copied from its input (so the body may rebind it), the value
        it returns stored to ``output``."""
        self.result = "_lf_result"
        body = self.start_of_function(self.tree) + self.body(self.tree.body)
        hoisted = sorted(set(self.hoisted_parts(self.function_scoped())) | {self.result})
        copies = [("assign", p, ("var", i)) for p, i in zip(self.params, inputs)]
        store = ("store", output, [], ("var", self.result))
        return [("hoist", hoisted)] + copies + body + [store]

    def function_scoped(self):
        """Names first assigned inside an `if` or loop body: Python gives
        them the whole function as their scope, so the replay declares them
        at the top (with the type of their first assignment) and they stay
        visible after the block."""
        def assigned(stmt):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else (
                [stmt.target] if isinstance(stmt, ast.AugAssign) else [])
            for t in targets:
                for node in ast.walk(t):
                    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                        yield node.id, stmt.lineno

        top, nested = {}, {}
        for stmt in self.tree.body:
            for name, line in assigned(stmt):
                top.setdefault(name, line)
            if isinstance(stmt, (ast.If, ast.For, ast.While)):
                for inner in ast.walk(stmt):
                    if inner is not stmt:
                        for name, line in assigned(inner):
                            nested[name] = min(line, nested.get(name, line))
        return sorted(
            name for name, line in nested.items()
            if name not in self.arrays and line < top.get(name, float("inf"))
        )
