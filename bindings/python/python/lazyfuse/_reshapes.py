"""``a.reshape(shape)`` and ``a.copy()`` inside kernels. A reshape is a
view (as NumPy's and Numba's of a contiguous array): its elements are the
array's in C order, so an index of the view is raveled over the new
shape and unraveled over the array's (a write through it writes the
array). The new shape is a number or a tuple known when running (a tuple
argument, ``a.shape``), one length ``-1`` (inferred). A copy is a local
array of the same shape and dtype filled element by element: its shape
must be known when compiling (a global array frozen into the kernel, a
shared or local array). A mixin of the translator (``_jit.Translator``)."""

import ast


def _product(values):
    result = ("const", 1)
    for v in values:
        result = ("bin", "multiply", result, v)
    return result


class Reshapes:
    """The translator's reshapes and copies. Expects ``reshapes``
    (``{view: (array, [length locals])}``), ``arrays``, ``declared_shapes``,
    ``implicit``, ``views``, ``ndim_of``, ``dim_length``, ``tuple_parts``,
    ``expr``, ``fresh``, ``bound`` and ``fail``."""

    def array_method(self, name, value, node):
        """``name = a.reshape(…)`` / ``name = a.copy()``: the statements,
        or None when ``value`` is neither (``a.view(dtype)``: ``_byte_views``)."""
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                and value.func.attr == "view" and not value.keywords):
            return self.byte_view(name, value.func.value, value.args, node)
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                and value.func.attr in ("reshape", "copy") and isinstance(value.func.value, ast.Name)):
            return None
        source = value.func.value.id
        if not (source in self.arrays or source in self.declared_shapes or source in self.reshapes):
            return None
        if value.keywords:
            self.fail(node, f"{value.func.attr} with keyword arguments")
        if value.func.attr == "copy":
            if value.args:
                self.fail(node, "copy with arguments")
            return self.copy_array(name, source, node)
        return self.reshape(name, source, value.args, node)

    def reshape(self, name, source, args, node):
        """``name = source.reshape(shape)``: registers the view and computes
        its lengths once."""
        if source in self.reshapes:
            base, base_dims = self.reshapes[source]
            size = _product([("var", d) for d in base_dims])
        else:
            base, ndim = source, self.ndim_of(source)
            if ndim is None or source in self.views:
                self.fail(node, "a reshape of a slice or of an array of unknown dimensions")
            size = _product([("cast", "int64", self.dim_length(source, d, node)) for d in range(ndim)])
        if len(args) == 1:
            parts = self.tuple_parts(args[0])
            parts = parts if parts is not None else [self.expr(args[0])]
        else:
            parts = [self.expr(a) for a in args]
        if name in self.arrays:
            self.fail(node, f"re-binding the array argument '{name}'")
        lengths = [self.fresh("length") for _ in parts]
        given = ("var", self.fresh("given"))
        out = [("assign", given[1], _product([("cast", "int64", p) for p in parts]))]
        # A -1 makes the product of the lengths given negative: the
        # missing length is the size over the others' product.
        others = ("select", ("bin", "equal", given, ("const", 0)), ("const", 1),
                  ("unary", "negative", given))
        for length, part in zip(lengths, parts):
            part = ("cast", "int64", part)
            out.append(("assign", length, ("select", ("bin", "less", part, ("const", 0)),
                                           ("bin", "floor_divide", size, others), part)))
        self.bound.update(lengths + [given[1]])
        self.reshapes[name] = (base, lengths)
        self.bound.add(name)
        return out

    def reshaped_indices(self, name, indices, node):
        """``(array, indices)`` of the element ``name[indices]`` of a reshape."""
        base, lengths = self.reshapes[name]
        if len(indices) != len(lengths):
            self.fail(node, f"a reshape of {len(lengths)} dimensions indexed with {len(indices)} indices")
        flat = ("const", 0)
        for index, length in zip(indices, lengths):
            flat = ("bin", "add", ("bin", "multiply", flat, ("var", length)), ("cast", "int64", index))
        ndim = self.ndim_of(base)
        out, stride = [], ("const", 1)
        for d in reversed(range(ndim)):
            length = ("cast", "int64", self.dim_length(base, d, node))
            out.append(("bin", "remainder", ("bin", "floor_divide", flat, stride), length))
            stride = ("bin", "multiply", stride, length)
        return base, out[::-1]

    def copy_array(self, name, source, node):
        """``name = source.copy()``: a local array filled from ``source``."""
        if source in self.declared_shapes:
            shape = list(self.declared_shapes[source])
        elif source in self.implicit:
            shape = list(self.implicit[source].shape)
        else:
            self.fail(node, f"{source}.copy() of an array whose shape is known only when running "
                            "(the copy is a local array, whose shape must be known when compiling)")
        dtype = self.array_dtype(source, node)
        counters = [self.fresh("i") for _ in shape]
        self.bound.update(counters)
        body = [("store", name, [("var", c) for c in counters],
                 ("load", source, [("var", c) for c in counters]))]
        for counter, length in reversed(list(zip(counters, shape))):
            body = [("for", counter, ("const", 0), ("const", length), ("const", 1), body)]
        self.declared_shapes[name] = tuple(shape)
        self.bound.add(name)
        return [("declare_array", name, ("local_array", dtype, shape))] + body

    def array_dtype(self, source, node):
        """The dtype of a global array or a shared or local one."""
        if source in self.implicit:
            return self.implicit[source].dtype.name
        dtype = self.declared_dtypes.get(source)
        if dtype is None:
            self.fail(node, f"{source}.copy() of an array whose dtype is not known when compiling")
        return dtype
