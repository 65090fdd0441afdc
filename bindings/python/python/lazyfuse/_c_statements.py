"""The statements of a CUDA C function in lazyfuse's kernel dialect: a
mixin of ``_c_translate.FunctionTranslator`` (which gives ``emit``,
``expr``, ``scalar``, ``cast``, ``condition``, ``declare``, ``lookup``,
``fail`` and the state they share). C's blocks scope their names; a
``for`` loop is a ``range`` when it counts, else a ``while`` loop that
runs its step on ``continue``; ``do`` tests after its body."""

import numpy as np

from . import _c_tree as c
from ._c_tables import CONSTANTS, FLOATS, LocalArray, is_int, np_type
from ._c_tree import Pointer
from .errors import CompileError


class Statements:
    """Statement translation (see the module)."""

    def block(self, stmts, scope=True):
        if scope:
            self.scopes.append({})
        start = len(self.lines)
        for s in stmts:
            self.statement(s)
        if len(self.lines) == start:
            self.emit("pass")
        if scope:
            self.scopes.pop()

    def statement(self, s):
        method = getattr(self, "stmt_" + type(s).__name__.lower(), None)
        if method is None:
            self.fail(s, f"the statement {type(s).__name__}")
        method(s)

    def stmt_block(self, s):
        self.block(s.body)

    def const_value(self, e):
        """The value of a constant integer expression (array extents)."""
        if isinstance(e, c.Num) and e.ctype not in FLOATS:
            return int(e.value)
        if isinstance(e, c.Name):
            py = self.lookup(e)[0]
            if py in self.constants:
                return self.constants[py]
        if isinstance(e, c.Binary) and e.op in "+-*/%<<>>":
            a, b = self.const_value(e.left), self.const_value(e.right)
            ops = {"+": a + b, "-": a - b, "*": a * b, "<<": a << b, ">>": a >> b}
            if e.op in ops:
                return ops[e.op]
            if b == 0:
                self.fail(e, "a division by zero in a constant")
            return int(a / b) if e.op == "/" else a - b * int(a / b)
        if isinstance(e, c.Unary) and e.op in "-+":
            v = self.const_value(e.operand)
            return -v if e.op == "-" else v
        self.fail(e, "an array extent that is not a constant integer")

    def stmt_decl(self, s):
        if s.dims:
            return self.array_decl(s)
        py = self.declare(s.name, s.ctype)
        if s.init is None:
            self.emit(f"{py} = {np_type(s.ctype)}(0)")
            return
        if isinstance(s.init, list):
            self.fail(s, f"a {{...}} initialiser of the scalar '{s.name}'")
        text, t = self.scalar(s.init)
        self.emit(f"{py} = {self.cast(text, t, s.ctype)}")
        if s.const and is_int(s.ctype):
            try:
                self.constants[py] = self.const_value(s.init)
            except CompileError:
                pass

    def array_decl(self, s):
        extern = s.dims == [None]
        if None in s.dims and not (extern and s.place == "__shared__"):
            if not (isinstance(s.init, list) and len(s.dims) == 1):
                self.fail(s, f"the array '{s.name}' without its extent")
        dims = [len(s.init) if d is None and isinstance(s.init, list) else
                0 if d is None else self.const_value(d) for d in s.dims]
        py = self.declare(s.name, LocalArray(s.ctype, len(dims)))
        shape = str(dims[0]) if len(dims) == 1 else f"({', '.join(map(str, dims))})"
        where = "shared" if s.place == "__shared__" else "local"
        self.emit(f"{py} = cuda.{where}.array({shape}, {np_type(s.ctype)})")
        if isinstance(s.init, list):
            flat = flatten_values(s.init)
            for k, value in enumerate(flat):
                index = np.unravel_index(k, dims)
                text, t = self.scalar(value)
                self.emit(f"{py}[{', '.join(map(str, index))}] = {self.cast(text, t, s.ctype)}")
        elif s.init is not None:
            self.fail(s, f"the array '{s.name}' initialised with other than {{...}}")

    def stmt_exprstmt(self, s):
        e = s.expr
        if isinstance(e, c.Assign):
            return self.assign(e)
        if isinstance(e, c.Unary) and e.op.endswith(("pre", "post")):
            op = "+" if e.op.startswith("++") else "-"
            return self.assign(c.Assign(e.line, op + "=", e.operand, c.Num(e.line, 1, "int32")))
        if isinstance(e, c.Call):
            text, _ = self.expr(e)
            self.emit(text)
            return
        self.expr(e)  # checked, and dropped: it does nothing

    def assign(self, e):
        target = e.target
        value = e.value
        if e.op != "=":
            value = c.Binary(e.line, e.op[:-1], target, value)
        if isinstance(target, c.Name):
            py, t = self.lookup(target)
            if not isinstance(t, str):
                self.fail(e, f"assigning to the array '{target.id}'")
            if target.id in self.unit.globals or target.id in CONSTANTS:
                self.fail(e, f"assigning to the constant '{target.id}'")
            text, vt = self.scalar(value)
            self.emit(f"{py} = {self.cast(text, vt, t)}")
            self.constants.pop(py, None)
            return
        if isinstance(target, c.Unary) and target.op == "*":
            target = self.address(target.operand)
        if isinstance(target, c.Index):
            array, parts, element = self.subscript(target)
            if array in {g[0] for g in self.unit.globals.values()}:
                self.fail(e, f"writing the __constant__ array '{array}'")
            text, vt = self.scalar(value)
            self.emit(f"{array}[{', '.join(parts)}] = {self.cast(text, vt, element)}")
            return
        self.fail(e, "an assignment to other than a variable or an array element")

    def stmt_if(self, s):
        self.emit(f"if {self.condition(s.cond)}:")
        self.nested(s.then)
        other = s.other
        while isinstance(other, c.If):
            self.emit(f"elif {self.condition(other.cond)}:")
            self.nested(other.then)
            other = other.other
        if other is not None:
            self.emit("else:")
            self.nested(other)

    def nested(self, s):
        self.depth += 1
        self.block(s.body if isinstance(s, c.Block) else [s])
        self.depth -= 1

    def stmt_while(self, s):
        if s.test_first:
            self.emit(f"while {self.condition(s.cond)}:")
            self.loop_steps.append([])
            self.nested(s.body)
            self.loop_steps.pop()
            return
        if _contains_continue(s.body):
            self.fail(s, "continue inside do ... while")
        self.emit("while True:")
        self.loop_steps.append([])
        self.depth += 1
        self.block(s.body.body if isinstance(s.body, c.Block) else [s.body])
        self.emit(f"if not {self.condition(s.cond)}:")
        self.emit("    break")
        self.depth -= 1
        self.loop_steps.pop()

    def stmt_for(self, s):
        self.scopes.append({})
        counted = self.counted_range(s)
        if counted is not None:
            py, bounds = counted
            self.emit(f"for {py} in range({bounds}):")
            self.loop_steps.append([])
            self.nested(s.body)
            self.loop_steps.pop()
            self.scopes.pop()
            return
        for init in s.init:
            self.statement(init)
        self.emit(f"while {self.condition(s.cond) if s.cond is not None else 'True'}:")
        self.loop_steps.append(s.step)
        self.depth += 1
        self.block(s.body.body if isinstance(s.body, c.Block) else [s.body])
        for step in s.step:
            self.statement(step)
        self.depth -= 1
        self.loop_steps.pop()
        self.scopes.pop()

    def counted_range(self, s):
        """``(loop variable, range arguments)`` of a counted loop — ``for
        (int i = a; i < b; i += c)`` whose body assigns none of ``i``,
        ``b``, ``c`` — else None (it runs as a ``while`` loop)."""
        if len(s.init) != 1 or not isinstance(s.init[0], c.Decl) or len(s.step) != 1:
            return None
        decl = s.init[0]
        if decl.dims or not is_int(decl.ctype) or decl.init is None or isinstance(decl.init, list):
            return None
        cond, step = s.cond, s.step[0].expr
        if not (isinstance(cond, c.Binary) and cond.op in ("<", "<=", ">", ">=")
                and isinstance(cond.left, c.Name) and cond.left.id == decl.name):
            return None
        stride = _stride(step, decl.name)
        if stride is None:
            return None
        sign, amount = stride
        assigned = _assigned_names(s.body)
        if decl.name in assigned or _names(cond.right) & assigned or _names(amount) & assigned \
                or _has_calls(cond.right) or _has_calls(amount):
            return None
        if (sign > 0) != (cond.op in ("<", "<=")):
            return None
        start_text, start_t = self.scalar(decl.init)
        stop_text, stop_t = self.scalar(cond.right)
        step_text, step_t = self.scalar(amount)
        if not all(is_int(t) or t == "bool" for t in (start_t, stop_t, step_t)):
            return None
        if cond.op == "<=":
            stop_text = f"{stop_text} + 1"
        elif cond.op == ">=":
            stop_text = f"{stop_text} - 1"
        step_text = step_text if sign > 0 else f"-({step_text})"
        py = self.declare(decl.name, decl.ctype)
        return py, f"{start_text}, {stop_text}" + ("" if step_text == "1" else f", {step_text}")

    def stmt_jump(self, s):
        if not self.loop_steps:
            self.fail(s, f"{s.kind} outside a loop")
        if s.kind == "continue":
            for step in self.loop_steps[-1]:
                self.statement(step)
        self.emit(s.kind)

    def stmt_return(self, s):
        result = self.function.result
        if s.value is None:
            if result != "void":
                self.fail(s, "return without a value")
            self.emit("return")
            return
        if result == "void" or isinstance(result, Pointer):
            self.fail(s, "returning a value from a void function" if result == "void"
                      else "returning a pointer")
        text, t = self.scalar(s.value)
        self.emit(f"return {self.cast(text, t, result)}")


