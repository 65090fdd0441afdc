"""The CUDA C that typical kernels are written in, read into a small syntax
tree: the preprocessor's ``#define`` (object- and function-like),
``#ifdef``/``#ifndef``/``#if <number>``/``#else``/``#endif``, ``#include``
and ``#pragma`` (both ignored); ``__global__`` and ``__device__``
functions, ``__constant__`` arrays with initialisers, ``extern "C"``
blocks, ``typedef`` of a type; statements (declarations, ``__shared__``
and local arrays, ``if``/``for``/``while``/``do``, ``break``,
``continue``, ``return``) and C's expressions with its precedence.

Function templates are read by ``_c_templates``. What it does not read —
structs, pointer arithmetic,
``goto``, ``switch`` — is a ``CompileError`` naming the line. The tree
is translated into lazyfuse's kernel dialect by ``_c_translate``."""

from . import _c_templates
from ._c_lex import number, tokens
from ._c_tree import (
    Assign, Binary, Block, Call, Cast, Constant, Decl, ExprStmt, For, Function, If, Index, Jump,
    Member, Name, Num, Pointer, Return, SCALARS, Str, Ternary, Unary, While, _IGNORED_WORDS, _PLACES,
    _SIGN_AND_SIZE
)
from .errors import CompileError

# ----------------------------------------------------------------- parser

#: Binary operators by precedence, loosest first (C's table).
_BINARY = [("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="),
           ("<<", ">>"), ("+", "-"), ("*", "/", "%")]
_ASSIGN = ("=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=")
_REFUSED = {"struct": "structs", "union": "unions", "class": "classes",
            "template": "templates here", "goto": "goto", "switch": "switch statements",
            "enum": "enums", "namespace": "namespaces", "operator": "operator overloading"}


