"""Kernels written in Python (Numba's ``@cuda.jit``, and ``@guvectorize``
bodies): the function's source is read with ``ast`` and the subset the
tutorials use is translated into a tree of tuples that the native side
replays on lazyfuse's kernel builder (``_native.build_kernel``).

The subset: ``cuda.grid``, ``cuda.gridsize``, ``cuda.threadIdx/blockIdx/
blockDim/gridDim.x/.y/.z``; ``if``/``elif``/``else``, ``for … in range(…)``
(and ``prange`` in gufuncs), ``while``, ``break`` and ``continue``
(``_control.py``); assignments and augmented
assignments to locals and array elements; arithmetic, comparisons,
``and``/``or``/``not`` and ``a if c else b`` (short-circuiting, as in
Python, where an operand reads memory); calls (``_calls.py``): ``math.*``,
``abs``, ``min``/``max``, ``round``, ``float``/``int``/``bool`` and Numba's
or NumPy's type objects (``float32(x)``), ``cuda.selp``; ``arr.shape[d]``,
``arr.size``, ``len(arr)``, ``cuda.laneid``, ``cuda.warpsize``;
``cuda.shared.array``, ``cuda.local.array``, ``cuda.syncthreads()``,
``cuda.atomic.add/max/min/compare_and_swap``; calls of
``@cuda.jit(device=True)`` functions (inlined: the same subset, with
``return`` of a value or of a tuple (``x, y = f(...)``) anywhere, also
inside loops; they may call other device functions, not themselves, and
write the arrays they are given); a
bare ``return`` that ends the thread's work; ``range`` with a
step of either sign; global and closure numbers, read as constants (Numba
freezes them). A local's dtype is that of all the values assigned to it
(Numba's unification: ``s = 0`` then ``s += 0.5`` is a float64) and, as in
Python, it is visible in the whole function, also when first assigned
inside an ``if``/loop body (it is zero until assigned). Anything else
raises ``CompileError`` naming the file, the line and the construct.
"""

import ast
import collections
import copy
import inspect
import textwrap

import numpy as np

from .errors import CompileError
from ._calls import Calls
from ._control import ControlFlow, has_return, own_nodes

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
_SPECIAL = {"threadIdx", "blockIdx", "blockDim", "gridDim"}



class DeviceFunction:
    """A ``@cuda.jit(device=True)`` function: inlined where it is called.
    Its parameters are positional, the last may be ``*args``."""

    #: Names of an enclosing function the body reads (none: a module's
    #: function reads globals).
    outer = frozenset()

    def __init__(self, function):
        self.function = function
        self.name = function.__name__
        self.__doc__ = function.__doc__
        self.tree = _parse(function)
        self.params, self.vararg = _parameters(self.tree, function)

    def scope(self):
        """The values the body's free names read: globals and closure."""
        env = dict(self.function.__globals__)
        if self.function.__closure__:
            names = self.function.__code__.co_freevars
            env.update({n: c.cell_contents for n, c in zip(names, self.function.__closure__)})
        return env

    def __call__(self, *args):
        return self.function(*args)


class _LocalFunction:
    """A function defined inside a kernel or device function (``def
    inner(z): return y + z``): inlined where called (also where it is
    passed to), its free names read in the scope that defined it."""

    def __init__(self, node, function, env, outer):
        self.function, self.name, self.tree = function, node.name, node
        self.params, self.vararg = _parameters(node, function)
        self.env, self.outer = env, frozenset(outer)

    def scope(self):
        """The defining scope's values."""
        return dict(self.env)


def _parameters(tree, function):
    """The positional parameters of a function's tree and its ``*args``
    name (or None); anything else is refused. Defaults must be numbers
    (``_defaults``)."""
    args = tree.args
    if args.kwarg or args.kwonlyargs or args.posonlyargs:
        raise CompileError(
            f"device function '{tree.name}' ({_where(function, tree)}): only positional "
            "parameters (with defaults) and *args can be inlined"
        )
    _defaults(tree, function)
    return [a.arg for a in args.args], args.vararg.arg if args.vararg else None


def _defaults(tree, function):
    """``{parameter: default}`` of a function's tree: its defaults must be
    numbers (or tuples of them), known when compiling."""
    args = tree.args
    found = {}
    for param, node in zip(args.args[len(args.args) - len(args.defaults):], args.defaults):
        try:
            found[param.arg] = ast.literal_eval(node)
        except ValueError:
            raise CompileError(
                f"device function '{tree.name}' ({_where(function, tree)}): the default of "
                f"'{param.arg}' is not a number ({ast.unparse(node)})"
            ) from None
    return found


class _Renamer(ast.NodeTransformer):
    """Renames the names of a device function's body for one call site."""

    def __init__(self, names):
        self.names = names

    def visit_Name(self, node):
        if node.id in self.names:
            return ast.copy_location(ast.Name(self.names[node.id], node.ctx), node)
        return node


