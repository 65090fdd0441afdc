"""CUDA's vector types (``float32x4``, ``int16x2``, and CUDA C's names
for them: ``float4``, ``short2``…), as Numba's ``numba.cuda`` has them.

In Python (on the host) each is a class whose instances are tuples of
its base type's numbers with fields ``x``, ``y``, ``z``, ``w`` (Numba's
simulator has such objects too); passed to a kernel, a vector is a
namedtuple argument: one number per component.

In kernels a vector is a tuple local (``_sequences``): constructing one
(``cuda.float32x4(a, b, c, d)``, or from smaller vectors and numbers,
``float32x4(v2, z, w)``, as Numba allows) converts each component to the
base type, and ``v.x`` … ``v.w`` read the components
(``_vector_values``, the translator's mixin).
"""

import itertools

import numpy as np

from . import _numba

_FIELDS = ("x", "y", "z", "w")
_BASES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64")
# CUDA C's names of the base types (Numba's aliases: `double4` is
# `float64x4`), sized by this platform's C types as Numba sizes them.
_C_NAMES = {
    "char": np.byte, "short": np.short, "int": np.intc, "long": np.int_,
    "longlong": np.longlong, "uchar": np.ubyte, "ushort": np.ushort, "uint": np.uintc,
    "ulong": np.uint, "ulonglong": np.ulonglong, "float": np.single, "double": np.double,
}


class Vector(tuple):
    """A vector value on the host: a tuple of its components, each of the
    base type, read as ``v.x`` … ``v.w``. Constructed as in kernels, from
    numbers and smaller vectors whose components add up to the type's."""

    #: Set on each vector type: its name, base type, number of components.
    name, base_type, num_elements, aliases = "vector", None, 0, ()
    _fields = ()
    #: What the translator (``_vector_values``) knows a vector type by.
    _lf_vector = True

    def __new__(cls, *args):
        flat = []
        for arg in args:
            flat.extend(arg if isinstance(arg, Vector) else (arg,))
        if len(flat) != cls.num_elements:
            raise TypeError(f"{cls.name} expects {cls.num_elements} elements, got {len(flat)}")
        convert = np.dtype(cls.base_type.name).type
        return super().__new__(cls, (convert(v) for v in flat))

    def __getattr__(self, attr):
        if attr in self._fields:
            return self[self._fields.index(attr)]
        raise AttributeError(f"{type(self).__name__} has no attribute {attr!r}")

    def __repr__(self):
        return f"{self.name}({', '.join(str(v) for v in self)})"


def _make_types():
    """``{name: type}`` of every vector type, under its name and aliases."""
    made = {}
    for base, count in itertools.product(_BASES, (1, 2, 3, 4)):
        name = f"{base}x{count}"
        vtype = type(name, (Vector,), {
            "name": name, "base_type": getattr(_numba, base), "num_elements": count,
            "_fields": _FIELDS[:count], "aliases": [], "__slots__": (),
            "__doc__": f"CUDA's vector type {name}: {count} {base} components.",
        })
        vtype.user_facing_object = vtype  # Numba's attribute: what kernels call
        made[name] = vtype
    for alias, ctype in _C_NAMES.items():
        base = np.dtype(ctype).name
        for count in (1, 2, 3, 4):
            vtype = made[f"{base}x{count}"]
            vtype.aliases.append(f"{alias}{count}")
    return made


#: Numba's ``vector_types``: each vector type by its name (``float32x4``).
vector_types = _make_types()
#: Every name a vector type goes by in ``numba.cuda``: names and aliases.
all_names = dict(vector_types)
all_names.update({alias: v for v in vector_types.values() for alias in v.aliases})
