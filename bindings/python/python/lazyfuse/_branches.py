"""Control flow in traced scalar functions (``@vectorize``, ``cuda.reduce``).

Calling a function on symbolic values records straight-line code only: an
``if`` on a symbolic value has no truth value to branch on. When that
happens, ``lazyfuse._trace`` runs the function's source through this
interpreter instead. It executes the statements itself; at an ``if`` whose
condition is symbolic it runs both ways, each with the rest of the
function, and joins the two results with ``where`` — exactly the value the
branching function computes, element by element (both sides are computed,
as a GPU computes both sides of a divergent branch; the functions traced
have no side effects). Conditions that are plain Python values branch as
Python does, and ``for`` loops over ``range`` of constants are unrolled.

The subset: assignments (also tuple unpacking and augmented), ``if``/
``elif``/``else``, ``return``, ``pass``, ``for … in range(constants)``,
and in expressions ``a if c else b``, ``and``/``or``/``not`` and chained
comparisons on symbolic values. Anything else raises ``CompileError``
naming the line and the construct.
"""

import ast
import inspect
import textwrap

from .errors import CompileError
from ._sources import keep_exec_sources, source_lines

keep_exec_sources()  # functions made by exec() of a string trace too

# Paths through symbolic branches, and iterations of unrolled loops, that a
# function may take before tracing it is refused (each path is a copy of
# the rest of the function in the expression).
_MAX_PATHS = 256
_MAX_UNROLLED = 1024


def run(function, scope, args, sym_type, where):
    """The value ``function`` returns for ``args`` (a dict by parameter
    name), its source executed in ``scope`` (its globals, patched); symbolic
    conditions (``sym_type``) join both branches by ``where(c, a, b)``."""
    try:
        lines, first_line = source_lines(function)
    except (OSError, TypeError) as e:
        raise CompileError(
            f"'{function.__name__}' branches on a traced value, and its source cannot be read "
            f"to trace both branches ({e})"
        ) from None
    tree = ast.parse(textwrap.dedent("".join(lines)))
    definition = tree.body[0] if tree.body else None
    if not isinstance(definition, ast.FunctionDef):
        raise CompileError(f"'{function.__name__}': only functions defined with `def` can branch")
    return _Interpreter(function, scope, first_line - 1, sym_type, where).block(
        definition.body, dict(args)
    )