class _Raises(ast.NodeTransformer):
    """``raise E`` / ``raise E("message")`` as a call recording it (for a
    kernel compiled with ``debug=True``) and a ``return``: the raising
    thread stops, as in Numba (a device function's raise returns from it)."""

    def __init__(self, translator):
        self.translator = translator

    def visit_FunctionDef(self, node):
        return node if node is not self.root else self.generic_visit(node)

    def visit_Raise(self, node):
        exc = node.exc
        call = exc if isinstance(exc, ast.Call) else None
        name = call.func if call else exc
        known, cls = self.translator.static_value(name)
        if not known and isinstance(name, ast.Name):  # ValueError and the other builtins
            import builtins
            cls = getattr(builtins, name.id, None)
            known = cls is not None
        if not (known and isinstance(cls, type) and issubclass(cls, BaseException)):
            self.translator.fail(node, "raising other than an exception class")
        message = ""
        if call is not None and call.args:
            first = call.args[0]
            known, message = ((True, first.value) if isinstance(first, ast.Constant)
                              else self.translator.static_value(first))
            if not (known and isinstance(message, str)) or len(call.args) > 1 or call.keywords:
                self.translator.fail(node, "an exception's arguments other than one constant string")
        self.translator.raises.append((cls, message))
        record = ast.Expr(ast.Call(ast.Name("_lf_raise", ast.Load()),
                                   [ast.Constant(len(self.translator.raises))], []))
        return [ast.copy_location(record, node), ast.copy_location(ast.Return(None), node)]

    def apply(self, tree):
        self.root = tree
        return ast.fix_missing_locations(self.visit(tree))


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


#: The hidden array a kernel compiled with ``debug=True`` reports a raise
#: in: the exception's code, then the raising thread's and block's indices.
RAISED = "_lf_raised"


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


def _binds(params, tree):
    """The names a function binds: its parameters and what it assigns."""
    return set(params) | {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def _parse(function):
    """The function's definition, its line numbers those of its file."""
    try:
        lines, first_line = inspect.getsourcelines(function)
    except (OSError, TypeError) as e:
        raise CompileError(
            f"cannot read the source of {function!r}: {e} (lazyfuse translates kernels from their "
            "source: define them in a file or a notebook cell, not in exec() or on standard input)"
        ) from None
    tree = ast.parse(textwrap.dedent("".join(lines)))
    ast.increment_lineno(tree, first_line - 1)
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef):
        raise CompileError(f"{function!r} is not a plain function")
    return node


def _where(function, node):
    """``file, line N`` of ``node`` (line numbers are the file's)."""
    try:
        file = inspect.getsourcefile(function) or "<unknown>"
    except TypeError:
        file = "<unknown>"
    return f"{file}, line {getattr(node, 'lineno', '?')}"


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


#: What a translated ``raise`` calls (``_Raises``).
_RAISE = type("_RaiseMarker", (), {"_lf_path": "lazyfuse.raise"})()

#: Functions inlined as device functions (see ``_as_device_function``), made once.
_LIBRARY = {}


def _as_device_function(value):
    """``value`` as a device function to inline: a ``@cuda.jit(device=True)``
    function, a ``@cuda.jit`` kernel called from another kernel (Numba
    compiles it as a device function there), or one of ``_kernel_math``'s
    functions; None for anything else."""
    if isinstance(value, (DeviceFunction, _LocalFunction)):
        return value
    function = getattr(value, "py_func", None) if hasattr(value, "forall") else None
    if function is None and getattr(value, "__module__", None) == __package__ + "._kernel_math":
        function = value
    if function is None:
        return None
    if function not in _LIBRARY:
        _LIBRARY[function] = DeviceFunction(function)
    return _LIBRARY[function]


def _returns_value(tree):
    """True when a `return <value>` is in the function (not in a nested one)."""
    return any(isinstance(n, ast.Return) and n.value is not None for n in own_nodes(tree))


def _tuple_arity(tree):
    """The length of the tuples a function returns (``return x, y``), when
    every ``return <value>`` returns a tuple of that length; else None."""
    values = [n.value for n in own_nodes(tree) if isinstance(n, ast.Return) and n.value is not None]
    lengths = {len(v.elts) if isinstance(v, ast.Tuple) else None for v in values}
    return lengths.pop() if len(lengths) == 1 and None not in lengths else None


def _may_fault(node):
    """True when a translated expression reads memory or calls a device
    function: evaluating it where Python would not could read out of
    bounds or write."""
    if not isinstance(node, (tuple, list)):
        return False
    if isinstance(node, tuple) and node and node[0] in ("load", "atomic", "let"):
        return True
    return any(_may_fault(child) for child in node)


def _rebinds(tree, name):
    """True when the function assigns to `name`."""
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
               for n in ast.walk(tree))


