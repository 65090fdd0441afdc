"""Slices of arrays in kernels (``row = a[i, :]``, ``tile[6:1:-2]``,
passed to device functions): views onto their array, whose indices map
onto the array's. A mixin of the translator (``_jit.Translator``)."""

import ast


class Slices:
    """The translator's slices. Expects ``expr``, ``static_value``,
    ``views``, ``arrays``, ``declared_shapes``, ``ndims``, ``fresh`` and
    ``fail``."""

    def is_sliced(self, node):
        """Whether ``node`` is ``a[...]`` of an array with a slice in it."""
        if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)):
            return False
        name = node.value.id
        if not (name in self.arrays or name in self.declared_shapes or name in self.views):
            return False
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return any(isinstance(item, ast.Slice) for item in items)

    def ndim_of(self, name):
        """The dimensions of an array, a shared or local array, or a slice."""
        if name in self.views:
            return sum(d[0] == "range" for d in self.views[name][1])
        if name in self.reshapes:
            return len(self.reshapes[name][1])
        if name in self.declared_shapes:
            return len(self.declared_shapes[name])
        return self.ndims.get(name)

    def dim_length(self, name, dim, node):
        """The length of axis ``dim`` of a named array or slice."""
        if name in self.views:
            ranges = [d for d in self.views[name][1] if d[0] == "range"]
            if not -len(ranges) <= dim < len(ranges):
                self.fail(node, f"{name}.shape[{dim}] of a slice of {len(ranges)} dimensions")
            return ranges[dim][3]
        if name in self.reshapes:
            lengths = self.reshapes[name][1]
            if not -len(lengths) <= dim < len(lengths):
                self.fail(node, f"{name}.shape[{dim}] of a reshape of {len(lengths)} dimensions")
            return ("var", lengths[dim])
        declared = self.declared_shapes.get(name)
        if declared is not None:
            return ("const", declared[dim])
        return ("shape", name, dim)

    def shape_at(self, name, index, node):
        """``name.shape[index]`` with an index known only when running: the
        axis's length, a negative index counting from the end. Out of
        range, Python's ``IndexError("tuple index out of range")`` is
        raised (reported by a ``debug=True`` kernel, as Numba's; the
        thread goes on with a length of 0)."""
        ndim = self.ndim_of(name)
        if ndim is None:
            self.fail(node, f"{name}.shape of an array of unknown dimensions")
        axis = self.fresh("axis")
        at = ("var", axis)
        self.raises.append((IndexError, "tuple index out of range"))
        code = len(self.raises)
        length = ("cast", "int64", ("const", 0))
        for d in reversed(range(ndim)):
            length = ("select", ("bin", "equal", at, ("const", d)),
                      ("cast", "int64", self.dim_length(name, d, node)), length)
        outside = ("bin", "logical_or", ("bin", "less", at, ("const", 0)),
                   ("bin", "greater_equal", at, ("const", ndim)))
        return ("let", [
            ("assign", axis, ("cast", "int64", index)),
            ("assign", axis, ("select", ("bin", "less", at, ("const", 0)),
                              ("bin", "add", at, ("const", ndim)), at)),
            ("if", outside, [("expr", self.raised(code))], []),
        ], length)

    def through_view(self, name, indices, node):
        """``(array, indices)`` of an element of ``name``: a slice's indices
        mapped onto its array's."""
        if name in self.reshapes:
            return self.reshaped_indices(name, indices, node)
        if name not in self.views:
            return name, indices
        base, dims = self.views[name]
        ranges = sum(d[0] == "range" for d in dims)
        if len(indices) != ranges:
            self.fail(node, f"a slice of {ranges} dimensions indexed with {len(indices)} indices")
        given, out = iter(indices), []
        for d in dims:
            if d[0] == "fixed":
                out.append(d[1])
            else:
                i = next(given)
                out.append(("bin", "add", d[1], ("bin", "multiply", i, ("const", d[2]))))
        return base, out

    def make_view(self, name, node):
        """``name = a[<slices>]``: registers the slice; the statements that
        compute its starts and lengths once, where it is made."""
        source = node.value.id
        base, dims = self.views.get(source, (source, None))
        ndim = self.ndim_of(source)
        if ndim is None:
            self.fail(node, "a slice of an array of unknown dimensions")
        if dims is None:
            dims = [("range", ("const", 0), 1, self.dim_length(source, d, node)) for d in range(ndim)]
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(items) > ndim:
            self.fail(node, f"{len(items)} indices of an array of {ndim} dimensions")
        ranges = [i for i, d in enumerate(dims) if d[0] == "range"]
        items = list(items) + [ast.Slice()] * (len(ranges) - len(items))
        statements, new = [], list(dims)
        for position, item in zip(ranges, items):
            _, start0, step0, length0 = dims[position]
            if not isinstance(item, ast.Slice):
                at = self.fresh("at")
                statements.append(("assign", at, self.expr(item)))
                new[position] = ("fixed", ("bin", "add", start0, ("bin", "multiply", ("var", at),
                                                                     ("const", step0))))
                continue
            known, step = self.static_value(item.step) if item.step else (True, 1)
            if not known or not isinstance(step, int) or step == 0:
                self.fail(node, "a slice step other than a non-zero constant")
            last = ("bin", "subtract", length0, ("const", 1))
            if step > 0:
                start = self.slice_bound(item.lower, ("const", 0), length0, ("const", 0), length0)
                stop = self.slice_bound(item.upper, length0, length0, ("const", 0), length0)
                span = ("bin", "subtract", stop, start)
            else:  # counting down: from the last element to before the first
                start = self.slice_bound(item.lower, last, length0, ("const", -1), last)
                stop = self.slice_bound(item.upper, ("const", -1), length0, ("const", -1), last)
                span = ("bin", "subtract", start, stop)
            first, count = self.fresh("start"), self.fresh("length")
            statements += [
                ("assign", first, start),
                ("assign", count, ("bin", "maximum", ("const", 0), ("bin", "floor_divide",
                 ("bin", "add", span, ("const", abs(step) - 1)), ("const", abs(step))))),
            ]
            new[position] = ("range", ("bin", "add", start0, ("bin", "multiply", ("var", first),
                                                              ("const", step0))),
                             step0 * step, ("var", count))
        self.views[name] = (base, new)
        return statements

    def slice_bound(self, bound, default, length, low, high):
        """A slice's start or stop as Python reads it: negative counts from
        the end, then clipped to ``[low, high]``."""
        if bound is None:
            return default
        value = self.expr(bound)
        fromend = ("bin", "add", value, length)
        value = ("select", ("bin", "less", value, ("const", 0)), fromend, value)
        return ("bin", "minimum", ("bin", "maximum", value, low), high)