class _Interpreter:
    def __init__(self, function, scope, line_offset, sym_type, where):
        self.name = function.__name__
        self.filename = inspect.getsourcefile(function) or "<traced>"
        self.scope = dict(scope)
        self.scope.update(
            __lf_ifexp=self._ifexp, __lf_and=self._and, __lf_or=self._or, __lf_not=self._not
        )
        self.line_offset = line_offset
        self.sym = sym_type
        self.where = where
        self.paths = 1
        self.unrolled = 0

    def error(self, node, what):
        line = getattr(node, "lineno", 0) + self.line_offset
        return CompileError(f"'{self.name}', line {line}: {what}")

    # Statements -------------------------------------------------------

    def block(self, stmts, env):
        """The value the statements `stmts` return, from the variables `env`."""
        for k, stmt in enumerate(stmts):
            rest = stmts[k + 1:]
            if isinstance(stmt, ast.Return):
                if stmt.value is None:
                    raise self.error(stmt, "a traced function must return a value")
                return self.value(stmt.value, env)
            if isinstance(stmt, ast.If):
                return self.branch(stmt, rest, env)
            if isinstance(stmt, ast.For):
                return self.block(self.unroll(stmt, env) + rest, env)
            self.simple(stmt, env)
        raise self.error(stmts[-1] if stmts else None, "the function can end without returning a value")

    def branch(self, stmt, rest, env):
        cond = self.value(stmt.test, env)
        if not isinstance(cond, self.sym):
            return self.block((stmt.body if cond else stmt.orelse) + rest, env)
        self.paths += 1
        if self.paths > _MAX_PATHS:
            raise self.error(stmt, f"more than {_MAX_PATHS} paths through branches on traced values")
        taken = self.block(stmt.body + rest, dict(env))
        other = self.block(stmt.orelse + rest, dict(env))
        return self.where(cond, taken, other)

    def unroll(self, stmt, env):
        """The statements of a `for` over `range` of constants, unrolled."""
        call = stmt.iter
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                and call.func.id == "range" and not call.keywords and not stmt.orelse):
            raise self.error(stmt, "only `for … in range(…)` loops can be traced")
        bounds = [self.value(a, env) for a in call.args]
        if any(isinstance(b, self.sym) or not isinstance(b, int) for b in bounds):
            raise self.error(stmt, "a loop over a range of traced values (its bounds must be constants)")
        steps = range(*bounds)
        self.unrolled += len(steps)
        if self.unrolled > _MAX_UNROLLED:
            raise self.error(stmt, f"loops of more than {_MAX_UNROLLED} iterations in all")
        for node in ast.walk(stmt):
            if isinstance(node, (ast.Break, ast.Continue)):
                raise self.error(node, "`break` and `continue` cannot be traced")
        unrolled = []
        for i in steps:
            unrolled.append(ast.copy_location(
                ast.Assign(targets=[stmt.target], value=ast.Constant(i)), stmt))
            unrolled.extend(stmt.body)
        return unrolled

    def simple(self, stmt, env):
        if isinstance(stmt, ast.Assign):
            value = self.value(stmt.value, env)
            for target in stmt.targets:
                self.bind(target, value, env)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self.bind(stmt.target, self.value(stmt.value, env), env)
        elif isinstance(stmt, ast.AugAssign):
            if not isinstance(stmt.target, ast.Name):
                raise self.error(stmt, "augmented assignment to something other than a variable")
            combined = ast.BinOp(left=ast.Name(stmt.target.id, ast.Load()), op=stmt.op, right=stmt.value)
            env[stmt.target.id] = self.value(ast.copy_location(combined, stmt), env)
        elif isinstance(stmt, ast.Expr):
            self.value(stmt.value, env)  # a docstring, or a call for its checks
        elif not isinstance(stmt, ast.Pass):
            raise self.error(stmt, f"`{type(stmt).__name__}` statements cannot be traced")

    def bind(self, target, value, env):
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, self.sym):
                raise self.error(target, "a traced value cannot be unpacked")
            values = list(value)
            if len(values) != len(target.elts):
                raise self.error(target, f"{len(values)} values unpacked into {len(target.elts)} names")
            for t, v in zip(target.elts, values):
                self.bind(t, v, env)
        else:
            raise self.error(target, "assignment to something other than variables")

    # Expressions ------------------------------------------------------

    def value(self, node, env):
        tree = ast.Expression(_Lazy().visit(node))
        ast.fix_missing_locations(tree)
        scope = dict(self.scope)
        scope.update(env)
        return eval(compile(tree, self.filename, "eval"), scope)  # noqa: S307 (the user's own code)

    def _ifexp(self, cond, taken, other):
        if isinstance(cond, self.sym):
            return self.where(cond, taken(), other())
        return taken() if cond else other()

    def _and(self, *operands):
        value = operands[0]()
        for operand in operands[1:]:
            if isinstance(value, self.sym):
                value = value.logical_and(operand())
            elif not value:
                return value
            else:
                value = operand()
        return value

    def _or(self, *operands):
        value = operands[0]()
        for operand in operands[1:]:
            if isinstance(value, self.sym):
                value = value.logical_or(operand())
            elif value:
                return value
            else:
                value = operand()
        return value

    def _not(self, value):
        return value.logical_not() if isinstance(value, self.sym) else not value


class _Lazy(ast.NodeTransformer):
    """Rewrites the expressions whose Python meaning branches (`a if c else
    b`, `and`, `or`, `not`, `a < b < c`) into calls that also accept
    symbolic conditions; the operands stay lazy (lambdas), so Python values
    keep Python's short-circuit semantics."""

    @staticmethod
    def _thunk(node):
        return ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                             kw_defaults=[], defaults=[]), body=node)

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return ast.Call(ast.Name("__lf_ifexp", ast.Load()),
                        [node.test, self._thunk(node.body), self._thunk(node.orelse)], [])

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        helper = "__lf_and" if isinstance(node.op, ast.And) else "__lf_or"
        return ast.Call(ast.Name(helper, ast.Load()), [self._thunk(v) for v in node.values], [])

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.Call(ast.Name("__lf_not", ast.Load()), [node.operand], [])
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) == 1:
            return node
        pairs = []
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            pairs.append(self._thunk(ast.Compare(left, [op], [right])))
            left = right
        return ast.Call(ast.Name("__lf_and", ast.Load()), pairs, [])
