"""Byte and unicode strings in kernels and the device functions they call.
A mixin of the translator (``_jit.Translator``).

lazyfuse's kernels have no string values: an array of strings (an
argument, or a string field of a record) is the array of its code units
(``_strings``: one more dimension, the string's units), and the tree is
rewritten before it is translated so that what Numba's kernels do with
such arrays is done on the units. ``arr[i] = "XYZ"`` (a ``str`` or
``bytes`` constant, or a global naming one) stores the constant's units
and zeros after them, as NumPy pads; ``arr[i] = other[j]`` copies another
array's string of the same kind (cut or padded to this one's length);
``arr.shape``, ``arr.ndim`` and ``arr.size`` are the strings', not the
units'. Reading a string as a value (``s = arr[i]``, comparing,
printing) is refused with a ``CompileError`` naming it.
"""

import ast
import copy

from ._strings import encode


class StringValues:
    """The translator's strings. Expects the translator's state (``env``,
    ``bound``, ``ndims``) and ``fail``."""

    def start_strings(self, strings):
        """``strings``: each array of strings' code units (its name) and
        its ``(kind, length)`` (``_record_args.Records.strings``)."""
        # One dict for the kernel and every device function inlined into
        # it; shared and global arrays of records add their string fields.
        self.strings = dict(strings or {})

    def rewrite_strings(self, tree):
        """``tree`` with its uses of arrays of strings made uses of their
        code units (see the module's text); ``tree`` itself when it has
        none."""
        if not any(isinstance(n, ast.Name) and n.id in self.strings for n in ast.walk(tree)):
            return tree
        return ast.fix_missing_locations(_Rewriter(self).visit(tree))


