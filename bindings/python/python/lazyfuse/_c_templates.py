"""CUDA C's function templates (``template <typename T, int N> __global__
void f(...)``), as CuPy's ``RawModule(name_expressions=["f<float, 4>"])``
instantiates them: a template's tokens are kept when the file is read,
and each instance (``f<float, 4>``, or ``g<T>(...)`` called from another
function) is read again with its type parameters bound to dtypes and its
value parameters to their numbers, under a name Python can hold
(``f__float32__4``).

Read: type parameters (``typename``/``class``) and integer or bool value
parameters, given explicitly. Deduced arguments (``g(x)`` of a template
``g``), defaults, specialisations and templates of classes are refused
with a ``CompileError`` naming the line."""

import re
from dataclasses import dataclass

from ._c_lex import Token
from ._c_tree import SCALARS
from .errors import CompileError


@dataclass
class Template:
    """A function template: its parameters (``(kind, name)``, kind
    ``"type"`` or ``"value"``) and its tokens from the function's first
    word to its closing brace."""
    line: int
    name: str
    params: list
    toks: list


def read(parser):
    """Reads ``template <...>`` and the function after it (at the
    parser's position), keeping its tokens: the ``Template``, or None for
    a declaration without a body."""
    line = parser.take().line  # template
    parser.expect("<")
    params = []
    while not parser.accept(">"):
        if parser.accept("typename") or parser.accept("class"):
            params.append(("type", parser.name()))
        else:
            parser.specifiers()
            params.append(("value", parser.name()))
        if parser.at("="):
            parser.fail("default template arguments are not supported")
        if not parser.at(">"):
            parser.expect(",")
    if not params:
        parser.fail("template specialisations are not supported")
    start, toks = parser.pos, parser.toks
    k = start
    while toks[k].kind != "eof" and toks[k].text not in ("(", ";", "{"):
        k += 1
    if toks[k].text != "(" or toks[k - 1].kind != "id":
        parser.fail("templates of other than functions are not supported", toks[start])
    name = toks[k - 1].text
    while toks[k].kind != "eof" and toks[k].text not in ("{", ";"):
        k += 1
    if toks[k].text == ";":
        parser.pos = k + 1
        return None  # a declaration: its definition follows
    depth = 0
    while True:
        if toks[k].kind == "eof":
            parser.fail(f"the template '{name}' is not closed", toks[start])
        depth += {"{": 1, "}": -1}.get(toks[k].text, 0) if toks[k].kind == "op" else 0
        k += 1
        if depth == 0:
            break
    parser.pos = k
    return Template(line, name, params, toks[start:k] + [Token("eof", "", toks[k - 1].line)])


def arguments(parser):
    """Reads ``<a, b>`` after a template's name in an expression: each
    argument as a dtype name (a type, with the parser's own bindings) or
    an integer."""
    parser.expect("<")
    args = []
    while not parser.accept(">"):
        if parser.starts_type():
            base, _, _ = parser.specifiers()
            if parser.at("*"):
                parser.fail("pointer types as template arguments are not supported")
            args.append(base)
        elif parser.tok.kind == "num" or parser.at("-", "true", "false"):
            negative = parser.accept("-") is not None
            t = parser.take()
            value = {"true": 1, "false": 0}.get(t.text)
            args.append(-_integer(t.text, t.line) if negative else
                        value if value is not None else _integer(t.text, t.line))
        else:
            parser.fail("a template argument that is neither a type nor an integer")
        if not parser.at(">"):
            parser.expect(",")
    return args


def split(expression, types):
    """``("f", [arguments])`` of a name expression such as ``"f<float, 4>"``
    (types as dtype names; ``types``: the file's type names)."""
    m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*<(.*)>\s*", expression, re.S)
    if m is None:
        raise CompileError(f"CUDA C: the name expression {expression!r} is not 'name<arguments>'")
    args = []
    for text in (a.strip() for a in m.group(2).split(",")):
        words = " ".join(text.split())
        if words in types:
            args.append(types[words])
        elif words in ("true", "false"):
            args.append(int(words == "true"))
        else:
            args.append(_integer(words, 0, expression))
    return m.group(1), args


def _integer(text, line, expression=None):
    try:
        return int(text.rstrip("uUlL"), 0)
    except ValueError:
        where = f"the name expression {expression!r}" if expression else f"CUDA C, line {line}"
        raise CompileError(f"{where}: the template argument {text!r} is neither a type nor an "
                           "integer") from None


def instance_name(name, args):
    """The Python name of ``name<args>``."""
    return "__".join([name] + [str(a).replace("-", "m") for a in args])


def bind(template, args):
    """The template's tokens with its value parameters replaced by their
    numbers and its name by the instance's; the type bindings
    (``{parameter: dtype}``)."""
    if len(args) != len(template.params):
        raise CompileError(f"CUDA C, line {template.line}: the template '{template.name}' takes "
                           f"{len(template.params)} arguments, got {len(args)}")
    types, values = {}, {}
    for (kind, param), arg in zip(template.params, args):
        if kind == "type":
            if not isinstance(arg, str) or arg not in SCALARS.values() or arg == "void":
                raise CompileError(f"CUDA C, line {template.line}: the template '{template.name}'"
                                   f"'s parameter {param} takes a type, got {arg!r}")
            types[param] = arg
        else:
            if isinstance(arg, str):
                raise CompileError(f"CUDA C, line {template.line}: the template '{template.name}'"
                                   f"'s parameter {param} takes a number, got the type {arg}")
            values[param] = arg
    name, renamed, toks = instance_name(template.name, args), False, []
    for k, t in enumerate(template.toks):
        if t.kind == "id" and t.text in values:
            value = values[t.text]
            toks += ([Token("op", "(", t.line), Token("op", "-", t.line)] if value < 0 else [])
            toks.append(Token("num", str(abs(value)), t.line))
            toks += [Token("op", ")", t.line)] if value < 0 else []
        elif (not renamed and t.kind == "id" and t.text == template.name
              and template.toks[k + 1].text == "("):
            toks.append(Token("id", name, t.line))
            renamed = True
        else:
            toks.append(t)
    return toks, types
