"""Byte and unicode strings (NumPy's ``S`` and ``U`` dtypes) as kernels
hold them: an array of strings is an array of its code units, one more
dimension than the strings', of ``uint8`` (``S``: bytes) or ``uint32``
(``U``: UTF-32 code points, as NumPy stores them), each string its
``itemsize`` units with zeros after its end (NumPy's padding). Used by
``_record_args`` (arguments and string fields of records, copied in and
back) and ``_string_values`` (constants stored into elements).
"""

import numpy as np

from .errors import CompileError

#: The dtype of one code unit of each kind of string.
UNITS = {"S": np.uint8, "U": np.uint32}


def string_layout(dtype):
    """``(kind, length)`` of an ``S``/``U`` dtype: ``"S"`` or ``"U"``
    and the code units each string holds (its maximum length)."""
    dtype = np.dtype(dtype)
    return dtype.kind, dtype.itemsize // np.dtype(UNITS[dtype.kind]).itemsize


def code_units(strings):
    """A C-ordered copy of an array of strings as its code units: of the
    array's shape followed by the strings' length."""
    kind, length = string_layout(strings.dtype)
    native = np.dtype(f"{kind}{length}")  # native byte order: the units as numbers
    data = np.array(strings, dtype=native, order="C")
    # Flattened before the view: a 0-d array cannot change its itemsize.
    return data.reshape(-1).view(UNITS[kind]).reshape(data.shape + (length,))


def from_code_units(units, dtype):
    """The strings of ``dtype`` (``S``/``U``) whose code units ``units`` holds."""
    kind, length = string_layout(dtype)
    data = np.ascontiguousarray(units, dtype=UNITS[kind])
    return data.reshape(-1).view(f"{kind}{length}").reshape(data.shape[:-1])


def encode(value, kind, what):
    """The code units of a string constant (``str`` or ``bytes``) stored
    into a string of ``kind``, as NumPy converts it: a ``str`` into
    bytes must be ASCII, ``bytes`` into unicode is read as ASCII."""
    try:
        if kind == "S":
            return list(value.encode("ascii") if isinstance(value, str) else value)
        return [ord(c) for c in (value.decode("ascii") if isinstance(value, bytes) else value)]
    except UnicodeError:
        raise CompileError(f"{what}: the string {value!r} stored into an array of "
                           f"{'byte' if kind == 'S' else 'unicode'} strings is not ASCII "
                           "(NumPy refuses it too)") from None