class Parser:
    """Reads a translation unit: ``Parser(source).unit()`` gives its
    functions and constant arrays. ``types`` adds type names (CuPy's
    placeholders: ``{"T": "float32"}``)."""

    def __init__(self, source, types=None, defines=None):
        self.toks = tokens(source, defines)
        self.pos = 0
        self.types = dict(SCALARS)
        self.types.update(types or {})
        # Function templates by name and their instances by Python name
        # (`_c_templates`), kept by the parser of the whole file.
        self.templates, self.instances, self.root = {}, {}, self

    def _reader_of(self, toks, types):
        """A parser of one template instance's tokens, sharing this file's
        templates and instances."""
        parser = object.__new__(Parser)
        parser.toks, parser.pos = toks, 0
        parser.types = {**self.root.types, **types}
        parser.templates, parser.instances, parser.root = {}, {}, self.root
        return parser

    def instantiate(self, name, args):
        """The Python name of the instance ``name<args>`` of a template of
        this file, read (once) into the file's instances."""
        root = self.root
        if name not in root.templates:
            self.fail(f"'{name}' is not a template of this source")
        key = _c_templates.instance_name(name, args)
        if key not in root.instances:
            root.instances[key] = None  # a template instantiating itself reads it once
            toks, types = _c_templates.bind(root.templates[name], args)
            functions = []
            self._reader_of(toks, types).top(functions, [])
            root.instances[key] = functions[0]
        return key

    # -- the token stream

    @property
    def tok(self):
        return self.toks[self.pos]

    def peek(self, ahead=1):
        return self.toks[min(self.pos + ahead, len(self.toks) - 1)]

    def take(self):
        t = self.toks[self.pos]
        self.pos += 1
        return t

    def at(self, *texts):
        return self.tok.kind in ("op", "id") and self.tok.text in texts

    def accept(self, text):
        if self.at(text):
            return self.take()
        return None

    def expect(self, text):
        if not self.at(text):
            self.fail(f"expected '{text}'")
        return self.take()

    def fail(self, what, token=None):
        token = token or self.tok
        near = token.text or "the end"
        raise CompileError(f"CUDA C, line {token.line}: {what} (at {near!r})")

    def name(self):
        if self.tok.kind != "id":
            self.fail("expected a name")
        if self.tok.text in _REFUSED:
            self.fail(f"{_REFUSED[self.tok.text]} are not supported")
        return self.take().text

    # -- types

    def starts_type(self, offset=0):
        t = self.peek(offset) if offset else self.tok
        return t.kind == "id" and (t.text in self.types or t.text in _IGNORED_WORDS
                                   or t.text in _PLACES or t.text in _SIGN_AND_SIZE)

    def specifiers(self):
        """Reads a type's words: ``(dtype name, places, const)``."""
        words, places, const = [], set(), False
        while self.tok.kind == "id":
            word = self.tok.text
            if word in _REFUSED:
                self.fail(f"{_REFUSED[word]} are not supported")
            if word in _PLACES:
                places.add(word)
            elif word in _IGNORED_WORDS:
                const = const or word == "const"
            elif word in _SIGN_AND_SIZE or (word in self.types and not any(
                    w in self.types and w not in _SIGN_AND_SIZE for w in words)):
                words.append(word)
            else:
                break
            self.take()
            if word == "extern" and self.tok.kind == "str":  # extern "C" before a function
                self.take()
        if not words:
            self.fail("expected a type")
        if words == ["long", "long", "int"] or words == ["long", "int"]:
            words = words[:-1]
        if words[-1] == "int" and words[0] in ("unsigned", "signed", "short", "long"):
            words = words[:-1]
        key = " ".join(words)
        if key == "signed int":
            key = "int"
        if key not in self.types:
            self.fail(f"the type '{key}' is not supported")
        return self.types[key], places, const

    def pointers(self, base, const=False):
        depth = 0
        while self.at("*", "__restrict__", "__restrict", "restrict", "const", "&"):
            if self.take().text == "*":
                depth += 1
            elif self.toks[self.pos - 1].text == "&":
                self.fail("references are not supported (pass a pointer)")
        if depth > 1:
            self.fail("pointers to pointers are not supported")
        return Pointer(base, const) if depth else base

    # -- the file

    def unit(self):
        functions, constants = [], []
        while self.tok.kind != "eof":
            if self.accept(";"):
                continue
            if self.at("extern") and self.peek().kind == "str":
                self.take(), self.take()
                if self.accept("{"):
                    while not self.accept("}"):
                        if self.tok.kind == "eof":
                            self.fail("extern \"C\" { is not closed")
                        self.top(functions, constants)
                continue
            self.top(functions, constants)
        return functions, constants

    def top(self, functions, constants):
        if self.at("template"):
            template = _c_templates.read(self)
            if template is not None:
                self.root.templates[template.name] = template
            return
        if self.accept("typedef"):
            base, _, _ = self.specifiers()
            alias = self.name()
            self.expect(";")
            self.types[alias] = base
            return
        line = self.tok.line
        base, places, _ = self.specifiers()
        result = self.pointers(base)
        name = self.name()
        if self.at("("):
            kind = "__global__" if "__global__" in places else "__device__"
            params = self.params()
            if self.accept(";"):
                return  # a declaration; its definition follows
            functions.append(Function(line, kind, result, name, params, self.block()))
            return
        dims = []
        while self.accept("["):
            dims.append(self.expr())
            self.expect("]")
        if not self.accept("="):
            self.fail(f"the variable '{name}' at file scope (only __constant__ arrays with their "
                      "values are read: pass other data as arguments)")
        values = self.initializer()
        self.expect(";")
        constants.append(Constant(line, base, name, dims, values))

    def params(self):
        self.expect("(")
        params = []
        if self.at("void") and self.peek().text == ")":
            self.take()
        while not self.accept(")"):
            base, _, const = self.specifiers()
            ctype = self.pointers(base, const)
            params.append((ctype, self.name()))
            if self.accept("["):  # float x[] is a pointer
                self.expect("]")
                params[-1] = (Pointer(base, const), params[-1][1])
            if not self.at(")"):
                self.expect(",")
        return params

    def initializer(self):
        if self.accept("{"):
            values = []
            while not self.accept("}"):
                values.append(self.initializer())
                if not self.at("}"):
                    self.expect(",")
            return values
        return self.assignment()

    # -- statements

    def block(self):
        line = self.expect("{").line
        body = []
        while not self.accept("}"):
            if self.tok.kind == "eof":
                self.fail("a block is not closed")
            body.extend(self.statement())
        return Block(line, body)

    def statement(self):
        """One statement (a list: a declaration of several names is several)."""
        t = self.tok
        if self.at("{"):
            return [self.block()]
        if self.accept(";"):
            return []
        if t.kind == "id" and t.text in _REFUSED:
            self.fail(f"{_REFUSED[t.text]} are not supported")
        if self.accept("if"):
            self.expect("(")
            cond = self.expr()
            self.expect(")")
            then = self.body()
            other = self.body() if self.accept("else") else None
            return [If(t.line, cond, then, other)]
        if self.accept("while"):
            self.expect("(")
            cond = self.expr()
            self.expect(")")
            return [While(t.line, cond, self.body())]
        if self.accept("do"):
            body = self.body()
            self.expect("while")
            self.expect("(")
            cond = self.expr()
            self.expect(")")
            self.expect(";")
            return [While(t.line, cond, body, test_first=False)]
        if self.accept("for"):
            return [self.for_loop(t)]
        if self.at("break", "continue"):
            self.take()
            self.expect(";")
            return [Jump(t.line, t.text)]
        if self.accept("return"):
            value = None if self.at(";") else self.expr()
            self.expect(";")
            return [Return(t.line, value)]
        if self.starts_type() and not (self.peek().text == "(" and t.text in self.types
                                       and t.text not in SCALARS):
            decls = self.declaration()
            self.expect(";")
            return decls
        expr = self.expr()
        self.expect(";")
        return [ExprStmt(t.line, expr)]

    def body(self):
        stmts = self.statement()
        return stmts[0] if len(stmts) == 1 else Block(self.tok.line, stmts)

    def for_loop(self, t):
        self.expect("(")
        init = []
        if not self.accept(";"):
            if self.starts_type():
                init = self.declaration()
            else:
                init = [ExprStmt(self.tok.line, e) for e in self.expr_list()]
            self.expect(";")
        cond = None if self.at(";") else self.expr()
        self.expect(";")
        step = [] if self.at(")") else [ExprStmt(self.tok.line, e) for e in self.expr_list()]
        self.expect(")")
        return For(t.line, init, cond, step, self.body())

    def expr_list(self):
        items = [self.assignment()]
        while self.accept(","):
            items.append(self.assignment())
        return items

    def declaration(self):
        line = self.tok.line
        base, places, const = self.specifiers()
        decls = []
        while True:
            ctype = self.pointers(base)
            name = self.name()
            dims = []
            while self.accept("["):
                dims.append(None if self.at("]") else self.expr())
                self.expect("]")
            init = self.initializer() if self.accept("=") else None
            if isinstance(ctype, Pointer) and not dims:
                self.fail(f"the pointer variable '{name}' (index the array parameters themselves: "
                          "pointer arithmetic is not supported)")
            place = "__shared__" if "__shared__" in places else ""
            decls.append(Decl(line, ctype, name, dims, init, place, const))
            if not self.accept(","):
                return decls

    # -- expressions

    def expr(self):
        e = self.assignment()
        if self.at(","):
            self.fail("the comma operator is not supported")
        return e

    def assignment(self):
        left = self.ternary()
        if self.at(*_ASSIGN):
            t = self.take()
            return Assign(t.line, t.text, left, self.assignment())
        return left

    def ternary(self):
        cond = self.binary(0)
        if self.at("?"):
            t = self.take()
            then = self.assignment()
            self.expect(":")
            return Ternary(t.line, cond, then, self.ternary())
        return cond

    def binary(self, level):
        if level == len(_BINARY):
            return self.unary()
        left = self.binary(level + 1)
        while self.tok.kind == "op" and self.tok.text in _BINARY[level]:
            t = self.take()
            left = Binary(t.line, t.text, left, self.binary(level + 1))
        return left

    def unary(self):
        t = self.tok
        if self.at("-", "+", "!", "~", "*", "&"):
            self.take()
            return Unary(t.line, t.text, self.unary())
        if self.at("++", "--"):
            self.take()
            return Unary(t.line, t.text + "pre", self.unary())
        if self.at("sizeof"):
            self.take()
            self.expect("(")
            if self.starts_type():
                base, _, _ = self.specifiers()
                ctype = self.pointers(base)
                self.expect(")")
                return Num(t.line, 8 if isinstance(ctype, Pointer) else _size(ctype), "uint64")
            self.fail("sizeof of an expression (sizeof(type) is read)")
        if self.at("(") and self.starts_type(1):
            self.take()
            base, _, _ = self.specifiers()
            ctype = self.pointers(base)
            self.expect(")")
            return Cast(t.line, ctype, self.unary())
        return self.postfix()

    def postfix(self):
        e = self.primary()
        while True:
            t = self.tok
            if self.accept("["):
                e = Index(t.line, e, self.expr())
                self.expect("]")
            elif self.accept("("):
                if not isinstance(e, Name):
                    self.fail("a call of other than a function's name")
                args = []
                while not self.accept(")"):
                    args.append(self.assignment())
                    if not self.at(")"):
                        self.expect(",")
                e = Call(t.line, e.id, args)
            elif self.accept("."):
                e = Member(t.line, e, self.name())
            elif self.at("->"):
                self.fail("structs are not supported")
            elif self.at("++", "--"):
                self.take()
                e = Unary(t.line, t.text + "post", e)
            else:
                return e

    def primary(self):
        t = self.tok
        if t.kind == "num":
            self.take()
            value, ctype = number(t)
            return Num(t.line, value, ctype)
        if t.kind == "id" and t.text in self.root.templates:
            self.take()
            if not self.at("<"):
                self.fail(f"a use of the template '{t.text}' without its arguments (write "
                          f"{t.text}<float>(...): deduced arguments are not read)", t)
            return Name(t.line, self.instantiate(t.text, _c_templates.arguments(self)))
        if t.kind == "id":
            if t.text in ("true", "false"):
                self.take()
                return Num(t.line, t.text == "true", "bool")
            if t.text == "::":
                self.take()
            return Name(t.line, self.name())
        if self.accept("::"):
            return Name(t.line, self.name())
        if self.accept("("):
            e = self.expr()
            self.expect(")")
            return e
        if t.kind == "str" and t.text.startswith("'"):
            self.take()
            text = _unescape(t.text[1:-1], t, self)
            if len(text) != 1:
                self.fail("a character literal of other than one character", t)
            return Num(t.line, ord(text), "int32", char=True)
        if t.kind == "str":
            text = ""
            while self.tok.kind == "str" and self.tok.text.startswith('"'):  # "a" "b" is "ab"
                s = self.take()
                text += _unescape(s.text[1:-1], s, self)
            return Str(t.line, text)
        self.fail("expected an expression")


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"',
            "a": "\a", "b": "\b", "f": "\f", "v": "\v", "?": "?"}


