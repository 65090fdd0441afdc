"""Complex numbers in kernels (``@cuda.jit`` and the device functions they
call), computed as their two real parts. A mixin of the translator
(``_jit.Translator``).

lazyfuse's kernel builder has real types only, so the translator carries
each complex value as a pair: a complex array argument is two real arrays
(its planes, ``cuda.Dispatcher`` splits and joins them), a complex number
argument two numbers, a complex local two locals (``z__lfre``,
``z__lfim``), and an expression a ``CVal``: the statements it needs, then
a tree for each part. Which locals are complex is decided before
translating (``_complex_inference``).
Arithmetic is written out (CPython's and Numba's formulas); division,
powers and the ``cmath`` functions are functions of the kernel dialect in
``_kernel_cmath`` (Numba's own algorithms), inlined where they are called.
"""

import ast
from collections import namedtuple

from ._complex_inference import (
    _NP_CMATH, _NP_COMPARISONS, _NP_OPERATORS, _call_path, _complex_type, _path, complex_locals,
    is_complex, mentions_complex, returns_complex,
)
from ._functions import _as_device_function

#: A complex expression translated: its statements, then its real and
#: imaginary parts (trees that read no more than the statements wrote).
CVal = namedtuple("CVal", "stmts re im")

_ZERO = ("const", 0.0)


