"""What a kernel tells the host: ``print`` (a line per thread) and
``raise`` (the raising thread stops; with Numba's ``debug=True`` the first
raise is reported on the host). A mixin of the translator
(``_jit.Translator``)."""

import ast

from ._calls import SPECIAL


#: The hidden array a kernel compiled with ``debug=True`` reports a raise
#: in: the exception's code, then the raising thread's and block's indices.
RAISED = "_lf_raised"

#: What a translated ``raise`` calls (``_Raises``).
_RAISE = type("_RaiseMarker", (), {"_lf_path": "lazyfuse.raise"})()

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


class Reports:
    """The translator's ``print`` and ``raise``. Expects ``expr``,
    ``tuple_parts``, ``tuples``, ``arrays``, ``ndims``, ``written``,
    ``debug``, ``prints``, ``fresh`` and ``fail``."""

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

    def printf_call(self, call):
        """``_lf_printf(piece, ...)``, CUDA C's ``printf`` as ``_c_printf``
        reads it: string constants as text, values as ``print`` writes
        them, nothing between them; one line per thread."""
        self.prints[0] = True
        pieces = []
        for arg in call.args:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                pieces.append(("text", arg.value))
            else:
                pieces.append(self.expr(arg))
        return ("print", pieces)

    def printed(self, node):
        """The pieces that print one argument."""
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bool)) or (
                isinstance(node, ast.Name) and node.id in ("True", "False")):
            return [("text", str(node.value if isinstance(node, ast.Constant) else node.id))]
        chain = ast.unparse(node).split(".")
        if len(chain) == 2 and chain[0] == "cuda" and chain[1] in SPECIAL:
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
