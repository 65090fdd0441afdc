"""CUDA C's tokens, after its preprocessor: comments dropped, continued
lines joined, ``#define`` (object- and function-like) expanded,
``#ifdef``/``#ifndef``/``#if <number>``/``#else``/``#endif`` followed,
``#include`` and ``#pragma`` ignored; numbers with their C types."""

import re
from dataclasses import dataclass

from .errors import CompileError

_TOKEN = re.compile(r"""
    (?P<num>(?:0[xX][0-9a-fA-F]+|(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?)[fFuUlL]*)
  | (?P<id>[A-Za-z_]\w*)
  | (?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<op><<=|>>=|->|\+\+|--|&&|\|\||==|!=|<=|>=|\+=|-=|\*=|/=|%=|&=|\|=|\^=|<<|>>|::|[-+*/%<>=!~&|^?:;,.(){}\[\]\#])
  | (?P<space>[ \t\r\f\v]+)
  | (?P<newline>\n)
""", re.VERBOSE)


@dataclass
class Token:
    kind: str
    text: str
    line: int


def _strip_comments(source):
    """The source without comments (newlines kept, so lines still count)
    and with continued lines joined (their newlines moved after them)."""
    out, i, n = [], 0, len(source)
    while i < n:
        if source.startswith("//", i):
            j = source.find("\n", i)
            i = n if j < 0 else j
        elif source.startswith("/*", i):
            j = source.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * source.count("\n", i, j))
            i = j
        elif source[i] in "\"'":
            m = re.compile(r"%s(?:[^%s\\\n]|\\.)*%s" % ((source[i],) * 3)).match(source, i)
            end = m.end() if m else i + 1
            out.append(source[i:end])
            i = end
        else:
            out.append(source[i])
            i += 1
    text = "".join(out)
    # A backslash at a line's end continues it: the newline moves after.
    lines, carried = [], 0
    for piece in text.split("\n"):
        if piece.endswith("\\"):
            lines.append(piece[:-1] + " ")
            carried += 1
            continue
        lines.append(piece + "\n" * (carried + 1))
        carried = 0
    return "".join(lines)


def _lex_line(text, line):
    tokens, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise CompileError(f"CUDA C, line {line}: cannot read {text[pos:pos + 10]!r}")
        kind = m.lastgroup
        if kind == "newline":
            line += 1
        elif kind != "space":
            tokens.append(Token(kind, m.group(), line))
        pos = m.end()
    return tokens


def tokens(source, defines=None):
    """The tokens of ``source`` after its preprocessor directives, macros
    expanded. ``defines`` adds object-like macros (``-D`` options)."""
    macros = {name: ([], _lex_line(str(value), 0)) if not isinstance(value, tuple) else value
              for name, value in (defines or {}).items()}
    out, active = [], [True]
    for number, text in enumerate(_strip_comments(source).split("\n"), 1):
        stripped = text.strip()
        if stripped.startswith("#"):
            _directive(stripped[1:].strip(), number, macros, active)
            continue
        if all(active):
            out.extend(_lex_line(text, number))
    if len(active) != 1:
        raise CompileError("CUDA C: an #if without its #endif")
    return _expand(out, macros, set()) + [Token("eof", "", out[-1].line if out else 1)]


def _directive(text, line, macros, active):
    word, _, rest = text.partition(" ")
    word, rest = word.strip(), rest.strip()
    if word in ("ifdef", "ifndef"):
        active.append((rest in macros) == (word == "ifdef"))
    elif word == "if":
        body = _expand(_lex_line(rest, line), macros, set())
        if len(body) != 1 or body[0].kind != "num":
            raise CompileError(f"CUDA C, line {line}: #if of other than a number (#ifdef is read)")
        active.append(number(body[0])[0] != 0)
    elif word == "else":
        if len(active) == 1:
            raise CompileError(f"CUDA C, line {line}: #else without #if")
        active[-1] = not active[-1]
    elif word == "endif":
        if len(active) == 1:
            raise CompileError(f"CUDA C, line {line}: #endif without #if")
        active.pop()
    elif not all(active) or word in ("include", "pragma", ""):
        return
    elif word == "define":
        m = re.match(r"([A-Za-z_]\w*)(\(([^)]*)\))?\s*(.*)$", rest)
        if m is None:
            raise CompileError(f"CUDA C, line {line}: cannot read #define {rest}")
        params = None if m.group(2) is None else [p.strip() for p in m.group(3).split(",") if p.strip()]
        macros[m.group(1)] = (params, _lex_line(m.group(4), line))
    elif word == "undef":
        macros.pop(rest, None)
    else:
        raise CompileError(f"CUDA C, line {line}: the directive #{word} is not read")


def _expand(toks, macros, hidden):
    """``toks`` with macros replaced (recursively; a macro is not expanded
    inside itself, as in C)."""
    out, i = [], 0
    while i < len(toks):
        t = toks[i]
        entry = macros.get(t.text) if t.kind == "id" and t.text not in hidden else None
        if entry is None:
            out.append(t)
            i += 1
            continue
        params, body = entry
        if params is None:
            body = [Token(b.kind, b.text, t.line) for b in body]
            out.extend(_expand(body, macros, hidden | {t.text}))
            i += 1
            continue
        if i + 1 >= len(toks) or toks[i + 1].text != "(":
            out.append(t)
            i += 1
            continue
        args, depth, current, j = [], 0, [], i + 2
        while j < len(toks):
            u = toks[j]
            if u.text == "(":
                depth += 1
            elif u.text == ")":
                if depth == 0:
                    break
                depth -= 1
            if u.text == "," and depth == 0:
                args.append(current)
                current = []
            else:
                current.append(u)
            j += 1
        else:
            raise CompileError(f"CUDA C, line {t.line}: the macro {t.text}( is not closed")
        if current or args:
            args.append(current)
        if len(args) != len(params):
            raise CompileError(f"CUDA C, line {t.line}: macro {t.text} takes {len(params)} "
                               f"arguments, got {len(args)}")
        bound = dict(zip(params, [_expand(a, macros, hidden) for a in args]))
        replaced = []
        for b in body:
            if b.kind == "id" and b.text in bound:
                replaced.append(Token("op", "(", t.line))
                replaced.extend(bound[b.text])
                replaced.append(Token("op", ")", t.line))
            else:
                replaced.append(Token(b.kind, b.text, t.line))
        out.extend(_expand(replaced, macros, hidden | {t.text}))
        i = j + 1
    return out


def number(token):
    """A number token's value and C type."""
    text = token.text
    hexadecimal = text.lower().startswith("0x")
    # A hexadecimal number's f is a digit; its suffixes are u and l only.
    suffix = re.search(r"[uUlL]*$" if hexadecimal else r"[fFuUlL]*$", text).group()
    body = text[:len(text) - len(suffix)]
    lowered = suffix.lower()
    if not hexadecimal and (any(c in body for c in ".eE") or "f" in lowered):
        return float(body), ("float32" if "f" in lowered else "float64")
    octal = body.startswith("0") and body != "0" and not hexadecimal
    value = int(body, 16 if hexadecimal else 8 if octal else 10)
    unsigned, long = "u" in lowered, "l" in lowered
    # C's type of an integer constant: the first of int, unsigned int
    # (hexadecimal and octal only), long long, unsigned long long that holds it.
    if long or value > 0xFFFFFFFF or (value > 0x7FFFFFFF and not unsigned
                                      and not (hexadecimal or octal)):
        return value, "uint64" if unsigned else "int64"
    if unsigned or value > 0x7FFFFFFF:
        return value, "uint32"
    return value, "int32"
