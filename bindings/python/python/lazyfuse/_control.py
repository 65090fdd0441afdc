"""Control flow of translated kernels: ``return``, ``break`` and
``continue``, and the loops that need a flag to stop.

The kernel builder has structured statements only (``if``, ``for``,
``while``), no jumps, so a jump is translated by what it skips:

- the statements after it in its block are dropped, and an ``if`` that may
  jump gets the statements that follow it appended to each of its branches
  (the branch that jumps stops at the jump), so ``continue`` needs nothing
  more;
- ``break`` clears its loop's *go* flag, the loop's only condition;
- ``return`` inside a loop sets the function's *returned* flag and clears
  the go flag of every loop around it, and the statements after such a
  loop run under ``if not returned``.

A loop takes the flag form when it holds a ``break`` or a ``return``, or
when its ``while`` test runs statements (an operand of ``and``/``or`` that
reads memory, an atomic), which must run again before every iteration::

    go = test                      counter = start; i = counter
                                   go = counter < stop
    while go:                      while go:
        body                           i = counter; body
        if go: go = test               if go: counter += step; go = counter < stop

Other loops stay the builder's own ``for`` and ``while``, which cost nothing
more. After a ``break``, the loop's variable keeps the value it had, as in
Python.
"""

import ast

_TRUE = ("const", 1, "bool")
_FALSE = ("const", 0, "bool")


def _is_docstring(stmt):
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(
        stmt.value.value, str
    )


_FOLDED = {
    "equal": lambda a, b: a == b, "not_equal": lambda a, b: a != b,
    "less": lambda a, b: a < b, "less_equal": lambda a, b: a <= b,
    "greater": lambda a, b: a > b, "greater_equal": lambda a, b: a >= b,
    "logical_and": lambda a, b: bool(a) and bool(b), "logical_or": lambda a, b: bool(a) or bool(b),
}


def known_truth(test):
    """The truth of a translated ``if`` test made of constants only (``len(t)
    == 2`` of a tuple, a comparison of numbers known when compiling), or
    None: such an ``if`` keeps only the branch taken, as Numba prunes dead
    branches (the other may not translate: ``t[1]`` of a 1-tuple)."""
    if test[0] == "const":
        return bool(test[1])
    if test[0] == "cast" and test[1] == "bool":
        return known_truth(test[2])
    if test[0] == "unary" and test[1] == "logical_not":
        inner = known_truth(test[2])
        return None if inner is None else not inner
    if test[0] == "bin" and test[1] in _FOLDED:
        values = [_constant_of(operand) for operand in test[2:]]
        if None not in values:
            return _FOLDED[test[1]](*values)
    return None


def _constant_of(node):
    if node[0] == "const":
        return node[1]
    truth = known_truth(node) if node[0] in ("bin", "unary") else None
    return None if truth is None else int(truth)