class _Rewriter(ast.NodeTransformer):
    """Rewrites one function's tree (see the module's text)."""

    def __init__(self, translator):
        self.t = translator

    def strings(self, node):
        """The name of the array of strings ``node`` is, or None."""
        if isinstance(node, ast.Name) and node.id in self.t.strings:
            return node.id
        return None

    def dims(self, name):
        """The dimensions of the strings (the units' array has one more)."""
        return self.t.ndims[name] - 1

    def temp(self):
        """A fresh local's name (no Python name can clash with it)."""
        name = self.t.fresh("str")
        self.t.bound.add(name)
        return name

    def constant(self, node):
        """The ``str``/``bytes`` value of a constant or of a global naming
        one, or None."""
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
            return node.value
        if isinstance(node, ast.Name) and node.id not in self.t.bound:
            value = self.t.env.get(node.id)
            if isinstance(value, (str, bytes)):
                return value
        return None

    # --- expressions ---------------------------------------------------------------
    def visit_Subscript(self, node):
        name = self.strings(node.value)
        if name is not None and isinstance(node.ctx, ast.Store):
            self.t.fail(node, f"storing into the array of strings '{name}' other than by one "
                              "assignment of a string (arr[i] = \"XYZ\")")
        if name is not None:
            self.t.fail(node, f"reading a string of the array of strings '{name}' (kernels have no "
                              "string values: assign string constants or another array's strings "
                              "to its elements)")
        return self.generic_visit(node)

    def visit_Attribute(self, node):
        name = self.strings(node.value)
        if name is None:
            return self.generic_visit(node)
        dims = self.dims(name)
        if node.attr == "ndim":
            return ast.copy_location(ast.Constant(dims), node)
        if node.attr == "shape":
            return ast.copy_location(ast.Tuple([self.length(name, d) for d in range(dims)],
                                               ast.Load()), node)
        if node.attr == "size":
            size = ast.Constant(1)
            for d in range(dims):
                size = ast.BinOp(size, ast.Mult(), self.length(name, d))
            return ast.copy_location(size, node)
        self.t.fail(node, f"the attribute '{node.attr}' of the array of strings '{name}'")

    def length(self, name, d):
        """``name.shape[d]``: the units' array's length ``d``."""
        return ast.Subscript(ast.Attribute(ast.Name(name, ast.Load()), "shape", ast.Load()),
                             ast.Constant(d), ast.Load())

    # --- statements ----------------------------------------------------------------
    def visit_Assign(self, node):
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
            name = self.strings(node.targets[0].value)
            if name is not None:
                return self.assign(name, node.targets[0].slice, node.value, node)
        if self.strings(node.value) is not None:
            self.t.fail(node, f"binding the array of strings '{node.value.id}' to another name "
                              "(use it by its own name, or pass it to a device function)")
        return self.generic_visit(node)

    def visit_AugAssign(self, node):
        if isinstance(node.target, ast.Subscript) and self.strings(node.target.value) is not None:
            self.t.fail(node, "an augmented assignment of a string")
        return self.generic_visit(node)

    def visit_For(self, node):
        if self.strings(node.iter) is not None:
            self.t.fail(node, "a loop over an array of strings (loop over its indices)")
        return self.generic_visit(node)

    def items(self, name, index, out, node):
        """The indices of one string of ``name``, each a constant or a
        name (computed ones bound to temporaries, ``out`` gets their
        assignments: evaluated once)."""
        elts = index.elts if isinstance(index, ast.Tuple) else [index]
        if len(elts) != self.dims(name) or any(isinstance(e, ast.Slice) for e in elts):
            self.t.fail(node, f"indexing the array of strings '{name}' other than by one string's "
                              f"{self.dims(name)} indices")
        items = []
        for e in elts:
            e = self.visit(e)
            if not isinstance(e, (ast.Constant, ast.Name)):
                temp = self.temp()
                out.append(ast.copy_location(ast.Assign([ast.Name(temp, ast.Store())], e), node))
                e = ast.Name(temp, ast.Load())
            items.append(e)
        return items

    def assign(self, name, index, value, node):
        """``name[index] = value``: a constant's units, or another array's."""
        kind, length = self.t.strings[name]
        out = []
        items = self.items(name, index, out, node)
        text = self.constant(value)
        source = self.strings(value.value) if isinstance(value, ast.Subscript) else None
        if text is not None:
            units = encode(text, kind, f"{self.t.function.__name__}: '{name}'")[:length]
            out += [self.store(name, items, ast.Constant(k), ast.Constant(u), node)
                    for k, u in enumerate(units)]
            start = len(units)
        elif source is not None:
            other, other_length = self.t.strings[source]
            if other != kind:
                self.t.fail(node, "assigning a byte string to a unicode one or back (NumPy "
                                  "converts them as ASCII; kernels copy strings of one kind)")
            of = self.items(source, value.slice, out, node)
            counter = self.temp()
            k = ast.Name(counter, ast.Load())
            read = ast.Subscript(ast.Name(source, ast.Load()),
                                 ast.Tuple(of + [k], ast.Load()), ast.Load())
            start = min(length, other_length)
            out.append(self.loop(counter, 0, start, self.store(name, items, k, read, node), node))
        else:
            self.t.fail(node, f"assigning to a string of '{name}' other than a string constant "
                              "or another array's string (kernels have no string values)")
        if start < length:  # NumPy's padding: zeros after the string's end
            counter = self.temp()
            zero = self.store(name, items, ast.Name(counter, ast.Load()), ast.Constant(0), node)
            out.append(self.loop(counter, start, length, zero, node))
        return out

    def store(self, name, items, unit, value, node):
        """``name[items..., unit] = value`` (the indices copied: a node per use)."""
        index = ast.Tuple(copy.deepcopy(list(items)) + [unit], ast.Load())
        target = ast.Subscript(ast.Name(name, ast.Load()), index, ast.Store())
        return ast.copy_location(ast.Assign([target], value), node)

    def loop(self, counter, start, stop, body, node):
        """``for counter in range(start, stop): body``."""
        bounds = [ast.Constant(start), ast.Constant(stop)]
        return ast.copy_location(ast.For(ast.Name(counter, ast.Store()),
                                         ast.Call(ast.Name("range", ast.Load()), bounds, []),
                                         [body], []), node)
