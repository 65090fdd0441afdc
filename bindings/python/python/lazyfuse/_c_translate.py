"""CUDA C (read by ``_c_parse``) translated into lazyfuse's kernel dialect —
Python source in Numba's vocabulary, compiled by ``cuda.jit`` — so that
CuPy's ``RawKernel``/``RawModule``/``ElementwiseKernel`` and PyCUDA's
``SourceModule`` run on every backend: ``cpu`` and ``sim`` as well as
``cuda``.

C's meaning is kept where Python's differs: every value has its C type
(the usual arithmetic conversions pick each operation's, casts are
explicit, an assignment converts to the variable's type), unsigned
arithmetic wraps, signed integer division and remainder truncate toward
zero (``_c_runtime``), ``for`` loops run their step on ``continue``,
a variable declared in an inner block is its own. Pointer parameters are
one-dimensional arrays (a launch passes arrays flattened).
"""

import math

import numpy as np

from . import _c_tree as c, _sources
from ._c_parse import parse
from ._c_printf import printf_call
from ._c_statements import Statements, flatten_values
from ._c_tables import (
    ATOMICS, BOOLEAN_MATH, CONSTANTS, FLOATS, INTRINSICS, LocalArray, MATH, MIN_MAX_ABS,
    PY_RESERVED, common_type, is_int, is_unsigned, np_type, promoted
)
from ._c_tree import Pointer
from .errors import CompileError


def _nan_losing(name, a, b):
    """C's ``fminf``/``fmaxf`` (and CUDA's ``min``/``max`` of floats): the
    other value where one is NaN (Python's ``min``/``max`` in the dialect
    propagate NaN, as NumPy's ``minimum``/``maximum``)."""
    return f"({b} if {a} != {a} else ({a} if {b} != {b} else {name}({a}, {b})))"