def own_nodes(node):
    """The nodes of ``node`` (a function or a statement) outside the
    functions defined inside it (their returns are theirs)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(child for child in ast.iter_child_nodes(current)
                     if not isinstance(child, (ast.FunctionDef, ast.Lambda)))


def has_return(node):
    """True when a `return` of its own function is anywhere in `node`."""
    return any(isinstance(n, ast.Return) for n in own_nodes(node))


def _own_jumps(stmts, kinds):
    """True when one of `stmts` (through `if`s, not through inner loops,
    whose jumps are theirs) is a jump of `kinds`."""
    for s in stmts:
        if isinstance(s, kinds):
            return True
        if isinstance(s, ast.If) and _own_jumps(s.body + s.orelse, kinds):
            return True
    return False


def _jumps_out(stmt):
    """True when `stmt` may skip the statements after it in its block: it
    returns, or breaks or continues the loop around it."""
    if isinstance(stmt, (ast.For, ast.While)):
        return has_return(stmt)
    return _own_jumps([stmt], (ast.Return, ast.Break, ast.Continue)) or (
        isinstance(stmt, ast.If) and has_return(stmt)
    )


def _needs_flag(loop):
    return has_return(loop) or _own_jumps(loop.body, ast.Break)


def _runs_statements(node):
    """True when a translated expression runs statements before its value
    (a short-circuit `let`, an atomic): a loop test must run them again
    before every iteration."""
    if not isinstance(node, (tuple, list)):
        return False
    if isinstance(node, tuple) and node and node[0] in ("let", "atomic"):
        return True
    return any(_runs_statements(child) for child in node)


class ControlFlow:
    """The statement-block half of the translator (see the module doc).
    Expects ``stmt``, ``expr``, ``fail``, ``fresh``, ``result`` (the local a
    `return <value>` assigns, or None) and ``returned`` (the name of the
    function's returned flag)."""

    # The go flag of each loop around the statement being translated, in the
    # function being translated (None for a loop without one).
    loops = ()

    def body(self, stmts):
        """Translates a block (see the module doc for its jumps)."""
        out = []
        for k, s in enumerate(stmts):
            if _is_docstring(s) or isinstance(s, ast.Pass):
                continue
            if isinstance(s, ast.Return):
                return out + self.return_(s)
            if isinstance(s, ast.Break):
                return out + [("assign", self.loops[-1], _FALSE)]
            if isinstance(s, ast.Continue):
                return out
            rest = stmts[k + 1:]
            if isinstance(s, ast.If) and _jumps_out(s):
                test = self.expr(s.test)
                truth = known_truth(test)
                if truth is not None:  # a dead branch: pruned
                    return out + self.body((s.body if truth else s.orelse) + rest)
                out.append(("if", test, *self.branch_bodies(s.body + rest, s.orelse + rest)))
                return out
            out.extend(self.stmt(s))
            if isinstance(s, (ast.For, ast.While)) and has_return(s) and rest:
                not_returned = ("unary", "logical_not", ("var", self.returned))
                out.append(("if", not_returned, self.body(rest), []))
                return out
        return out

    def return_(self, s):
        if s.value is not None and self.result is None:
            self.fail(s, "a kernel returning a value")
        if s.value is None:
            out = []
        elif getattr(self, "complex_result", None):  # a device function returning complex values
            out = self.return_complex(s.value)
        elif isinstance(self.result, list):  # a device function returning tuples
            values = s.value.elts if isinstance(s.value, ast.Tuple) else ()
            if len(values) != len(self.result):
                self.fail(s, f"returning other than a tuple of {len(self.result)} values (as the "
                             "function's other returns)")
            out = [("assign", r, self.expr(v)) for r, v in zip(self.result, values)]
        else:
            out = [("assign", self.result, self.expr(s.value))]
        if self.loops:
            out.append(("assign", self.returned, _TRUE))
            out.extend(("assign", go, _FALSE) for go in self.loops if go)
        return out

    def start_of_function(self, tree):
        """The statements a function starts with: its returned flag, cleared,
        when a `return` is inside one of its loops."""
        in_loop = any(has_return(n) for n in own_nodes(tree) if isinstance(n, (ast.For, ast.While)))
        return [("assign", self.returned, _FALSE)] if in_loop else []

    def while_loop(self, s):
        if s.orelse:
            self.fail(s, "while … else")
        test = ("cast", "bool", self.expr(s.test))
        if not (_needs_flag(s) or _runs_statements(test)):
            return [("while", test, self.loop_body(s.body, None))]
        go = self.fresh("go")
        again = ("cast", "bool", self.expr(s.test))  # its own temporaries
        return self.flagged_loop([], go, test, [], s.body, [("assign", go, again)])

    def counted_loop(self, s, kind, target, bounds):
        """`for target in range(start, stop, step)` with the builder's `for`,
        or, when a `break` or `return` may stop it, in the flag form."""
        if not _needs_flag(s):
            return [(kind, target, *bounds, self.loop_body(s.body, None))]
        if kind == "prange":
            self.fail(s, "a break or return inside prange (its iterations run in parallel)")
        start, stop, step = bounds
        counter, bound = self.fresh("counter"), self.fresh("stop")
        setup = [("assign", counter, ("cast", "int64", start)), ("assign", bound, ("cast", "int64", stop))]
        if kind == "for_signed":
            step_name = self.fresh("step")
            setup.append(("assign", step_name, ("cast", "int64", step)))
            step = ("var", step_name)
            test = ("bin", "logical_or",
                    ("bin", "logical_and", ("bin", "greater", step, ("const", 0)),
                     ("bin", "less", ("var", counter), ("var", bound))),
                    ("bin", "logical_and", ("bin", "less", step, ("const", 0)),
                     ("bin", "greater", ("var", counter), ("var", bound))))
        else:
            test = ("bin", "less", ("var", counter), ("var", bound))
        setup.append(("assign", target, ("var", counter)))  # visible after the loop
        go = self.fresh("go")
        advance = [("assign", counter, ("bin", "add", ("var", counter), step)), ("assign", go, test)]
        head = [("assign", target, ("var", counter))]
        return self.flagged_loop(setup, go, test, head, s.body, advance)

    def flagged_loop(self, setup, go, test, head, body, advance):
        """`setup; go = test; while go: head; body; if go: advance`."""
        loop_body = head + self.loop_body(body, go) + [("if", ("var", go), advance, [])]
        return setup + [("assign", go, test), ("while", ("var", go), loop_body)]

    def loop_body(self, stmts, go):
        self.loops = (*self.loops, go)
        try:
            return self.body(stmts)
        finally:
            self.loops = self.loops[:-1]