def flatten_values(values):
    out = []
    for v in values:
        out.extend(flatten_values(v) if isinstance(v, list) else [v])
    return out


def _stride(step, name):
    """``(sign, amount)`` of a loop step ``i++``, ``i += c``, ``i -= c``,
    ``i = i + c``; None otherwise."""
    one = c.Num(step.line, 1, "int32")
    if isinstance(step, c.Unary) and isinstance(step.operand, c.Name) and step.operand.id == name:
        return (1, one) if step.op.startswith("++") else (-1, one) if step.op.startswith("--") else None
    if isinstance(step, c.Assign) and isinstance(step.target, c.Name) and step.target.id == name:
        if step.op in ("+=", "-="):
            return (1 if step.op == "+=" else -1), step.value
        v = step.value
        if step.op == "=" and isinstance(v, c.Binary) and v.op in "+-" \
                and isinstance(v.left, c.Name) and v.left.id == name:
            return (1 if v.op == "+" else -1), v.right
    return None


def _walk(node, enter=lambda n: True):
    """Every node under ``node`` (iteratively), the children only of the
    nodes ``enter`` accepts."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, list):
            stack.extend(n)
            continue
        if not isinstance(n, c.Node):
            continue
        yield n
        if enter(n):
            stack.extend(v for v in vars(n).values() if isinstance(v, (c.Node, list)))


def _names(node):
    return {n.id for n in _walk(node) if isinstance(n, c.Name)}


def _has_calls(node):
    return any(isinstance(n, c.Call) for n in _walk(node))


def _assigned_names(node):
    names = set()
    for n in _walk(node):
        if isinstance(n, c.Assign) and isinstance(n.target, c.Name):
            names.add(n.target.id)
        if isinstance(n, c.Unary) and n.op.endswith(("pre", "post")) and isinstance(n.operand, c.Name):
            names.add(n.operand.id)
        if isinstance(n, c.Decl):
            names.add(n.name)
    return names


def _contains_continue(node):
    """Whether a ``continue`` of this loop (not of a nested one) is inside."""
    inside = _walk(node, enter=lambda n: not isinstance(n, (c.For, c.While)))
    return any(isinstance(n, c.Jump) and n.kind == "continue" for n in inside)