class ComplexValues:
    """The translator's complex numbers. Expects the translator's state
    (``arrays``, ``bound``, ``env``, ``written``, ``tree``) and methods
    (``expr``, ``fail``, ``fresh``, ``index_items``, ``through_view``,
    ``inline_call``)."""

    def start_complex(self, complexes):
        """``complexes``: each complex argument's two leaves, by name."""
        # One dict of each for the kernel and every device function inlined
        # into it (their locals are renamed apart).
        self.complex_arrays, self.complex_locals = {}, {}
        # A gufunc's complex scalars (`()` cores) are read into locals first.
        self.complex_prelude = []
        for name, parts in (complexes or {}).items():
            if parts[0] in self.arrays and self.ndims.get(parts[0]) == 0 and not any(
                    isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
                    and n.value.id == name for n in ast.walk(self.tree)):
                locals_ = (f"{name}__lfcre", f"{name}__lfcim")
                self.complex_prelude += [("assign", local, ("array", part))
                                         for local, part in zip(locals_, parts)]
                self.complex_locals[name] = locals_
                self.bound |= {name, *parts, *locals_}
                continue
            owner = self.complex_arrays if parts[0] in self.arrays else self.complex_locals
            owner[name] = tuple(parts)
            self.bound |= {name, *parts}
        self.complex_result = None
        self.any_complex = False
        self.tree = self.find_complex_locals(self.tree)

    def find_complex_locals(self, tree):
        """Decides which of ``tree``'s locals are complex (before it is
        translated) and gives each its two part locals; returns ``tree``
        with a complex array's shape read from its real plane."""
        self.any_complex = bool(self.complex_locals or self.complex_arrays
                                or mentions_complex(tree, self.env))
        if not self.any_complex:
            return tree
        complex_locals(self, tree)
        for name, parts in list(self.complex_locals.items()):
            if parts is None:
                parts = self.complex_locals[name] = (f"{name}__lfre", f"{name}__lfim")
                self.bound |= set(parts)
        return _ShapeOfPlane(self.complex_arrays).visit(tree) if self.complex_arrays else tree

    def is_complex(self, e):
        return self.any_complex and is_complex(self, e)

    def hoisted_parts(self, names):
        """Names to hoist, a complex local's as its two parts."""
        out = []
        for name in names:
            out.extend(self.complex_locals.get(name) or (name,))
        return out

    # --- statements ------------------------------------------------------------
    def complex_stmt(self, s):
        """The statements of ``s`` when it assigns a complex value or into a
        complex array; None for any other statement."""
        if not self.any_complex:
            return None
        if isinstance(s, ast.Assign) and len(s.targets) == 1:
            target = s.targets[0]
            if isinstance(target, ast.Tuple) and _is_polar(s.value):
                return self.assign_polar(target, s.value, s)
            if self.complex_target(target):
                return self.assign_complex(target, self.cval(s.value), s)
            if isinstance(target, ast.Subscript) and self.is_complex(s.value):
                self.fail(s, "storing a complex value into an array of real numbers")
            return None
        if isinstance(s, ast.AugAssign) and self.complex_target(s.target):
            value = self.complex_binop(s.op, self.cval(s.target), self.cval(s.value), s)
            return self.assign_complex(s.target, value, s)
        return None

    def complex_target(self, target):
        return (isinstance(target, ast.Name) and target.id in self.complex_locals) or (
            isinstance(target, ast.Subscript) and self.is_complex(target))

    def assign_complex(self, target, value, node):
        if isinstance(target, ast.Name):
            parts = self.complex_locals[target.id]
            if any(_reads(tree, parts) for tree in (value.re, value.im)):
                value = self.bind(value)  # z = complex(z.imag, z.real)
            return self.assign_parts(parts, value)
        stores = []
        for plane, part in zip(self.complex_arrays[target.value.id], (value.re, value.im)):
            array, indices = self.through_view(plane, self.index_items(target.slice), node)
            self.written.add(array)
            stores.append(("store", array, indices, part))
        return [*value.stmts, *stores]

    def assign_polar(self, target, call, node):
        """``r, phi = cmath.polar(z)``."""
        if len(target.elts) != 2 or not all(isinstance(t, ast.Name) for t in target.elts):
            self.fail(node, "unpacking cmath.polar into other than two names")
        return self.assign_parts([t.id for t in target.elts], self.polar(call))

    def polar(self, call):
        """``cmath.polar(z)``: its radius and angle as the two parts of a
        ``CVal``."""
        z = self.bind(self.cval(call.args[0]))
        return CVal(z.stmts, ("call", "hypot", [z.re, z.im]), ("call", "arctan2", [z.im, z.re]))

    def return_complex(self, value):
        """A ``return`` of a device function that returns complex values."""
        return self.assign_parts(self.complex_result, self.cval(value))

    def assign_parts(self, parts, value):
        return [*value.stmts, ("assign", parts[0], value.re), ("assign", parts[1], value.im)]

    # --- device functions ---------------------------------------------------------
    def call_returns_complex(self, target, args):
        """Whether device function ``target`` returns complex values when
        called with ``args`` (in the order of its parameters)."""
        function = _as_device_function(target)
        complex_params = frozenset(p for p, a in zip(function.params, args) if self.is_complex(a))
        arrays = frozenset(p for p, a in zip(function.params, args)
                           if isinstance(a, ast.Name) and a.id in self.complex_arrays)
        return returns_complex(function, complex_params, arrays)

    def bind_complex_argument(self, tree, param, arg, names):
        """The statements binding a device function's parameter to a complex
        ``arg``: the caller's complex local itself when the callee does not
        rebind it, else a complex local of the callee's (``names[param]``)."""
        if (isinstance(arg, ast.Name) and arg.id in self.complex_locals
                and not any(isinstance(n, ast.Name) and n.id == param and isinstance(n.ctx, ast.Store)
                            for n in ast.walk(tree))):
            names[param] = arg.id
            return []
        local = names[param]
        parts = self.complex_locals[local] = (f"{local}__lfre", f"{local}__lfim")
        self.bound |= {local, *parts}
        return self.assign_parts(parts, self.cval(arg))

    # --- complex expressions ---------------------------------------------------
    def cval(self, e):
        """``e`` as a complex value (a real one with a zero imaginary part)."""
        if not self.is_complex(e):
            return CVal([], self.expr(e), _ZERO)
        kind = type(e)
        if kind is ast.Constant:
            return CVal([], ("const", e.value.real), ("const", e.value.imag))
        if kind is ast.Name:
            if e.id in self.complex_locals:
                re, im = self.complex_locals[e.id]
                return CVal([], ("var", re), ("var", im))
            value = complex(self.env[e.id])
            return CVal([], ("const", value.real), ("const", value.imag))
        if kind is ast.Subscript:
            loads = []
            for plane in self.complex_arrays[e.value.id]:
                array, indices = self.through_view(plane, self.index_items(e.slice), e)
                loads.append(("load", array, indices))
            return CVal([], *loads)
        if kind is ast.BinOp:
            return self.complex_binop(e.op, self.cval(e.left), self.cval(e.right), e)
        if kind is ast.UnaryOp:
            value = self.cval(e.operand)
            if isinstance(e.op, ast.USub):
                return CVal(value.stmts, ("unary", "negative", value.re),
                            ("unary", "negative", value.im))
            if isinstance(e.op, ast.UAdd):
                return value
            self.fail(e, "this operator on a complex value")
        if kind is ast.IfExp:
            return self.complex_select(e)
        return self.complex_call(e)

    def bind(self, value):
        """``value`` with each part that is more than a name or a constant
        computed once into a local (a part read twice is not computed
        twice)."""
        stmts, parts = list(value.stmts), []
        for part in (value.re, value.im):
            if part[0] in ("var", "const"):
                parts.append(part)
                continue
            local = self.fresh("complex")
            stmts.append(("assign", local, part))
            parts.append(("var", local))
        return CVal(stmts, *parts)

    def complex_binop(self, op, a, b, node):
        if isinstance(op, (ast.Add, ast.Sub)):
            name = "add" if isinstance(op, ast.Add) else "subtract"
            return CVal(a.stmts + b.stmts, ("bin", name, a.re, b.re), ("bin", name, a.im, b.im))
        if isinstance(op, ast.Mult):
            return self.multiply(a, b)
        if isinstance(op, ast.Div):
            return self.library_complex("div", [a, b], node)
        if isinstance(op, ast.Pow):
            exponent = (node.right if isinstance(node, ast.BinOp) else node.args[1]
                        if isinstance(node, ast.Call) else node.value)
            known, n = self.static_value(exponent)
            if known and isinstance(n, int) and not isinstance(n, bool) and abs(n) <= 100:
                return self.integer_power(a, n, node)
            return self.library_complex("power", [a, b], node)
        self.fail(node, f"the operator {type(op).__name__} on complex values")

    def multiply(self, a, b):
        a, b = self.bind(a), self.bind(b)
        mul = lambda x, y: ("bin", "multiply", x, y)  # noqa: E731
        re = ("bin", "subtract", mul(a.re, b.re), mul(a.im, b.im))
        im = ("bin", "add", mul(a.re, b.im), mul(a.im, b.re))
        return CVal(a.stmts + b.stmts, re, im)

    def integer_power(self, z, n, node):
        """``z ** n`` for an integer ``n`` known when compiling: repeated
        squaring, as CPython's ``c_powi`` (and ``1 / z ** -n``)."""
        result, base, m = CVal([], ("const", 1.0), _ZERO), self.bind(z), abs(n)
        while m:
            if m & 1:
                result = self.bind(self.multiply(result, base))
            m >>= 1
            if m:
                base = self.bind(self.multiply(base, base))
        if n < 0:
            result = self.library_complex("div", [CVal([], ("const", 1.0), _ZERO), result], node)
        return result

    def complex_select(self, e):
        test = self.expr(e.test)
        body, orelse = self.bind(self.cval(e.body)), self.bind(self.cval(e.orelse))
        if not body.stmts and not orelse.stmts:
            return CVal([], ("select", test, body.re, orelse.re), ("select", test, body.im, orelse.im))
        re, im = self.fresh("complex"), self.fresh("complex")
        branch = lambda v: v.stmts + [("assign", re, v.re), ("assign", im, v.im)]  # noqa: E731
        return CVal([("hoist", [re, im]), ("if", test, branch(body), branch(orelse))],
                    ("var", re), ("var", im))

    def complex_call(self, e):
        path = _call_path(e.func, self)
        tail = path.split(".")
        args = e.args
        if path == "complex":
            if len(args) == 1 and isinstance(args[0], ast.Starred) and _is_polar(args[0].value):
                return self.polar(args[0].value)
            if e.keywords or len(args) > 2 or any(isinstance(a, ast.Starred) for a in args):
                self.fail(e, "complex() with these arguments")
            if not args:
                return CVal([], ("const", 0.0), _ZERO)
            parts = [self.cval(a) for a in args]
            if len(parts) == 1:
                return parts[0]
            # complex(a, b) is a + b*1j (only real parts when both are real).
            if all(not self.is_complex(a) for a in args):
                return CVal(parts[0].stmts + parts[1].stmts, parts[0].re, parts[1].re)
            turned = CVal(parts[1].stmts, ("unary", "negative", parts[1].im), parts[1].re)
            return self.complex_binop(ast.Add(), parts[0], turned, e)
        if path == "pow" and len(args) == 2:
            return self.complex_binop(ast.Pow(), self.cval(args[0]), self.cval(args[1]), e)
        if isinstance(e.func, ast.Attribute) and e.func.attr == "conjugate" and not args:
            value = self.cval(e.func.value)
            return CVal(value.stmts, value.re, ("unary", "negative", value.im))
        dtype = _complex_type(e.func, self.env)
        if dtype is not None:
            if len(args) != 1:
                self.fail(e, f"a conversion to {dtype} of other than one value")
            value = self.cval(args[0])
            real = "float32" if dtype == "complex64" else "float64"
            return CVal(value.stmts, ("cast", real, value.re), ("cast", real, value.im))
        if len(tail) == 2 and tail[0] in ("np", "numpy"):
            return self.numpy_complex(tail[1], e)
        if len(tail) == 2 and tail[0] == "cmath":
            name = "log_base" if tail[1] == "log" and len(args) == 2 else tail[1]
            from . import _kernel_cmath
            return self.as_cval(self.inline_call(getattr(_kernel_cmath, name), e), e)
        target = self.env.get(e.func.id) if isinstance(e.func, ast.Name) else None
        if self.inlines(target):
            return self.as_cval(self.inline_call(target, e), e)
        self.fail(e, f"a call of '{path}' with a complex value")

    def numpy_complex(self, name, e):
        """NumPy's ufunc ``name`` of complex values (a complex result)."""
        args = e.args
        if name in _NP_OPERATORS and len(args) == 2:
            return self.complex_binop(_NP_OPERATORS[name](), self.cval(args[0]),
                                      self.cval(args[1]), e)
        value = self.cval(args[0]) if len(args) == 1 else None
        if name == "negative":
            return CVal(value.stmts, ("unary", "negative", value.re), ("unary", "negative", value.im))
        if name == "positive":
            return value
        if name in ("conjugate", "conj"):
            return CVal(value.stmts, value.re, ("unary", "negative", value.im))
        if name == "square":
            return self.multiply(value, value)
        if name == "reciprocal":
            return self.library_complex("div", [CVal([], ("const", 1.0), _ZERO), value], e)
        if name in _NP_CMATH:
            return self.library_complex(_NP_CMATH[name], [self.cval(a) for a in args], e)
        self.fail(e, f"np.{name} of complex values")

    def as_cval(self, value, node):
        if value[0] == "let" and value[2][0] == "complex":
            return CVal(list(value[1]), value[2][1], value[2][2])
        self.fail(node, "a call that was expected to return a complex value")

    def library_complex(self, name, values, node):
        """``_kernel_cmath.<name>`` of complex ``values``, inlined."""
        from . import _kernel_cmath
        stmts, names = [], []
        for value in values:
            value = self.bind(value)
            stmts += value.stmts
            local = self.fresh("complex")
            if value.re[0] == value.im[0] == "var":
                parts = (value.re[1], value.im[1])  # the locals it is in
            else:
                parts = (f"{local}__lfre", f"{local}__lfim")
                stmts += self.assign_parts(parts, CVal([], value.re, value.im))
            self.complex_locals[local] = parts
            self.bound |= {local, *parts}
            names.append(ast.Name(local, ast.Load()))
        call = ast.Call(ast.Name(name, ast.Load()), names, [])
        ast.copy_location(call, node)
        ast.fix_missing_locations(call)
        done = self.as_cval(self.inline_call(getattr(_kernel_cmath, name), call), node)
        return CVal(stmts + done.stmts, done.re, done.im)

    # --- real values of complex ones ---------------------------------------
    def complex_to_real(self, e):
        """The real value of ``e`` when it reads complex values (``z.real``,
        ``abs(z)``, ``cmath.phase(z)``, ``z == w``…), or a real number's
        ``.real``/``.imag``/``.conjugate()``; None for anything else."""
        if isinstance(e, ast.Attribute) and e.attr in ("real", "imag") and _is_value(e.value, self):
            if self.is_complex(e.value):
                value = self.cval(e.value)
                return _let(value.stmts, value.re if e.attr == "real" else value.im)
            value = self.expr(e.value)
            # A real number's imaginary part: a zero of its type.
            return value if e.attr == "real" else ("select", ("const", 0, "bool"), value, ("const", 0))
        if isinstance(e, ast.Call):
            return self.complex_to_real_call(e)
        if isinstance(e, ast.Compare) and any(self.is_complex(v) for v in [e.left, *e.comparators]):
            if len(e.ops) != 1 or not isinstance(e.ops[0], (ast.Eq, ast.NotEq)):
                self.fail(e, "an order comparison of complex values")
            a, b = self.cval(e.left), self.cval(e.comparators[0])
            if isinstance(e.ops[0], ast.Eq):
                test = ("bin", "logical_and", ("bin", "equal", a.re, b.re), ("bin", "equal", a.im, b.im))
            else:
                test = ("bin", "logical_or", ("bin", "not_equal", a.re, b.re),
                        ("bin", "not_equal", a.im, b.im))
            return _let(a.stmts + b.stmts, test)
        if self.is_complex(e):
            self.fail(e, "a complex value where a real number is expected")
        return None

    def complex_to_real_call(self, e):
        path = _call_path(e.func, self)
        args = e.args
        if path == "abs" and len(args) == 1 and self.is_complex(args[0]):
            value = self.bind(self.cval(args[0]))
            return _let(value.stmts, ("call", "hypot", [value.re, value.im]))
        if path in ("cmath.phase", "cmath.isnan", "cmath.isinf", "cmath.isfinite") and len(args) == 1:
            value = self.bind(self.cval(args[0]))
            re, im = value.re, value.im
            test = {
                "cmath.phase": lambda: ("call", "arctan2", [im, re]),
                "cmath.isnan": lambda: ("bin", "logical_or", ("call", "isnan", [re]), ("call", "isnan", [im])),
                "cmath.isinf": lambda: ("bin", "logical_or", ("call", "isinf", [re]), ("call", "isinf", [im])),
                "cmath.isfinite": lambda: ("bin", "logical_and", ("call", "isfinite", [re]),
                                           ("call", "isfinite", [im])),
            }[path]()
            return _let(value.stmts, test)
        if (isinstance(e.func, ast.Attribute) and e.func.attr == "conjugate" and not args
                and _is_value(e.func.value, self) and not self.is_complex(e.func.value)):
            return self.expr(e.func.value)
        tail = path.split(".")
        if (len(tail) == 2 and tail[0] in ("np", "numpy")
                and any(self.is_complex(a) for a in args)):
            return self.numpy_complex_to_real(tail[1], e)
        return None

    def numpy_complex_to_real(self, name, e):
        """NumPy's ufunc ``name`` of complex values with a real result:
        absolute values, tests, comparisons (NumPy orders complex values by
        their real parts, then their imaginary parts), truth."""
        values = [self.bind(self.cval(a)) for a in e.args]
        stmts = [s for v in values for s in v.stmts]
        if name in ("absolute", "abs") and len(values) == 1:
            return _let(stmts, ("call", "hypot", [values[0].re, values[0].im]))
        if name in ("isnan", "isinf", "isfinite") and len(values) == 1:
            join = "logical_and" if name == "isfinite" else "logical_or"
            return _let(stmts, ("bin", join, ("call", name, [values[0].re]),
                                ("call", name, [values[0].im])))
        if name in _NP_COMPARISONS and len(values) == 2:
            return _let(stmts, _ordered(name, *values))
        if name.startswith("logical_"):
            truth = [("bin", "logical_or", ("bin", "not_equal", v.re, ("const", 0)),
                      ("bin", "not_equal", v.im, ("const", 0))) for v in values]
            if name == "logical_not" and len(truth) == 1:
                return _let(stmts, ("unary", "logical_not", truth[0]))
            if len(truth) == 2 and name in ("logical_and", "logical_or", "logical_xor"):
                op = "not_equal" if name == "logical_xor" else name
                return _let(stmts, ("bin", op, *truth))
        self.fail(e, f"np.{name} of complex values")


