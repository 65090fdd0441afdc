"""Numba's signatures as text: what lazyfuse's kernel and gufunc parsers
read (``float32(float32, float32)``, ``void(float64[:], intp)``)."""

import re


def _signature_text(signature):
    """A Numba signature as lazyfuse's gufunc parser reads it."""
    if isinstance(signature, (tuple, list)):
        signature = f"void({', '.join(repr(t) for t in signature)})"
    return re.sub(r"\buintp\b", "uint64", re.sub(r"\bintp\b", "int64", str(signature)))


def signature_params(text):
    """``(result, [parameter, ...])`` of a signature's text:
    ``void(float32[:, :], int32)`` gives ``("void", ["float32[:, :]", "int32"])``."""
    inner = text[text.index("(") + 1:text.rindex(")")]
    params, depth, current = [], 0, ""
    for ch in inner:
        depth += ch == "[" or ch == "("
        depth -= ch == "]" or ch == ")"
        if ch == "," and depth == 0:
            params.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        params.append(current.strip())
    return text[:text.index("(")].strip(), params
