"""``a.view(dtype)`` inside kernels: an array's bytes read as another
integer dtype (``byte_arr[start:stop].view(np.int32)[0]``, or a local
``w = a.view(np.uint16)``), as NumPy and Numba reinterpret them. The array
must be one-dimensional and contiguous (an argument, a shared or local
array, or a slice of one with step 1). lazyfuse's kernel builder has no
bit cast, so an element of the view is assembled from the array's
elements with shifts (little-endian, as every backend is): a wider
element from several narrower ones, a narrower one cut out of a wider
one. Writing through a view is supported when its elements are at least
as wide as the array's (each write stores whole elements). Refused with
a ``CompileError``: views of or as floats, complex numbers or bools, of
arrays of several dimensions, narrowing writes, and ``len``/``shape`` of
a view. A mixin of the translator (``_jit.Translator``)."""

import ast

import numpy as np

from ._calls import _dtype_name


def _unsigned(dtype):
    return f"uint{8 * np.dtype(dtype).itemsize}"


class ByteViews:
    """The translator's byte views. Expects ``byte_views`` (``{name:
    (array or slice, its dtype, the view's dtype)}``), ``array_dtypes``,
    ``declared_dtypes``, ``implicit``, ``views``, ``ndim_of``,
    ``through_view``, ``make_view``, ``is_sliced``, ``expr``, ``fresh``,
    ``bound``, ``arrays``, ``written`` and ``fail``."""

    def byte_view(self, name, source, args, node):
        """``name = source.view(dtype)``: registers the view (the statements
        of a slice it is made of), or None when ``source`` is no array."""
        base, statements = self.viewed_array(source, node)
        if base is None:
            return None
        if len(args) != 1:
            self.fail(node, "view with other than one dtype")
        self.byte_views[name] = self.view_info(base, args[0], node)
        self.bound.add(name)
        return statements

    def viewed_array(self, source, node):
        """``(array or slice name, statements)`` of what ``.view`` is called
        on; ``(None, [])`` when it is no array."""
        if self.is_sliced(source):
            sliced = self.fresh("slice")
            return sliced, self.make_view(sliced, source)
        if isinstance(source, ast.Name) and (source.id in self.arrays or source.id in self.views
                                             or source.id in self.declared_dtypes):
            return source.id, []
        return None, []

    def view_info(self, base, dtype_node, node):
        """``(base, its dtype, the view's dtype)``, checked."""
        array = self.views[base][0] if base in self.views else base
        dtype = self.array_dtypes.get(array) or self.declared_dtypes.get(array) or (
            self.implicit[array].dtype.name if array in self.implicit else None)
        if dtype is None:
            self.fail(node, f"a view of '{array}', whose dtype is not known when compiling")
        view = _dtype_name(dtype_node, self.env)
        for d in (dtype, view):
            if np.dtype(d).kind not in "iu":
                self.fail(node, f"a view of {dtype} as {view} (views in kernels are between integer "
                                "dtypes: lazyfuse's kernel builder has no bit cast for floats)")
        if self.ndim_of(base) != 1 or (base in self.views and any(
                d[0] == "range" and d[2] != 1 for d in self.views[base][1])):
            self.fail(node, "a view of other than a contiguous one-dimensional array")
        return base, dtype, view

    def view_element(self, e):
        """``v[k]`` of a view (a name, or ``a[i:j].view(dtype)`` written out):
        its value, or None when ``e`` indexes no view."""
        info, statements = self.indexed_view(e)
        if info is None:
            return None
        base, dtype, view = info
        k = ("cast", "int64", self.expr(e.slice))
        width, vwidth = np.dtype(dtype).itemsize, np.dtype(view).itemsize
        load = lambda at: ("load", *self.through_view(base, [at], e))
        if vwidth >= width:
            value = ("cast", _unsigned(view), ("const", 0))
            for j in range(vwidth // width):
                part = ("cast", _unsigned(view), ("cast", _unsigned(dtype), load(
                    ("bin", "add", ("bin", "multiply", k, ("const", vwidth // width)), ("const", j)))))
                shifted = ("bin", "left_shift", part, ("cast", _unsigned(view), ("const", 8 * width * j)))
                value = ("bin", "bitwise_or", value, shifted)
        else:
            ratio = width // vwidth
            word = ("cast", _unsigned(dtype), load(("bin", "floor_divide", k, ("const", ratio))))
            shift = ("cast", _unsigned(dtype), ("bin", "multiply", ("bin", "remainder", k, ("const", ratio)),
                                                ("const", 8 * vwidth)))
            value = ("cast", _unsigned(view), ("bin", "right_shift", word, shift))
        value = ("cast", view, value)
        return ("let", statements, value) if statements else value

    def view_store(self, target, value):
        """``v[k] = value`` through a view: the statements, or None when
        ``target`` indexes no view."""
        info, statements = self.indexed_view(target)
        if info is None:
            return None
        base, dtype, view = info
        width, vwidth = np.dtype(dtype).itemsize, np.dtype(view).itemsize
        if vwidth < width:
            self.fail(target, f"writing through a view as {view} of {dtype} elements (narrower "
                              "than the array's)")
        k, bits = self.fresh("k"), self.fresh("bits")
        self.bound.update((k, bits))
        out = statements + [("assign", k, ("cast", "int64", self.expr(target.slice))),
                            ("assign", bits, ("cast", _unsigned(view), ("cast", view, value)))]
        for j in range(vwidth // width):
            at = ("bin", "add", ("bin", "multiply", ("var", k), ("const", vwidth // width)), ("const", j))
            array, indices = self.through_view(base, [at], target)
            if array in self.arrays:
                self.written.add(array)
            part = ("bin", "right_shift", ("var", bits), ("cast", _unsigned(view), ("const", 8 * width * j)))
            out.append(("store", array, indices, ("cast", dtype, ("cast", _unsigned(dtype), part))))
        return out

    def indexed_view(self, e):
        """``(view info, statements)`` of the view ``e`` indexes, or
        ``(None, [])``."""
        if not isinstance(e, ast.Subscript):
            return None, []
        value = e.value
        if isinstance(value, ast.Name) and value.id in self.byte_views:
            return self.byte_views[value.id], []
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                and value.func.attr == "view"):
            base, statements = self.viewed_array(value.func.value, e)
            if base is not None:
                if len(value.args) != 1 or value.keywords:
                    self.fail(e, "view with other than one dtype")
                if isinstance(e.slice, (ast.Slice, ast.Tuple)):
                    self.fail(e, "a view indexed with other than one index")
                return self.view_info(base, value.args[0], e), statements
        return None, []