class _ShapeOfPlane(ast.NodeTransformer):
    """``a.shape``, ``a.size``, ``a.ndim``, ``len(a)`` of a complex array
    ``a``: its real plane's; ``a.real`` and ``a.imag``: the planes
    themselves (arrays to index, write, or update atomically)."""

    def __init__(self, arrays):
        self.arrays = arrays

    def plane(self, node):
        if isinstance(node, ast.Name) and node.id in self.arrays:
            return ast.copy_location(ast.Name(self.arrays[node.id][0], ast.Load()), node)
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if node.attr in ("shape", "size", "ndim"):
            node.value = self.plane(node.value)
        elif (node.attr in ("real", "imag") and isinstance(node.value, ast.Name)
              and node.value.id in self.arrays):
            part = self.arrays[node.value.id][node.attr == "imag"]
            return ast.copy_location(ast.Name(part, node.ctx if isinstance(node.ctx, ast.Load)
                                              else ast.Load()), node)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "len" and len(node.args) == 1:
            node.args = [self.plane(node.args[0])]
        return node


def _is_value(node, translator):
    """Whether ``node`` is a value of the kernel (not a module or a global
    object whose attribute is read)."""
    if isinstance(node, ast.Name):
        return node.id in translator.bound or node.id in translator.complex_locals
    return isinstance(node, (ast.Subscript, ast.BinOp, ast.Call, ast.UnaryOp, ast.Constant))


def _is_polar(node):
    return isinstance(node, ast.Call) and _path(node.func) == "cmath.polar" and len(node.args) == 1


def _ordered(name, a, b):
    """NumPy's comparison ``name`` of complex values ``a`` and ``b``."""
    if name in ("equal", "not_equal"):
        same = ("bin", "logical_and", ("bin", "equal", a.re, b.re), ("bin", "equal", a.im, b.im))
        return same if name == "equal" else ("unary", "logical_not", same)
    if name in ("greater", "greater_equal"):
        a, b = b, a
        name = name.replace("greater", "less")
    parts = ("bin", name, a.im, b.im)
    return ("bin", "logical_or", ("bin", "less", a.re, b.re),
            ("bin", "logical_and", ("bin", "equal", a.re, b.re), parts))


def _let(stmts, value):
    return ("let", stmts, value) if stmts else value


def _reads(tree, names):
    """Whether a translated tree reads one of the locals ``names``."""
    if isinstance(tree, tuple):
        if len(tree) == 2 and tree[0] == "var":
            return tree[1] in names
        return any(_reads(t, names) for t in tree)
    if isinstance(tree, list):
        return any(_reads(t, names) for t in tree)
    return False
