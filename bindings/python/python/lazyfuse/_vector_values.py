"""CUDA's vector types in kernels (the types: ``_vector_types``): a vector
is a tuple local (``_sequences``) whose elements are its components,
read as ``v.x`` … ``v.w``; a constructor (``cuda.float32x4(a, b, c, d)``,
or from smaller vectors and numbers, ``float32x4(v2, z, w)``, as Numba
allows) converts each component to the base type. A vector argument is a
namedtuple one. A mixin of the translator (``_jit.Translator``)."""

import ast

_FIELDS = ("x", "y", "z", "w")


def _is_vector_type(value):
    return isinstance(value, type) and getattr(value, "_lf_vector", False) and value.num_elements > 0


class VectorValues:
    """The translator's vectors: constructors and ``.x``/``.y``/``.z``/``.w``
    over tuple locals. Expects ``env``, ``bound``, ``tuples``, ``fields``,
    ``tuple_parts``, ``expr``, ``static_value`` and ``fail``."""

    def vector_type(self, func):
        """The vector type a called ``func`` names (``cuda.float32x4``,
        ``float4``, a global or closure holding one), or None."""
        if isinstance(func, ast.Name):
            value = None if func.id in self.bound else self.env.get(func.id)
        elif isinstance(func, ast.Attribute):
            chain = ast.unparse(func).split(".")
            if chain[0] in self.bound:
                return None
            value = self.env.get(chain[0])
            for attr in chain[1:]:
                value = getattr(value, attr, None)
        else:
            return None
        return value if _is_vector_type(value) else None

    def vector_of(self, node):
        """The number of components of a vector-valued expression (a
        constructor call, a vector local or argument, an element of a tuple
        of vectors written out), or None."""
        if isinstance(node, ast.Call):
            vtype = self.vector_type(node.func)
            return vtype.num_elements if vtype is not None else None
        if isinstance(node, ast.Name) and node.id in self.tuples:
            names = self.fields.get(node.id)
            if names and list(names) == list(_FIELDS[:len(names)]):
                return len(names)
            return None
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Tuple):
            element = self.written_out_element(node)
            return self.vector_of(element) if element is not None else None
        return None

    def written_out_element(self, node):
        """The element ``(a, b, c)[k]`` (a constant ``k``) of a tuple written
        out, as its source, or None."""
        known, k = self.static_value(node.slice)
        elements = node.value.elts
        if known and isinstance(k, int) and not isinstance(k, bool) and -len(elements) <= k < len(elements):
            return elements[k]
        return None

    def vector_parts(self, node):
        """The translated components of a vector-valued expression: a
        constructor's arguments flattened (a vector argument gives its
        components) and converted to the base type, as Numba's are."""
        if not isinstance(node, ast.Call):
            if isinstance(node, ast.Subscript):
                return self.vector_parts(self.written_out_element(node))
            return self.tuple_parts(node)
        vtype = self.vector_type(node.func)
        if node.keywords:
            self.fail(node, f"keyword arguments to the vector type {vtype.name}")
        parts = []
        for arg in node.args:
            parts.extend(self.vector_parts(arg) if self.vector_of(arg) else [self.expr(arg)])
        if len(parts) != vtype.num_elements:
            self.fail(node, f"{vtype.name} of {len(parts)} components (it has "
                            f"{vtype.num_elements}: numbers and vectors that add up to them)")
        base = vtype.base_type.name
        return [("cast", base, p) for p in parts]

    def vector_component(self, node):
        """``v.x`` … ``v.w`` of a vector-valued expression other than a
        local (``float32x2(a, b).y``), or None."""
        if not (isinstance(node, ast.Attribute) and node.attr in _FIELDS):
            return None
        count = self.vector_of(node.value)
        if not count:
            return None
        if _FIELDS.index(node.attr) >= count:
            self.fail(node, f"the component .{node.attr} of a vector of {count}")
        return self.vector_parts(node.value)[_FIELDS.index(node.attr)]

    def bind_vector(self, name, count):
        """Marks the tuple local ``name`` as a vector of ``count`` components
        (``name.x`` … read them)."""
        self.fields[name] = list(_FIELDS[:count])
