"""Tuples in kernels (tuple locals, ``a.shape``, ``cuda.grid(2)``,
tuple and namedtuple arguments, ``*args``) and the loops over sequences
(arrays, tuples unrolled, ``enumerate``, ``zip``). A mixin of the
translator (``_jit.Translator``)."""

import ast
import copy

from ._functions import _tuple_arity


class Sequences:
    """The translator's tuples and loops over sequences. Expects ``expr``,
    ``static_value``, ``constant_expr``, ``intrinsic_path``, ``inlines``,
    ``call``, ``assign``, ``body``, ``for_loop``, ``tuples``, ``fields``,
    ``arrays``, ``ndims``, ``declared_shapes``, ``views``, ``bound``,
    ``env``, ``fresh`` and ``fail``."""

    def index_items(self, index):
        """The translated indices of ``index``: a tuple written out, a
        tuple local or a compile-time tuple (one index each), else one."""
        if isinstance(index, ast.Tuple):
            return [self.expr(i) for i in index.elts]
        parts = self.tuple_parts(index)
        return parts if parts is not None else [self.expr(index)]

    def tuple_parts(self, node):
        """The translated elements of a tuple-valued expression that is not
        written out: a tuple local, ``a.shape``, ``cuda.grid(n)`` for n ≥ 2,
        a compile-time tuple, or a device function returning a tuple; None
        for anything else."""
        if isinstance(node, ast.Name) and node.id in self.tuples:
            return [("array", p) if p in self.arrays else ("var", p) for p in self.tuples[node.id]]
        if isinstance(node, ast.Call) and self.vector_type(node.func) is not None:
            return self.vector_parts(node)
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Tuple):
            # (u, v)[k] of tuples written out: the k-th tuple's elements.
            element = self.written_out_element(node)
            if element is not None and self.tuple_valued(element):
                return self.tuple_parts(element)
        if isinstance(node, (ast.Subscript, ast.Attribute)):
            element = self.tuple_element(node)
            if element is not None and element[0] == "var" and element[1] in self.tuples:
                return self.tuple_parts(ast.Name(element[1], ast.Load()))
        if isinstance(node, ast.Tuple):
            known, value = self.static_value(node)
            if known:
                return [self.constant_expr(v, node) for v in value]
            return [self.expr(e) for e in node.elts]
        if (isinstance(node, ast.Attribute) and node.attr == "shape" and isinstance(node.value, ast.Name)
                and (node.value.id in self.declared_shapes or node.value.id in self.views)):
            name = node.value.id
            return [self.dim_length(name, d, node) for d in range(self.ndim_of(name))]
        if (isinstance(node, ast.Attribute) and node.attr == "shape"
                and isinstance(node.value, ast.Name) and node.value.id in self.ndims):
            return [("shape", node.value.id, d) for d in range(self.ndims[node.value.id])]
        known, value = self.static_value(node) if isinstance(node, (ast.Name, ast.Tuple)) else (False, None)
        if known and isinstance(value, tuple):
            return [self.constant_expr(v, node) for v in value]
        if isinstance(node, ast.Call):
            path = self.intrinsic_path(node.func) or ast.unparse(node.func)
            if path.split(".")[-1] in ("grid", "gridsize") and path != "grid":
                value = self.call(node)
                if value[0] in ("grid", "gridsize") and value[1] >= 2:
                    return [("grid_part", value[0], value[1], i) for i in range(value[1])]
                return None
            target = self.env.get(path) if isinstance(node.func, ast.Name) else None
            if self.inlines(target) and _tuple_arity(self.callee(target, node).tree):
                return self.expr(node, tuples=True)
        return None

    def tuple_element(self, node):
        """The element ``t[i]`` (a constant ``i``) or ``t.field`` (of a
        namedtuple argument) of a tuple, or None when ``node`` is neither."""
        component = self.vector_component(node)
        if component is not None:
            return component
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            names = self.fields.get(node.value.id)
            if names and node.attr in names:
                return self.tuple_parts(node.value)[names.index(node.attr)]
            return None
        if not isinstance(node, ast.Subscript) or (
                isinstance(node.value, ast.Name) and node.value.id in self.arrays):
            return None
        if isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
            return None  # `a.shape[d]`: read by `expr`, which names a bad axis
        parts = self.tuple_parts(node.value)
        if parts is None:
            return None
        known, i = self.static_value(node.slice)
        if isinstance(node.slice, ast.UnaryOp) and isinstance(node.slice.op, ast.USub):
            known, i = self.static_value(node.slice.operand)
            i = -i if known else i
        if not known or isinstance(i, bool) or not isinstance(i, int) or not -len(parts) <= i < len(parts):
            self.fail(node, f"an element of a tuple of {len(parts)} other than at a constant index")
        return parts[i]

    def tuple_valued(self, node):
        """Whether ``node`` is a tuple local or a vector (whose elements
        ``tuple_parts`` gives)."""
        return (isinstance(node, ast.Name) and node.id in self.tuples) or bool(self.vector_of(node))

    def assign_tuple(self, name, parts, node):
        """``name = <tuple>``: each element into a local of its own (every
        value first, as ``unpack`` does, so ``t = (t[1], t[0])`` swaps)."""
        if isinstance(parts, tuple):  # a device function's ("let", statements, tuple)
            statements, parts = list(parts[1]), parts[2][1]
        else:
            statements = []
        if name in self.arrays:
            self.fail(node, f"re-binding the array argument '{name}'")
        known = self.tuples.get(name)
        if known is not None and len(known) != len(parts):
            if self.loops or self.branches:
                # The binding in effect after the block would depend on
                # the path taken (Numba refuses to unify such types too).
                self.fail(node, f"re-binding the tuple '{name}' of {len(known)} values to "
                                f"{len(parts)} inside a branch or a loop")
            # Straight-line code (a loop over a tuple, unrolled, binding
            # vectors of each size in turn): new elements from here on.
            known = [f"{name}__lf{i}_{self.fresh('tuple')}" for i in range(len(parts))]
        elements = known or [f"{name}__lf{i}" for i in range(len(parts))]
        temps = [self.fresh("element") for _ in parts]
        statements += [("assign", t, p) for t, p in zip(temps, parts)]
        statements += [("assign", e, ("var", t)) for e, t in zip(elements, temps)]
        self.tuples[name] = elements
        self.bound.update(elements)
        return statements

    def unpack_parts(self, target, parts, node):
        """``a, b = <tuple>`` for the tuple values of ``tuple_parts``."""
        if isinstance(parts, tuple):  # a device function's tuple: assign() unpacks it
            done = self.assign(target, parts, node)
            return list(done[1]) if done[0] == "multi" else [done]
        if len(parts) != len(target.elts):
            self.fail(node, f"unpacking {len(parts)} values into {len(target.elts)} targets")
        temps = [self.fresh("element") for _ in parts]
        out = [("assign", t, p) for t, p in zip(temps, parts)]
        for t, temp in zip(target.elts, temps):
            done = self.assign(t, ("var", temp), node)
            out.extend(done[1] if done[0] == "multi" else [done])
        return out

    def for_each(self, s):
        """``for v in a``, ``for i, v in enumerate(a)``, ``for x, y in
        zip(a, b)`` (nested as Python allows) over 1-d arrays: a counted
        loop over the shortest length whose body first binds the targets
        to the elements. Over tuples (known in length when compiling) the
        loop is unrolled, one copy of the body per element."""
        length, element, count = self.iteration(s.iter, s)

        def bind(target, value):
            if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
                if len(target.elts) != len(value.elts):
                    self.fail(s, f"unpacking {len(value.elts)} values into {len(target.elts)} targets")
                return [a for t, v in zip(target.elts, value.elts) for a in bind(t, v)]
            return [ast.Assign(targets=[target], value=value)]

        if count is not None:
            if any(isinstance(n, (ast.Break, ast.Continue)) for b in s.body for n in ast.walk(b)):
                self.fail(s, "break or continue in a loop over a tuple")
            copies = []
            for k in range(count):
                copies += [ast.fix_missing_locations(ast.copy_location(a, s))
                           for a in bind(s.target, element(k))] + copy.deepcopy(s.body)
            return self.body(copies)
        index = self.fresh("item")
        loop = ast.For(
            target=ast.Name(index, ast.Store()),
            iter=ast.Call(ast.Name("range", ast.Load()), [length], []),
            body=bind(s.target, element(index)) + s.body, orelse=[])
        loop = ast.fix_missing_locations(ast.copy_location(loop, s))
        self.bound.add(index)
        return self.for_loop(loop)

    def iteration(self, iterable, loop):
        """``(length, element, count)`` of what a loop iterates: the length
        as an expression, a function from the index (a local's name, or a
        constant) to the element, and the number of elements where it is
        known when compiling (a tuple), else None."""
        name = lambda n: ast.Name(n, ast.Load())
        at = lambda i: ast.Constant(i) if isinstance(i, int) else name(i)
        if (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name)
                and iterable.func.id == "tuple" and "tuple" not in self.bound
                and len(iterable.args) == 1 and not iterable.keywords):
            iterable = iterable.args[0]  # tuple(t): the same elements
        if isinstance(iterable, ast.Tuple) and any(self.tuple_valued(e) for e in iterable.elts):
            # A tuple of tuples (of vectors) written out: each element
            # bound whole in its copy of the body.
            return (ast.Constant(len(iterable.elts)),
                    lambda i: ast.Subscript(iterable, at(i), ast.Load()), len(iterable.elts))
        parts = None if isinstance(iterable, ast.Call) else self.tuple_parts(iterable)
        if parts is not None:
            return (ast.Constant(len(parts)),
                    lambda i: ast.Subscript(iterable, at(i), ast.Load()), len(parts))
        if isinstance(iterable, ast.Name) and (iterable.id in self.arrays or iterable.id in self.views):
            if (self.ndim_of(iterable.id) or 1) != 1:
                self.fail(loop, "a loop over the rows of an array of other than one dimension")
            return (ast.Call(name("len"), [iterable], []),
                    lambda i: ast.Subscript(iterable, at(i), ast.Load()), None)
        if (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name)
                and not iterable.keywords and iterable.func.id not in self.bound):
            if iterable.func.id == "enumerate" and len(iterable.args) == 1:
                length, element, count = self.iteration(iterable.args[0], loop)
                return length, lambda i: ast.Tuple([at(i), element(i)], ast.Load()), count
            if iterable.func.id == "zip" and iterable.args:
                parts = [self.iteration(a, loop) for a in iterable.args]
                counts = [p[2] for p in parts]
                if any(c is None for c in counts) and any(c is not None for c in counts):
                    self.fail(loop, "zip of tuples and arrays")
                lengths = [p[0] for p in parts]
                length = lengths[0] if len(lengths) == 1 else ast.Call(name("min"), lengths, [])
                count = None if counts[0] is None else min(counts)
                return length, lambda i: ast.Tuple([p[1](i) for p in parts], ast.Load()), count
        self.fail(loop, "a loop other than over range(…), an array, a tuple, enumerate(…) or zip(…)")