def _unescape(body, token, parser):
    """A literal's text with C's simple escapes read."""
    out, i = [], 0
    while i < len(body):
        if body[i] != "\\":
            out.append(body[i])
            i += 1
            continue
        escape = body[i + 1:i + 2]
        if escape not in _ESCAPES:
            parser.fail(f"the escape \\{escape} in a literal", token)
        out.append(_ESCAPES[escape])
        i += 2
    return "".join(out)


def _size(dtype):
    import numpy as np
    return 1 if dtype == "bool" else np.dtype(dtype).itemsize


def kernel_parameters(source, name, types=None, defines=None):
    """The parameters of the ``__global__`` function ``name`` of ``source``
    (its header only: the body may hold what the parser does not read);
    None when there is none."""
    parser = Parser(source, types, defines)
    toks = parser.toks
    for k, t in enumerate(toks):
        if not (t.kind == "id" and t.text == name and toks[k + 1].text == "("):
            continue
        start = k
        while start > 0 and toks[start - 1].text not in (";", "}", "{"):
            start -= 1
        if any(u.text == "__global__" for u in toks[start:k]):
            parser.pos = k + 1
            return parser.params()
    return None


def parse(source, types=None, defines=None, expressions=()):
    """``(functions, constants, instances)`` of a CUDA C source, with the
    template instances ``expressions`` names (``"f<float>"``) read too
    (``instances``: each expression's Python name)."""
    parser = Parser(source, types, defines)
    functions, constants = parser.unit()
    instances = {}
    for expression in expressions:
        name, args = _c_templates.split(expression, parser.types)
        if name not in parser.templates:
            known = ", ".join(sorted(parser.templates)) or "none"
            raise CompileError(f"the name expression {expression!r}: '{name}' is not a template "
                               f"of this source (its templates: {known})")
        instances[expression] = parser.instantiate(name, args)
    functions += [f for f in parser.instances.values() if f is not None]
    return functions, constants, instances