class FunctionTranslator(Statements):
    """Translates one C function into Python source lines."""

    def __init__(self, unit, function):
        self.unit, self.function = unit, function
        self.lines = []
        self.depth = 1
        self.scopes = [{}]
        self.used = {}          # Python name -> type, across the function
        self.loop_steps = []    # per enclosing loop: the statements a `continue` runs first
        self.constants = {}     # Python name -> value of const integer locals
        params = []
        for ctype, name in function.params:
            if isinstance(ctype, Pointer) and ctype.element == "void":
                self.fail(function, f"the void* parameter '{name}' (give it an element type)")
            params.append(self.declare(name, ctype))
        self.params = params

    # -- output

    def emit(self, text):
        self.lines.append("    " * self.depth + text)

    def fail(self, node, what):
        raise CompileError(f"CUDA C, line {node.line}: {what} (in '{self.function.name}')")

    # -- names

    def declare(self, name, ctype):
        taken = (any(name in scope for scope in self.scopes) or name in self.unit.globals
                 or name in self.unit.functions)
        py = name if not name.startswith("_lf") else "c_" + name
        if taken or (py in self.used and self.used[py] != ctype) or py in PY_RESERVED:
            k = 1
            while f"{name}_{k}" in self.used:
                k += 1
            py = f"{name}_{k}"
        self.scopes[-1][name] = (py, ctype)
        self.used[py] = ctype
        return py

    def lookup(self, node):
        for scope in reversed(self.scopes):
            if node.id in scope:
                return scope[node.id]
        if node.id in self.unit.globals:
            return self.unit.globals[node.id]
        if node.id in CONSTANTS:
            text, t = CONSTANTS[node.id]
            return (f"np.float32({text})" if t == "float32" else text), t
        self.fail(node, f"the name '{node.id}' is not declared")

    # -- expressions: (Python text, C type)

    def expr(self, e):
        method = getattr(self, "expr_" + type(e).__name__.lower(), None)
        if method is None:
            self.fail(e, f"a {type(e).__name__} where a value is expected")
        return method(e)

    def expr_num(self, e):
        if e.ctype == "bool":
            return ("True" if e.value else "False"), "bool"
        if e.ctype in FLOATS:
            text = "math.inf" if math.isinf(e.value) else repr(float(e.value))
            return (f"np.float32({text})" if e.ctype == "float32" else text), e.ctype
        return str(e.value), e.ctype

    def expr_name(self, e):
        return self.lookup(e)

    def expr_str(self, e):
        self.fail(e, "a string literal (only printf's format and %s read one)")

    def expr_member(self, e):
        if isinstance(e.value, c.Name) and e.value.id in ("threadIdx", "blockIdx", "blockDim",
                                                          "gridDim") and e.field in "xyz":
            return f"cuda.{e.value.id}.{e.field}", "int32"
        self.fail(e, "members of other than threadIdx, blockIdx, blockDim and gridDim "
                     "(structs and vector types are not supported)")

    def subscript(self, e):
        """``(array text, [index texts], element type)`` of ``a[i]`` or
        ``s[i][j]`` (a multi-dimensional local or shared array)."""
        indices = []
        base = e
        while isinstance(base, c.Index):
            indices.append(base.index)
            base = base.value
        indices.reverse()
        if not isinstance(base, c.Name):
            self.fail(e, "indexing of other than an array by name")
        text, ctype = self.lookup(base)
        ndim = ctype.ndim if isinstance(ctype, LocalArray) else 1 if isinstance(ctype, Pointer) else 0
        if ndim != len(indices):
            self.fail(e, f"'{base.id}' indexed with {len(indices)} subscripts (it has {ndim} dimensions)")
        parts = []
        for index in indices:
            t, it = self.expr(index)
            if not is_int(it) and it != "bool":
                self.fail(index, f"an index of type {it}")
            parts.append(t)
        return text, parts, ctype.element

    def expr_index(self, e):
        array, parts, element = self.subscript(e)
        return f"{array}[{', '.join(parts)}]", element

    def expr_unary(self, e):
        if e.op.endswith(("pre", "post")):
            self.fail(e, "++ and -- inside an expression (write them as statements)")
        if e.op == "&":
            self.fail(e, "taking an address (only atomics' first argument may be &a[i])")
        if e.op == "*":
            if isinstance(e.operand, c.Name):
                array, ctype = self.lookup(e.operand)
                if isinstance(ctype, Pointer):
                    return f"{array}[0]", ctype.element
            self.fail(e, "dereferencing other than a pointer parameter")
        if e.op == "!":
            return f"(not {self.condition(e.operand)})", "bool"
        text, have = self.scalar(e.operand)
        t = have if have in FLOATS else promoted(have)
        operand = self.cast(text, have, t)
        if e.op == "+":
            return operand, t
        if e.op == "~" and not is_int(t):
            self.fail(e, f"~ of a {t}")
        return self.wrap(f"({e.op}{operand})", t), t

    def scalar(self, e):
        text, t = self.expr(e)
        if not isinstance(t, str) or t == "void":
            self.fail(e, "an array or a void value where a number is expected")
        return text, t

    def wrap(self, text, t):
        """Unsigned arithmetic wraps in C: the value converted back."""
        return f"{np_type(t)}({text})" if is_unsigned(t) else text

    def cast(self, text, have, want):
        if have == want:
            return text
        if want == "bool":
            return f"({text} != 0)"
        return f"{np_type(want)}({text})"

    def condition(self, e):
        text, t = self.scalar(e)
        return text if t == "bool" else f"({text} != 0)"

    def expr_binary(self, e):
        op = e.op
        if op in ("&&", "||"):
            word = "and" if op == "&&" else "or"
            return f"({self.condition(e.left)} {word} {self.condition(e.right)})", "bool"
        (lt, la), (rt, ra) = self.scalar(e.left), self.scalar(e.right)
        if op in ("<<", ">>"):
            t = promoted(la)
            if not (is_int(la) or la == "bool") or not (is_int(ra) or ra == "bool"):
                self.fail(e, f"{op} of {la} and {ra}")
            return self.wrap(f"({self.cast(lt, la, t)} {op} {rt})", t), t
        t = common_type(la, ra)
        left, right = self.cast(lt, la, t), self.cast(rt, ra, t)
        if op in ("==", "!=", "<", ">", "<=", ">="):
            return f"({left} {op} {right})", "bool"
        if op in ("&", "|", "^"):
            if t in FLOATS:
                self.fail(e, f"{op} of floats")
            return f"({left} {op} {right})", t
        if op == "/" and t not in FLOATS:
            return (f"({left} // {right})" if is_unsigned(t) else f"_lf_c_div({left}, {right})"), t
        if op == "%":
            if t in FLOATS:
                self.fail(e, "% of floats (C has fmodf)")
            return (f"({left} % {right})" if is_unsigned(t) else f"_lf_c_rem({left}, {right})"), t
        return self.wrap(f"({left} {op} {right})", t), t

    def expr_ternary(self, e):
        cond = self.condition(e.cond)
        (at, aa), (bt, ba) = self.scalar(e.then), self.scalar(e.other)
        t = aa if aa == ba else common_type(aa, ba)
        return f"({self.cast(at, aa, t)} if {cond} else {self.cast(bt, ba, t)})", t

    def expr_cast(self, e):
        if isinstance(e.ctype, Pointer):
            self.fail(e, "casts to pointers")
        text, t = self.scalar(e.operand)
        return self.cast(text, t, e.ctype), e.ctype

    def expr_assign(self, e):
        self.fail(e, "an assignment inside an expression (write it as a statement)")

    def expr_call(self, e):
        name, args = e.func, e.args
        if name in self.unit.functions:
            return self.device_call(e)
        if name in ATOMICS:
            return self.atomic(e)
        if name == "printf":
            return printf_call(self, e)
        if name == "__ldg" and len(args) == 1:
            return self.expr(self.address(args[0]))
        if name in INTRINSICS:
            text, arity, result = INTRINSICS[name]
            if arity is not None and len(args) != arity:
                self.fail(e, f"{name} takes {arity} arguments, got {len(args)}")
            parts = [self.scalar(a) for a in args[:1 if name == "__syncwarp" else len(args)]]
            if name == "__syncwarp":
                parts = []
            call = f"{text}({', '.join(p for p, _ in parts)})"
            return call, result if result is not None else parts[0][1]
        if name in MIN_MAX_ABS:
            return self.min_max_abs(e)
        if name in MATH:
            return self.math_call(e)
        self.fail(e, f"a call of '{name}' (not a __device__ function of this source, nor one "
                     "of the math functions and intrinsics read)")

    def device_call(self, e):
        function = self.unit.functions[e.func]
        if len(e.args) != len(function.params):
            self.fail(e, f"'{e.func}' takes {len(function.params)} arguments, got {len(e.args)}")
        parts = []
        for (ctype, _), arg in zip(function.params, e.args):
            text, t = self.expr(arg)
            if isinstance(ctype, Pointer):
                if not isinstance(t, Pointer) or t.element != ctype.element:
                    self.fail(arg, f"'{e.func}' takes a {ctype.element}* here")
                parts.append(text)
            else:
                parts.append(self.cast(text, self.scalar(arg)[1], ctype))
        return f"{e.func}({', '.join(parts)})", function.result

    def address(self, arg):
        """The element ``&a[i]`` (or ``a``: element 0) names."""
        if isinstance(arg, c.Unary) and arg.op == "&" and isinstance(arg.operand, c.Index):
            return arg.operand
        if isinstance(arg, c.Name):
            return c.Index(arg.line, arg, c.Num(arg.line, 0, "int32"))
        self.fail(arg, "expected &array[index] or a pointer parameter")

    def atomic(self, e):
        kind = ATOMICS[e.func]
        arity = 3 if kind == "cas" else 2
        if len(e.args) != arity:
            self.fail(e, f"{e.func} takes {arity} arguments, got {len(e.args)}")
        array, parts, element = self.subscript(self.address(e.args[0]))
        index = parts[0] if len(parts) == 1 else f"({', '.join(parts)})"
        values = [self.cast(*self.scalar(a), element) for a in e.args[1:]]
        return f"cuda.atomic.{kind}({array}, {index}, {', '.join(values)})", element

    def min_max_abs(self, e):
        name = MIN_MAX_ABS[e.func]
        parts = [self.scalar(a) for a in e.args]
        if name == "abs":
            if len(parts) != 1:
                self.fail(e, "abs of other than one value")
            text, t = parts[0]
            t = t if t in FLOATS else promoted(t)
            return f"abs({self.cast(text, parts[0][1], t)})", t
        if len(parts) != 2:
            self.fail(e, f"{name} of other than two values")
        t = common_type(parts[0][1], parts[1][1])
        a, b = (self.cast(p, pt, t) for p, pt in parts)
        # CUDA's min and max of floats are fminf and fmaxf: a NaN loses.
        if t in FLOATS:
            return _nan_losing(name, a, b), t
        return f"{name}({a}, {b})", t

    def math_call(self, e):
        base, call, fixed = MATH[e.func]
        parts = [self.scalar(a) for a in e.args]
        t = fixed
        if t is None:  # C++'s overloads: float for floats, else double
            single = all(pt in ("float32", "float16") for _, pt in parts)
            t = "float32" if parts and single else "float64"
        args = [self.cast(p, pt, t) for p, pt in parts]
        if base in BOOLEAN_MATH:
            return f"{call}({', '.join(args)})", "bool"
        if base == "ldexp":
            args[1] = parts[1][0]
        zero, one = f"{np_type(t)}(0)", f"{np_type(t)}(1)"
        special = {
            "divide": lambda a, b: f"({a} / {b})", "multiply": lambda a, b: f"({a} * {b})",
            "add": lambda a, b: f"({a} + {b})", "reciprocal": lambda a: f"({one} / {a})",
            "fmin": lambda a, b: _nan_losing("min", a, b),
            "fmax": lambda a, b: _nan_losing("max", a, b),
            # __saturatef: clamped to [0, 1], NaN to 0.
            "saturate": lambda a: f"({zero} if {a} != {a} else min(max({a}, {zero}), {one}))",
            # fdim: x - y where x > y, +0 where x <= y, NaN with a NaN.
            "fdim": lambda a, b: f"({zero} if {a} <= {b} else {a} - {b})",
            # C's round: half away from zero.
            "round": lambda a: f"np.trunc({a} + np.copysign({np_type(t)}(0.5), {a}))",
            "rsqrt": lambda a: f"({one} / np.sqrt({a}))",
            "exp10": lambda a: f"np.power({np_type(t)}(10), {a})",
        }
        if call in special:
            return special[call](*args), t
        text = f"{call}({', '.join(args)})"
        return (self.cast(text, "float64", t) if call.startswith("math.") else text), t

    # -- the function

    def source(self):
        f = self.function
        self.block(f.body.body, scope=False)
        header = f"def {f.name}({', '.join(self.params)}):"
        return [header] + self.lines