class Translator(ControlFlow, Calls):
    """Translates one function; ``arrays`` names its array arguments."""

    def __init__(self, function, arrays, gufunc=False, ndims=None, tuples=None, fields=None,
                 dynamic_shared=None, debug=False):
        self.function = function
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
        # Names the function binds: they are its locals, never globals.
        self.bound = _binds(self.params, self.tree)
        self.tree = self.global_arrays(self.tree)
        self.bound = _binds(self.params, self.tree)
        self.env.setdefault("_lf_raise", _RAISE)
        self.constant_locals = {}
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
        # Device functions being inlined (recursion is refused) and the
        # number of call sites so far (each gets locals of its own).
        self.inlining = []
        self.sites = [0]
        # Locals holding tuples (`bin = (i, j)`, `m, n = a.shape` kept
        # whole, `p = cuda.grid(2)`): each name's element locals. One dict
        # for the kernel and every device function inlined into it.
        self.tuples = dict(tuples or {})
        # The field names of namedtuple arguments (`p.x` is an element).
        self.fields = dict(fields or {})
        self.bound |= {e for elements in self.tuples.values() for e in elements}
        # The shapes of the shared and local arrays declared so far (known
        # when compiling: `a.size`, `a.shape[d]`, `len(a)` are constants).
        self.declared_shapes = {}
        # Slices of arrays (`row = a[i, :]`, `part = tile[1:3]`): each name's
        # array and, per dimension of that array, ("fixed", index) or
        # ("range", start, step, length). One dict for the kernel and every
        # device function inlined into it.
        self.views = {}

    def fail(self, node, what):
        where = _where(self.function, node if hasattr(node, "lineno") else self.tree)
        raise CompileError(
            f"{self.function.__name__} ({where}): {what} is not in the subset lazyfuse translates "
            f"({ast.unparse(node) if isinstance(node, ast.AST) else node})"
        )

    # --- statements ------------------------------------------------------
    def stmt(self, s):
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
                    return self.assign_tuple(target.id, parts, s)
            if isinstance(target, ast.Name) and self.is_sliced(s.value):
                return self.make_view(target.id, s.value)
            unpacking = isinstance(target, ast.Tuple)
            value = self.expr(s.value, tuples=True) if unpacking else self.expr(s.value)
            done = self.assign(target, value, s)
            return list(done[1]) if done[0] == "multi" else [done]
        if isinstance(s, ast.AugAssign):
            op = _BINOPS.get(type(s.op))
            if op is None:
                self.fail(s, "this augmented assignment")
            current = self.expr(s.target)
            return [self.assign(s.target, ("bin", op, current, self.expr(s.value)), s)]
        if isinstance(s, ast.If):
            return [("if", self.expr(s.test), self.body(s.body), self.body(s.orelse))]
        if isinstance(s, ast.While):
            return self.while_loop(s)
        if isinstance(s, ast.For):
            return self.for_loop(s)
        if (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                and isinstance(s.value.func, ast.Name) and s.value.func.id == "print"
                and "print" not in self.bound):
            return [self.print_call(s.value)]
        if isinstance(s, ast.Expr):
            return [("expr", self.expr(s.value))]
        if isinstance(s, ast.FunctionDef) and not s.decorator_list:
            # A function defined here: a value known when compiling, inlined
            # where it is called, reading this scope's names.
            self.env[s.name] = _LocalFunction(s, self.function, self.env, self.bound)
            return []
        self.fail(s, type(s).__name__)

    def assign(self, target, value, node):
        if isinstance(target, ast.Name):
            if target.id in self.arrays:
                self.fail(node, f"re-binding the array argument '{target.id}'")
            if isinstance(value, tuple) and value[0] in ("shared_array", "local_array"):
                self.declared_shapes[target.id] = tuple(value[2])
                return ("declare_array", target.id, value)
            return ("assign", target.id, value)
        if isinstance(target, ast.Subscript):
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

    def for_each(self, s):
        """``for v in a``, ``for i, v in enumerate(a)``, ``for x, y in
        zip(a, b)`` (nested as Python allows) over 1-d arrays: a counted
        loop over the shortest length whose body first binds the targets
        to the elements. Over tuples (known in length when compiling) the
        loop is unrolled, one copy of the body per element."""
        length, element, count = self.iteration(s.iter, s)

        def bind(target, value):
            if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
                if len(target.elts) != len(value.elts):
                    self.fail(s, f"unpacking {len(value.elts)} values into {len(target.elts)} targets")
                return [a for t, v in zip(target.elts, value.elts) for a in bind(t, v)]
            return [ast.Assign(targets=[target], value=value)]

        if count is not None:
            if any(isinstance(n, (ast.Break, ast.Continue)) for b in s.body for n in ast.walk(b)):
                self.fail(s, "break or continue in a loop over a tuple")
            copies = []
            for k in range(count):
                copies += [ast.fix_missing_locations(ast.copy_location(a, s))
                           for a in bind(s.target, element(k))] + copy.deepcopy(s.body)
            return self.body(copies)
        index = self.fresh("item")
        loop = ast.For(
            target=ast.Name(index, ast.Store()),
            iter=ast.Call(ast.Name("range", ast.Load()), [length], []),
            body=bind(s.target, element(index)) + s.body, orelse=[])
        loop = ast.fix_missing_locations(ast.copy_location(loop, s))
        self.bound.add(index)
        return self.for_loop(loop)

    def iteration(self, iterable, loop):
        """``(length, element, count)`` of what a loop iterates: the length
        as an expression, a function from the index (a local's name, or a
        constant) to the element, and the number of elements where it is
        known when compiling (a tuple), else None."""
        name = lambda n: ast.Name(n, ast.Load())
        at = lambda i: ast.Constant(i) if isinstance(i, int) else name(i)
        parts = None if isinstance(iterable, ast.Call) else self.tuple_parts(iterable)
        if parts is not None:
            return (ast.Constant(len(parts)),
                    lambda i: ast.Subscript(iterable, at(i), ast.Load()), len(parts))
        if isinstance(iterable, ast.Name) and (iterable.id in self.arrays or iterable.id in self.views):
            if (self.ndim_of(iterable.id) or 1) != 1:
                self.fail(loop, "a loop over the rows of an array of other than one dimension")
            return (ast.Call(name("len"), [iterable], []),
                    lambda i: ast.Subscript(iterable, at(i), ast.Load()), None)
        if (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name)
                and not iterable.keywords and iterable.func.id not in self.bound):
            if iterable.func.id == "enumerate" and len(iterable.args) == 1:
                length, element, count = self.iteration(iterable.args[0], loop)
                return length, lambda i: ast.Tuple([at(i), element(i)], ast.Load()), count
            if iterable.func.id == "zip" and iterable.args:
                parts = [self.iteration(a, loop) for a in iterable.args]
                counts = [p[2] for p in parts]
                if any(c is None for c in counts) and any(c is not None for c in counts):
                    self.fail(loop, "zip of tuples and arrays")
                lengths = [p[0] for p in parts]
                length = lengths[0] if len(lengths) == 1 else ast.Call(name("min"), lengths, [])
                count = None if counts[0] is None else min(counts)
                return length, lambda i: ast.Tuple([p[1](i) for p in parts], ast.Load()), count
        self.fail(loop, "a loop other than over range(…), an array, a tuple, enumerate(…) or zip(…)")

    # --- expressions -----------------------------------------------------
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

    def raised(self, code):
        """The record of exception ``code``: where the kernel reports them,
        the first raising thread stores the code and its thread and block
        indices in the launch's hidden ``_lf_raised`` array."""
        if not self.debug:
            return ("const", 0)
        self.arrays.add(RAISED)
        self.ndims[RAISED] = 1
        self.written.add(RAISED)
        old = self.fresh("raised")
        ids = [("special", kind, d) for kind in ("threadIdx", "blockIdx") for d in "xyz"]
        stores = [("store", RAISED, [("const", i + 1)], ("cast", "int64", v)) for i, v in enumerate(ids)]
        return ("let", [
            ("assign", old, ("atomic", "cas", RAISED, [("const", 0)], [("const", 0), ("const", code)])),
            ("if", ("bin", "equal", ("var", old), ("const", 0)), stores, []),
        ], ("const", 0))

    def print_call(self, call):
        """``print(a, b, ...)``: one line per thread, the values separated
        by spaces as Python writes them (tuples in parentheses, strings as
        they are, bools as True/False, floats with six decimals as CUDA's
        printf)."""
        if call.keywords:
            self.fail(call, "print with keyword arguments")
        self.prints[0] = True
        pieces = []
        for i, arg in enumerate(call.args):
            if i:
                pieces.append(("text", " "))
            pieces += self.printed(arg)
        return ("print", pieces)

    def printed(self, node):
        """The pieces that print one argument."""
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bool)) or (
                isinstance(node, ast.Name) and node.id in ("True", "False")):
            return [("text", str(node.value if isinstance(node, ast.Constant) else node.id))]
        chain = ast.unparse(node).split(".")
        if len(chain) == 2 and chain[0] == "cuda" and chain[1] in _SPECIAL:
            parts = [ast.parse(f"cuda.{chain[1]}.{d}", mode="eval").body for d in "xyz"]
            return self.printed_tuple([self.expr(p) for p in parts], node)
        if isinstance(node, ast.Tuple):  # written out: each element as print writes it
            pieces = [("text", "(")]
            for i, element in enumerate(node.elts):
                pieces += ([("text", ", ")] if i else []) + self.printed(element)
            return pieces + [("text", ",)" if len(node.elts) == 1 else ")")]
        parts = self.tuple_parts(node)
        if parts is not None:
            return self.printed_tuple(parts, node)
        return [self.expr(node)]

    def printed_tuple(self, parts, node):
        """A tuple's pieces: ``(a, b)``, ``(a,)``, nested tuples within."""
        pieces = [("text", "(")]
        for i, part in enumerate(parts):
            if i:
                pieces.append(("text", ", "))
            if part[0] == "var" and part[1] in self.tuples:
                pieces += self.printed(ast.Name(part[1], ast.Load()))
            elif part[0] == "array":
                self.fail(node, "printing an array")
            else:
                pieces.append(part)
        pieces.append(("text", ",)" if len(parts) == 1 else ")"))
        return pieces

    # --- slices of arrays ------------------------------------------------
    def is_sliced(self, node):
        """Whether ``node`` is ``a[...]`` of an array with a slice in it."""
        if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)):
            return False
        name = node.value.id
        if not (name in self.arrays or name in self.declared_shapes or name in self.views):
            return False
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return any(isinstance(item, ast.Slice) for item in items)

    def ndim_of(self, name):
        """The dimensions of an array, a shared or local array, or a slice."""
        if name in self.views:
            return sum(d[0] == "range" for d in self.views[name][1])
        if name in self.declared_shapes:
            return len(self.declared_shapes[name])
        return self.ndims.get(name)

    def dim_length(self, name, dim, node):
        """The length of axis ``dim`` of a named array or slice."""
        if name in self.views:
            ranges = [d for d in self.views[name][1] if d[0] == "range"]
            if not -len(ranges) <= dim < len(ranges):
                self.fail(node, f"{name}.shape[{dim}] of a slice of {len(ranges)} dimensions")
            return ranges[dim][3]
        declared = self.declared_shapes.get(name)
        if declared is not None:
            return ("const", declared[dim])
        return ("shape", name, dim)

    def through_view(self, name, indices, node):
        """``(array, indices)`` of an element of ``name``: a slice's indices
        mapped onto its array's."""
        if name not in self.views:
            return name, indices
        base, dims = self.views[name]
        ranges = sum(d[0] == "range" for d in dims)
        if len(indices) != ranges:
            self.fail(node, f"a slice of {ranges} dimensions indexed with {len(indices)} indices")
        given, out = iter(indices), []
        for d in dims:
            if d[0] == "fixed":
                out.append(d[1])
            else:
                i = next(given)
                out.append(("bin", "add", d[1], ("bin", "multiply", i, ("const", d[2]))))
        return base, out

    def make_view(self, name, node):
        """``name = a[<slices>]``: registers the slice; the statements that
        compute its starts and lengths once, where it is made."""
        source = node.value.id
        base, dims = self.views.get(source, (source, None))
        ndim = self.ndim_of(source)
        if ndim is None:
            self.fail(node, "a slice of an array of unknown dimensions")
        if dims is None:
            dims = [("range", ("const", 0), 1, self.dim_length(source, d, node)) for d in range(ndim)]
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(items) > ndim:
            self.fail(node, f"{len(items)} indices of an array of {ndim} dimensions")
        ranges = [i for i, d in enumerate(dims) if d[0] == "range"]
        items = list(items) + [ast.Slice()] * (len(ranges) - len(items))
        statements, new = [], list(dims)
        for position, item in zip(ranges, items):
            _, start0, step0, length0 = dims[position]
            if not isinstance(item, ast.Slice):
                at = self.fresh("at")
                statements.append(("assign", at, self.expr(item)))
                new[position] = ("fixed", ("bin", "add", start0, ("bin", "multiply", ("var", at),
                                                                     ("const", step0))))
                continue
            known, step = self.static_value(item.step) if item.step else (True, 1)
            if not known or not isinstance(step, int) or step == 0:
                self.fail(node, "a slice step other than a non-zero constant")
            last = ("bin", "subtract", length0, ("const", 1))
            if step > 0:
                start = self.slice_bound(item.lower, ("const", 0), length0, ("const", 0), length0)
                stop = self.slice_bound(item.upper, length0, length0, ("const", 0), length0)
                span = ("bin", "subtract", stop, start)
            else:  # counting down: from the last element to before the first
                start = self.slice_bound(item.lower, last, length0, ("const", -1), last)
                stop = self.slice_bound(item.upper, ("const", -1), length0, ("const", -1), last)
                span = ("bin", "subtract", start, stop)
            first, count = self.fresh("start"), self.fresh("length")
            statements += [
                ("assign", first, start),
                ("assign", count, ("bin", "maximum", ("const", 0), ("bin", "floor_divide",
                 ("bin", "add", span, ("const", abs(step) - 1)), ("const", abs(step))))),
            ]
            new[position] = ("range", ("bin", "add", start0, ("bin", "multiply", ("var", first),
                                                              ("const", step0))),
                             step0 * step, ("var", count))
        self.views[name] = (base, new)
        return statements

    def slice_bound(self, bound, default, length, low, high):
        """A slice's start or stop as Python reads it: negative counts from
        the end, then clipped to ``[low, high]``."""
        if bound is None:
            return default
        value = self.expr(bound)
        fromend = ("bin", "add", value, length)
        value = ("select", ("bin", "less", value, ("const", 0)), fromend, value)
        return ("bin", "minimum", ("bin", "maximum", value, low), high)

    def index_items(self, index):
        """The translated indices of ``index``: a tuple written out, a
        tuple local or a compile-time tuple (one index each), else one."""
        if isinstance(index, ast.Tuple):
            return [self.expr(i) for i in index.elts]
        parts = self.tuple_parts(index)
        return parts if parts is not None else [self.expr(index)]

    # --- tuples ----------------------------------------------------------
    def tuple_parts(self, node):
        """The translated elements of a tuple-valued expression that is not
        written out: a tuple local, ``a.shape``, ``cuda.grid(n)`` for n ≥ 2,
        a compile-time tuple, or a device function returning a tuple; None
        for anything else."""
        if isinstance(node, ast.Name) and node.id in self.tuples:
            return [("array", p) if p in self.arrays else ("var", p) for p in self.tuples[node.id]]
        if isinstance(node, (ast.Subscript, ast.Attribute)):
            element = self.tuple_element(node)
            if element is not None and element[0] == "var" and element[1] in self.tuples:
                return self.tuple_parts(ast.Name(element[1], ast.Load()))
        if isinstance(node, ast.Tuple):
            known, value = self.static_value(node)
            if known:
                return [self.constant_expr(v, node) for v in value]
            return [self.expr(e) for e in node.elts]
        if (isinstance(node, ast.Attribute) and node.attr == "shape" and isinstance(node.value, ast.Name)
                and (node.value.id in self.declared_shapes or node.value.id in self.views)):
            name = node.value.id
            return [self.dim_length(name, d, node) for d in range(self.ndim_of(name))]
        if (isinstance(node, ast.Attribute) and node.attr == "shape"
                and isinstance(node.value, ast.Name) and node.value.id in self.ndims):
            return [("shape", node.value.id, d) for d in range(self.ndims[node.value.id])]
        known, value = self.static_value(node) if isinstance(node, (ast.Name, ast.Tuple)) else (False, None)
        if known and isinstance(value, tuple):
            return [self.constant_expr(v, node) for v in value]
        if isinstance(node, ast.Call):
            path = self.intrinsic_path(node.func) or ast.unparse(node.func)
            if path.split(".")[-1] in ("grid", "gridsize") and path != "grid":
                value = self.call(node)
                if value[0] in ("grid", "gridsize") and value[1] >= 2:
                    return [("grid_part", value[0], value[1], i) for i in range(value[1])]
                return None
            target = self.env.get(path) if isinstance(node.func, ast.Name) else None
            if self.inlines(target) and _tuple_arity(_as_device_function(target).tree):
                return self.expr(node, tuples=True)
        return None

    def tuple_element(self, node):
        """The element ``t[i]`` (a constant ``i``) or ``t.field`` (of a
        namedtuple argument) of a tuple, or None when ``node`` is neither."""
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            names = self.fields.get(node.value.id)
            if names and node.attr in names:
                return self.tuple_parts(node.value)[names.index(node.attr)]
            return None
        if not isinstance(node, ast.Subscript) or (
                isinstance(node.value, ast.Name) and node.value.id in self.arrays):
            return None
        if isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
            return None  # `a.shape[d]`: read by `expr`, which names a bad axis
        parts = self.tuple_parts(node.value)
        if parts is None:
            return None
        known, i = self.static_value(node.slice)
        if isinstance(node.slice, ast.UnaryOp) and isinstance(node.slice.op, ast.USub):
            known, i = self.static_value(node.slice.operand)
            i = -i if known else i
        if not known or isinstance(i, bool) or not isinstance(i, int) or not -len(parts) <= i < len(parts):
            self.fail(node, f"an element of a tuple of {len(parts)} other than at a constant index")
        return parts[i]

    def assign_tuple(self, name, parts, node):
        """``name = <tuple>``: each element into a local of its own (every
        value first, as ``unpack`` does, so ``t = (t[1], t[0])`` swaps)."""
        if isinstance(parts, tuple):  # a device function's ("let", statements, tuple)
            statements, parts = list(parts[1]), parts[2][1]
        else:
            statements = []
        if name in self.arrays:
            self.fail(node, f"re-binding the array argument '{name}'")
        known = self.tuples.get(name)
        if known is not None and len(known) != len(parts):
            self.fail(node, f"re-binding the tuple '{name}' of {len(known)} values to {len(parts)}")
        elements = known or [f"{name}__lf{i}" for i in range(len(parts))]
        temps = [self.fresh("element") for _ in parts]
        statements += [("assign", t, p) for t, p in zip(temps, parts)]
        statements += [("assign", e, ("var", t)) for e, t in zip(elements, temps)]
        self.tuples[name] = elements
        self.bound.update(elements)
        return statements

    def unpack_parts(self, target, parts, node):
        """``a, b = <tuple>`` for the tuple values of ``tuple_parts``."""
        if isinstance(parts, tuple):  # a device function's tuple: assign() unpacks it
            done = self.assign(target, parts, node)
            return list(done[1]) if done[0] == "multi" else [done]
        if len(parts) != len(target.elts):
            self.fail(node, f"unpacking {len(parts)} values into {len(target.elts)} targets")
        temps = [self.fresh("element") for _ in parts]
        out = [("assign", t, p) for t, p in zip(temps, parts)]
        for t, temp in zip(target.elts, temps):
            done = self.assign(t, ("var", temp), node)
            out.extend(done[1] if done[0] == "multi" else [done])
        return out

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
                if id(value) not in self.implicit_names:
                    name = f"_lf_global{len(self.implicit_names)}_{node.id}"
                    self.implicit_names[id(value)] = name
                    self.implicit[name] = value
                    self.arrays.add(name)
                    self.ndims[name] = value.ndim
                found[node.id] = self.implicit_names[id(value)]
        return _Renamer(found).visit(tree) if found else tree

    # --- compile-time values -----------------------------------------------
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
            if path.startswith(("cuda.", "math.")):
                return True, _Intrinsic(path)
            value = self.env.get(head)
            for attr in path.split(".")[1:]:
                value = getattr(value, attr, None)
            if value is not None and (_constant(value) or hasattr(value, "dtype")):
                return True, value
        return False, None

    def constant_expr(self, value, node):
        """A compile-time number as an expression."""
        if not _constant(value):
            self.fail(node, f"a {type(value).__name__} used as a number")
        if isinstance(value, (bool, __import__("numpy").bool_)):
            return ("const", int(value), "bool")
        return ("const", value.item() if hasattr(value, "item") else value)

    def intrinsic_path(self, func):
        """The path of a kernel intrinsic a called name holds
        (``binop(ary, i, v)`` where ``binop`` is ``cuda.atomic.add``), or
        None."""
        if not isinstance(func, ast.Name) or func.id in self.bound:
            return None
        return _intrinsic_path(self.env.get(func.id))

    def expr(self, e, tuples=False):
        """``e`` translated; ``tuples``: a device function's tuple is
        allowed (it is being unpacked)."""
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
                    self.fail(e, "a shape index that is not a constant")
                dim = -value.value if negative else value.value
                return self.dim_length(e.value.value.id, dim, e)
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
        if len(chain) == 3 and chain[1] in _SPECIAL and chain[2] in ("x", "y", "z"):
            return ("special", chain[1], chain[2])
        if len(chain) == 2 and chain[1] == "size" and chain[0] in self.declared_shapes:
            return ("const", int(np.prod(self.declared_shapes[chain[0]], dtype=np.int64)))
        if len(chain) == 2 and chain[1] == "size" and chain[0] in self.views:
            size = ("const", 1)
            for d in range(self.ndim_of(chain[0])):
                size = ("bin", "multiply", size, self.dim_length(chain[0], d, e))
            return size
        if len(chain) == 2 and chain[1] == "size" and chain[0] in self.arrays:
            return ("size", chain[0])
        if chain == ["cuda", "warpsize"]:
            return ("const", 32)
        if chain == ["cuda", "laneid"]:
            # The thread's lane: its linear index in the block, modulo 32.
            index = lambda d: ("cast", "int64", ("special", "threadIdx", d))
            extent = lambda d: ("cast", "int64", ("special", "blockDim", d))
            linear = ("bin", "add", ("bin", "multiply", ("bin", "add", ("bin", "multiply", index("z"),
                      extent("y")), index("y")), extent("x")), index("x"))
            return ("cast", "int32", ("bin", "remainder", linear, ("const", 32)))
        if len(chain) == 2 and chain[0] == "math" and chain[1] in ("pi", "e", "tau", "inf", "nan"):
            import math
            return ("const", getattr(math, chain[1]))
        known, value = self.static_value(e)
        if known and _constant(value):  # np.nan, a module's or a class's number
            return self.constant_expr(value, e)
        self.fail(e, "this attribute")

    def inlines(self, target):
        """Whether a call of ``target`` is inlined: a device function, or a
        function of ``_kernel_math`` (which call one another)."""
        return _as_device_function(target) is not None

    def library_call(self, name, call):
        """A call of the ``_kernel_math`` function ``name``, inlined."""
        from . import _kernel_math
        return self.inline_call(getattr(_kernel_math, name), call)

    def inline_call(self, target, call):
        """A device function's call, inlined: ``("let", statements, value)``.
        Its locals and parameters are renamed for this call site, except a
        parameter given a name it does not rebind (an array, or a local of
        the caller), which reads that name; its `return`s assign a result
        local, read after the statements."""
        target = _as_device_function(target)
        name = target.name
        if target in self.inlining:
            self.fail(call, f"a recursive call of the device function '{name}'")
        args = self.call_arguments(call, target)
        if len(args) != len(target.params) and not (target.vararg and len(args) >= len(target.params)):
            self.fail(call, f"a call of '{name}' with {len(args)} arguments "
                            f"(it takes {len(target.params)}{' or more' if target.vararg else ''})")
        tree = target.tree
        bound = set(target.params) | {target.vararg} - {None} | {
            n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        self.sites[0] += 1
        prefix = f"_lf_{name}{self.sites[0]}_"
        names = {n: prefix + n for n in bound}
        setup, static = self.bind_arguments(target, args, names, bound, call)
        sub = Translator.__new__(Translator)
        sub.__dict__.update(self.__dict__)
        sub.function, sub.loops = target.function, ()
        sub.tree = _Renamer(names).visit(copy.deepcopy(tree))
        sub.env = target.scope()
        sub.env.update(static)
        sub.bound = (set(names.values()) - set(static)) | target.outer
        if target.vararg:  # the elements of `*args`, made by the caller
            sub.bound |= set(self.tuples[names[target.vararg]])
        sub.tree = sub.global_arrays(sub.tree)
        sub.constant_locals = _constant_locals(sub.tree, set(names.values()))
        sub.env.setdefault("_lf_raise", _RAISE)
        sub.tree = _Raises(sub).apply(sub.tree)
        arity = _tuple_arity(tree)
        if arity:
            sub.result = [f"{prefix}return{i}" for i in range(arity)]
        else:
            sub.result = prefix + "return" if _returns_value(tree) else None
        sub.inlining = self.inlining + [target]
        sub.returned = self.fresh("returned")
        body = sub.start_of_function(sub.tree) + sub.body(sub.tree.body)
        hoisted = sub.function_scoped()
        results = sub.result if arity else [sub.result] if sub.result else []
        if results and not all(isinstance(s, ast.Return) for s in sub.tree.body if has_return(s)):
            hoisted.extend(results)  # assigned in a branch
        statements = ([("hoist", hoisted)] if hoisted else []) + setup + body
        if arity:
            return ("let", statements, ("tuple", [("var", r) for r in results]))
        value = ("var", sub.result) if sub.result else ("const", 0)
        return ("let", statements, value)

    def call_arguments(self, call, target):
        """A call's arguments in the order of the callee's parameters:
        ``*t`` of a tuple spread into its elements (as names or constants),
        keyword arguments in their places, defaults where none is given."""
        out = []
        for arg in call.args:
            if not isinstance(arg, ast.Starred):
                out.append(arg)
                continue
            parts = self.tuple_parts(arg.value)
            if parts is None or any(p[0] not in ("var", "array", "const") for p in parts):
                self.fail(call, "*arguments other than a tuple")
            out += [ast.Constant(p[1]) if p[0] == "const" else ast.Name(p[1], ast.Load())
                    for p in parts]
        given = {k.arg: k.value for k in call.keywords}
        if None in given or set(given) - set(target.params):
            self.fail(call, f"keyword arguments that '{target.name}' does not take")
        defaults = _defaults(target.tree, target.function)
        for param in target.params[len(out):]:
            if param in given:
                out.append(given.pop(param))
            elif param in defaults:
                out.append(ast.Constant(defaults[param]))
            else:
                given_count = len(call.args) + len(call.keywords)
                self.fail(call, f"a call of '{target.name}' with {given_count} arguments (it takes "
                                f"{len(target.params)}), none for '{param}'")
        if given:
            self.fail(call, f"'{target.name}' given {', '.join(given)} twice")
        return out

    def bind_arguments(self, target, args, names, bound, call):
        """The statements binding a callee's parameters to ``args``, and
        the parameters known when compiling (read as globals); may point a
        parameter's name at the caller's own name or at a slice."""
        tree = target.tree
        free = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - bound
        setup, static = [], {}
        for param, arg in zip(target.params, args):
            if self.is_sliced(arg):  # a row `a[i, :]` passed on: a slice of the callee's own
                view = self.fresh("slice")
                setup += self.make_view(view, arg)
                names[param] = view
                continue
            known, value = self.static_value(arg)
            if known and not _rebinds(tree, param):
                # Known when compiling (a type, a function, a tuple, a
                # number): the body reads it as a global, as Numba's
                # specialisation on literal arguments would.
                static[names[param]] = value
                continue
            if isinstance(arg, ast.Name) and (arg.id in self.arrays or arg.id in self.bound):
                if not _rebinds(tree, param) and arg.id not in free:
                    names[param] = arg.id  # read the caller's name itself
                    continue
                if arg.id in self.arrays:
                    self.fail(call, f"'{target.name}' re-binding its array parameter '{param}'")
            setup.append(("assign", names[param], self.expr(arg)))
        if target.vararg:
            extra = [self.expr(a) for a in args[len(target.params):]]
            setup += self.assign_tuple(names[target.vararg], extra, call)
        return setup, static

    def kernel(self):
        body = self.start_of_function(self.tree) + self.body(self.tree.body)
        hoisted = self.function_scoped()
        return [("hoist", hoisted)] + body if hoisted else body

    def element_function(self, inputs, output):
        """The body of a scalar function (``@vectorize`` code that tracing
        cannot express) as a gufunc's over ``()`` cores: each parameter a
        local copied from its input (so the body may rebind it), the value
        it returns stored to ``output``."""
        self.result = "_lf_result"
        body = self.start_of_function(self.tree) + self.body(self.tree.body)
        hoisted = sorted(set(self.function_scoped()) | {self.result})
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
