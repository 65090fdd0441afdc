"""Division by zero reported by a kernel compiled with ``debug=True``, as
Numba's CUDA target reports it under Python's error model: before a
statement that divides (``/``, ``//``, ``%``, also ``x /= y``), a check
``if divisor == 0: raise ZeroDivisionError("division by zero")`` is
inserted, so the dividing thread stops there and the launch raises on the
host (``_reports``). Applied to a function's tree before its ``raise``
statements are translated (``_reports._Raises``).

A division evaluated only under a condition of its statement (an operand
of ``and``/``or`` after the first, a branch of ``x if c else y``) is
checked under that same condition. A divisor or condition that calls a
function (which might write memory, or differ on a second call) is not
evaluated twice: that division is not checked, as without ``debug``."""

import ast
import copy

from ._control import own_nodes


class KernelZeroDivisionError(ZeroDivisionError, FloatingPointError):
    """A kernel divided by zero. Both of the exceptions Numba raises for
    it: ``ZeroDivisionError`` on CUDA (Python's error model) and
    ``FloatingPointError`` in its simulator (NumPy's, set to raise)."""


#: The name a check's ``raise`` reads (bound in the function's scope).
_NAME = "_lf_ZeroDivisionError"
_DIVIDES = (ast.Div, ast.FloorDiv, ast.Mod)


def _pure(node):
    """True when evaluating ``node`` again has no effect and the same value
    (no calls, no assignment expressions)."""
    return not any(isinstance(n, (ast.Call, ast.NamedExpr, ast.Await, ast.Yield, ast.Lambda))
                   for n in ast.walk(node))


def _divisions(node, guards=()):
    """``(divisor, guards)`` of each division ``node`` evaluates: ``guards``
    the conditions (``(test, truth)``) under which it is evaluated."""
    if isinstance(node, (ast.FunctionDef, ast.Lambda, ast.ListComp, ast.GeneratorExp,
                         ast.SetComp, ast.DictComp)):
        return
    if isinstance(node, ast.BinOp) and isinstance(node.op, _DIVIDES):
        yield node.right, guards
    if isinstance(node, ast.BoolOp):
        yield from _divisions(node.values[0], guards)
        for k, value in enumerate(node.values[1:], 1):
            before = tuple((v, isinstance(node.op, ast.And)) for v in node.values[:k])
            yield from _divisions(value, guards + before)
        return
    if isinstance(node, ast.IfExp):
        yield from _divisions(node.test, guards)
        yield from _divisions(node.body, guards + ((node.test, True),))
        yield from _divisions(node.orelse, guards + ((node.test, False),))
        return
    for child in ast.iter_child_nodes(node):
        yield from _divisions(child, guards)


def _check(divisor, guards, where):
    """``if guards and divisor == 0: raise …`` at ``where``'s line."""
    # Copies: the statement keeps its own nodes (later passes rewrite them).
    test = ast.Compare(copy.deepcopy(divisor), [ast.Eq()], [ast.Constant(0)])
    conditions = [copy.deepcopy(g) if truth else ast.UnaryOp(ast.Not(), copy.deepcopy(g))
                  for g, truth in guards]
    if conditions:
        test = ast.BoolOp(ast.And(), conditions + [test])
    error = ast.Call(ast.Name(_NAME, ast.Load()), [ast.Constant("division by zero")], [])
    check = ast.If(test, [ast.Raise(error, None)], [])
    for node in ast.walk(check):
        ast.copy_location(node, where)
    return check


class _Checks(ast.NodeTransformer):
    """Inserts the checks before each simple statement (and before an
    ``if``'s test, a ``for``'s iterable, a ``return``'s value) that divides."""

    def __init__(self, root):
        self.root = root

    def visit_FunctionDef(self, node):
        return node if node is not self.root else self.generic_visit(node)

    def _checked(self, node, parts):
        checks = []
        for part in parts:
            for divisor, guards in _divisions(part):
                if isinstance(divisor, ast.Constant) and divisor.value != 0:
                    continue
                if _pure(divisor) and all(_pure(g) for g, _ in guards):
                    checks.append(_check(divisor, guards, node))
        return checks + [node] if checks else node

    def generic_visit(self, node):
        super().generic_visit(node)
        if node is self.root or not isinstance(node, ast.stmt):
            return node
        if isinstance(node, ast.If):
            return self._checked(node, [node.test])
        if isinstance(node, ast.For):
            return self._checked(node, [node.iter])
        if isinstance(node, (ast.While, ast.With, ast.Try, ast.FunctionDef)):
            return node  # a while's test runs again each time: not checked
        return self._checked(node, [node])


def check_division(tree, env):
    """``tree`` (a function's) with its divisions checked; ``env`` (its
    scope) given the exception the checks raise."""
    if not any(isinstance(n, ast.BinOp) and isinstance(n.op, _DIVIDES) for n in own_nodes(tree)):
        return tree
    env[_NAME] = KernelZeroDivisionError
    return ast.fix_missing_locations(_Checks(tree).visit(tree))