class Unit:
    """A translated source: its functions (by name), its ``__constant__``
    arrays (NumPy arrays), the Python module text, and the Python name of
    each template instance ``expressions`` named (``instances``)."""

    _count = 0

    def __init__(self, source, types=None, defines=None, expressions=()):
        functions, constants, self.instances = parse(source, types, defines, expressions)
        self.functions = {f.name: f for f in functions}
        self.globals = {}
        self.arrays = {}
        for k in constants:
            dims = [FunctionTranslator(self, _EMPTY).const_value(d) if d is not None else None
                    for d in k.dims]
            values = [_constant_number(v) for v in flatten_values(
                k.values if isinstance(k.values, list) else [k.values])]
            if not dims:
                self.globals[k.name] = (f"{np_type(k.ctype)}({values[0]!r})", k.ctype)
                continue
            if None in dims:
                dims = [len(values)]
            data = np.zeros(int(np.prod(dims)), dtype=k.ctype)
            data[:len(values)] = values
            self.arrays[k.name] = data.reshape(dims)
            self.globals[k.name] = (k.name, LocalArray(k.ctype, len(dims)))
        lines = []
        for f in functions:
            lines += FunctionTranslator(self, f).source() + [""]
        self.text = "\n".join(lines)

    def namespace(self):
        """The module's functions made in a fresh namespace: kernels as
        plain Python functions, ``__device__`` functions wrapped for
        inlining; the source is registered with ``linecache`` so that the
        translator reads it as it reads a file's."""
        from . import _c_runtime, _jit, cuda
        Unit._count += 1
        env = {"np": np, "math": math, "cuda": cuda,
               "_lf_c_div": _jit.DeviceFunction(_c_runtime.c_div),
               "_lf_c_rem": _jit.DeviceFunction(_c_runtime.c_rem)}
        env.update(self.arrays)
        _sources.define(self.text, f"<lazyfuse CUDA C {Unit._count}>", env)
        for name, f in self.functions.items():
            if f.kind == "__device__":
                env[name] = _jit.DeviceFunction(env[name])
        return env


_EMPTY = c.Function(0, "__device__", "void", "<file scope>", [], c.Block(0, []))


def _constant_number(e):
    if isinstance(e, c.Num):
        return e.value
    if isinstance(e, c.Unary) and e.op in "-+" and isinstance(e.operand, c.Num):
        return -e.operand.value if e.op == "-" else e.operand.value
    raise CompileError(f"CUDA C, line {e.line}: a __constant__ value that is not a number")


def signature(function):
    """Numba's signature of a kernel: ``void(float32[:], int32)``."""
    parts = [f"{t.element}[:]" if isinstance(t, Pointer) else t for t, _ in function.params]
    return f"void({', '.join(parts)})"
