"""CUDA C's ``printf`` in a translated kernel: the format read once, when
translating, into the pieces lazyfuse's ``print`` writes (text, and values
as their dtypes print: integers in decimal, floats as ``%f``), so that a
kernel prints the same line on ``cpu``, ``sim`` and ``cuda``.

Read: ``%d %i %u %f %F %s %c %%`` with C's length modifiers (``l``,
``ll``, ``h``, ``hh``, ``z``), ``%s`` of a string literal, ``%c`` of a
character literal. Widths, flags and precisions other than ``%f``'s six
decimals are refused with a ``CompileError`` naming the conversion, as is
a format that does not end in ``\\n`` (each call prints one line)."""

import re

from . import _c_tree as c

#: One conversion: flags, width, precision, length, conversion character.
_CONVERSION = re.compile(r"%([-+ #0]*)(\d*|\*)(?:\.(\d*|\*))?(hh|h|ll|l|z|j|t|L)?(.)", re.S)
#: The dtype a conversion prints its value as (C converts it so).
_AS = {"d": "int64", "i": "int64", "u": "uint64", "f": "float64", "F": "float64"}
_READ = "%d, %i, %u, %f, %s (of a string literal), %c (of a character literal) and %%"


def printf_call(translator, e):
    """The Python text of ``printf(format, ...)`` (``e``, a ``c.Call``): a
    ``_lf_printf`` call, which the kernel translator reads as ``print``
    without separators."""
    if not e.args or not isinstance(e.args[0], c.Str):
        translator.fail(e, "printf without a string literal as its format")
    text = e.args[0].value
    if not text.endswith("\n"):
        translator.fail(e, "printf of a format that does not end in \\n (each printf "
                           "prints one line here)")
    text, values = text[:-1], list(e.args[1:])
    pieces, at = [], 0
    for m in _CONVERSION.finditer(text):
        pieces.append(repr(text[at:m.start()]))
        at = m.end()
        flags, width, precision, _, conversion = m.groups()
        if conversion == "%" and m.group(0) == "%%":
            pieces.append(repr("%"))
            continue
        if flags or width or (precision is not None and not (conversion in "fF"
                                                             and precision == "6")):
            translator.fail(e, f"printf's '{m.group(0)}' (widths, flags and precisions are "
                               f"not read; lazyfuse prints {_READ})")
        if not values:
            translator.fail(e, f"printf's '{m.group(0)}' without its argument")
        value = values.pop(0)
        pieces.append(_piece(translator, e, m.group(0), conversion, value))
    pieces.append(repr(text[at:]))
    if values:
        translator.fail(e, f"printf with {len(values)} more argument(s) than its format reads")
    return f"_lf_printf({', '.join(p for p in pieces if p not in ('', repr('')))})", "void"


def _piece(translator, e, spec, conversion, value):
    """The Python text that prints ``value`` for one conversion."""
    if conversion == "s":
        if not isinstance(value, c.Str):
            translator.fail(e, f"printf's '{spec}' of other than a string literal")
        return repr(value.value)
    if conversion == "c":
        if not (isinstance(value, c.Num) and value.char):
            translator.fail(e, f"printf's '{spec}' of other than a character literal")
        return repr(chr(value.value))
    if conversion not in _AS:
        translator.fail(e, f"printf's '{spec}' (lazyfuse prints {_READ})")
    text, t = translator.scalar(value)
    return translator.cast(text, t, _AS[conversion])
