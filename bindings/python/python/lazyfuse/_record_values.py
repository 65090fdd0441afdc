"""Records (NumPy structured dtypes) in kernels and the device functions
they call. A mixin of the translator (``_jit.Translator``).

lazyfuse's kernel builder has arrays of numbers only, so a structured
array is carried as one array per field (``cuda.Dispatcher`` splits the
argument and writes the fields back: ``_record_args``), and the function's
tree is rewritten before it is translated so that every record access is
an access of those arrays: ``a[i].x`` and ``a[i]['x']`` read
``a__lff0[i]``, ``r.h[j]`` (a field that is an array, of a record ``r``)
``r__lff1[0, j]``, ``a.x`` the whole field's array. Whole records and
whole array fields assigned (``a[i] = b[j]``, ``r['h'] = src``) become a
store per field and element. A local bound to a record (``x = a[i]``,
and a device function's record parameter) reads through the record, as
Numba's records are references; its indices are evaluated once, where it
is bound. Global structured arrays (``cuda.const.array_like``) are frozen
field by field, and ``cuda.shared.array``/``cuda.local.array`` of a
record dtype declare an array per field. A string field's array holds its
code units, one more dimension (``_string_values`` rewrites its uses
after this rewrite: ``a[i].s = "XYZ"`` becomes ``a__lff1[i] = "XYZ"``).
"""

import ast
import collections
import copy

import numpy as np

from ._record_args import _field, record_fields
from ._strings import UNITS, code_units, string_layout

#: A record array the kernel reads: its dimensions (of records), whether
#: it is one record (index 0 implied), its fields as ``(path, leaf array,
#: field shape, dtype name)``.
RecordInfo = collections.namedtuple("RecordInfo", "ndim single fields")

#: What a piece of source designates: ``kind`` "arr" (an array of
#: records), "rec" (one record: ``items`` index it) or "field" (a field of
#: those: ``leaf`` its array, ``shape`` the field's own); ``path`` the
#: fields named so far.
Ref = collections.namedtuple("Ref", "kind info items path leaf shape")

_ARRAYS = ("shared.array", "local.array")


class RecordValues:
    """The translator's records. Expects the translator's state (``env``,
    ``bound``, ``arrays``, ``ndims``, ``implicit``) and ``fail``."""

    def start_records(self, records):
        """``records``: each record argument's ``(ndim, single, fields)``
        (``_record_args.Records.infos``)."""
        # One dict of each for the kernel and every device function inlined
        # into it (their names are renamed apart).
        self.records = {name: RecordInfo(*info) for name, info in (records or {}).items()}
        self.record_aliases = {}
        # In a device function whose record result the caller assigns
        # (`a[i] = f(...)`): the layout of that record, its fields'
        # ``(path, shape)`` (``_Rewriter.visit_Return``); None elsewhere.
        self.record_result = None

    def record_names(self):
        """The names that designate records or arrays of records."""
        return set(self.records) | set(self.record_aliases)

    def record_global(self, name, value):
        """The name a global structured array is read by: registered as a
        record array whose fields are frozen as implicit array parameters
        (Numba freezes global arrays as constants)."""
        unique = f"_lf_rglobal{len(self.implicit)}_{name}"
        fields = []
        for k, (path, base, shape) in enumerate(record_fields(value.dtype, f"the global '{name}'")):
            if base.kind == "c":
                from .errors import CompileError
                raise CompileError(f"the global record array '{name}': its complex field "
                                   f"'{'.'.join(path)}' (complex global arrays are not frozen "
                                   "into kernels yet)")
            leaf = f"{unique}__lff{k}"
            data = np.ascontiguousarray(_field(value.reshape(-1) if value.ndim == 0 else value, path))
            if base.kind in "SU":  # its code units (`_string_values`)
                data, self.strings[leaf] = code_units(data), string_layout(base)
            self.implicit[leaf] = data
            self.arrays.add(leaf)
            self.ndims[leaf] = data.ndim
            fields.append((path, leaf, tuple(shape), base.name))
        self.records[unique] = RecordInfo(max(value.ndim, 1), value.ndim == 0, tuple(fields))
        return unique

    def returns_complex_field(self):
        """Whether the (rewritten) function returns a complex value: known
        only once its records' fields are arrays (``return r.c``)."""
        from ._complex_inference import own_nodes
        return any(self.is_complex(n.value) for n in own_nodes(self.tree)
                   if isinstance(n, ast.Return) and n.value is not None)

    def rewrite_records(self, tree):
        """``tree`` with its record accesses made accesses of the fields'
        arrays (see the module's text); ``tree`` itself when it has none."""
        if not (self.records or self.record_aliases
                or any(_declared_record(self, n) is not None for n in ast.walk(tree))):
            return tree
        return ast.fix_missing_locations(_Rewriter(self, tree).visit(tree))


def _static(t, node):
    """The compile-time value of a name or an attribute path, or None."""
    if isinstance(node, ast.Name):
        return None if node.id in t.bound else t.env.get(node.id)
    if isinstance(node, ast.Attribute):
        value = _static(t, node.value)
        return None if value is None else getattr(value, node.attr, None)
    return None


def _record_dtype(value):
    dtype = value if isinstance(value, np.dtype) else getattr(value, "dtype", None)
    return dtype if isinstance(dtype, np.dtype) and dtype.names is not None else None


def _declared_record(t, node):
    """The structured dtype of ``cuda.shared.array(shape, dtype)`` (or
    ``local``) when it is one, else None."""
    if not (isinstance(node, ast.Call) and ast.unparse(node.func).endswith(_ARRAYS)):
        return None
    dtype = {k.arg: k.value for k in node.keywords}.get(
        "dtype", node.args[1] if len(node.args) > 1 else None)
    return None if dtype is None else _record_dtype(_static(t, dtype))


def _index(items):
    return items[0] if len(items) == 1 else ast.Tuple(items, ast.Load())


class _Rewriter(ast.NodeTransformer):
    """Rewrites one function's tree (see the module's text)."""

    def __init__(self, translator, tree):
        self.t = translator
        self.stores = collections.Counter(
            n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))

    def fail(self, node, what):
        self.t.fail(node, what)

    def temp(self):
        """A fresh local's name (no Python name can clash with it)."""
        name = self.t.fresh("rec")
        self.t.bound.add(name)
        return name

    # --- what a piece of source designates ---------------------------------------
    def resolve(self, node):
        """The ``Ref`` ``node`` designates, or None when it is no record,
        array of records or field of one."""
        if isinstance(node, ast.Name):
            info = self.t.records.get(node.id)
            if info is not None:
                return (Ref("rec", info, [ast.Constant(0)], (), None, ()) if info.single
                        else Ref("arr", info, [], (), None, ()))
            return self.t.record_aliases.get(node.id)
        if isinstance(node, ast.Subscript):
            base = self.resolve(node.value)
            if base is None or base.kind == "field":
                return None
            index = node.slice
            if isinstance(index, ast.Constant) and isinstance(index.value, str):
                return self.field(base, index.value, node)
            if base.kind == "arr":
                elts = index.elts if isinstance(index, ast.Tuple) else [index]
                if len(elts) != base.info.ndim or any(
                        isinstance(e, ast.Slice) or isinstance(e, ast.Constant)
                        and isinstance(e.value, str) for e in elts):
                    self.fail(node, "indexing an array of records other than by one record's "
                                    "indices (a[i], a[i, j]) or a field's name")
                return Ref("rec", base.info, [self.visit(e) for e in elts], base.path, None, ())
            if isinstance(index, ast.Constant) and type(index.value) is int:
                names = self.children(base)
                if not -len(names) <= index.value < len(names):
                    self.fail(node, f"field number {index.value} of a record of {len(names)} fields")
                return self.field(base, names[index.value], node)
            self.fail(node, "indexing a record other than by a field's name or number")
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if base is None or base.kind == "field" or (
                    base.kind == "arr" and not base.path and node.attr in ("shape", "size", "ndim")):
                return None
            return self.field(base, node.attr, node)
        return None

    def children(self, ref):
        """The names of the fields directly under ``ref``, in order."""
        depth = len(ref.path)
        names = [p[depth] for p, _, _, _ in ref.info.fields if p[:depth] == ref.path]
        return list(dict.fromkeys(names))

    def field(self, ref, name, node):
        """The field ``name`` of record (or array of records) ``ref``: a
        field ``Ref``, or the record nested there."""
        path = ref.path + (name,)
        for p, leaf, shape, _ in ref.info.fields:
            if p == path:
                return Ref("field", ref.info, ref.items, path, leaf, tuple(shape))
        if any(p[:len(path)] == path for p, _, _, _ in ref.info.fields):
            return ref._replace(path=path)  # a record nested in the record
        self.fail(node, f"the field '{name}' (the record's fields: {', '.join(self.children(ref))})")

    def element(self, ref, extra, ctx):
        """The field's array indexed by the record's indices, then ``extra``."""
        items = [copy.deepcopy(i) for i in ref.items] + list(extra)
        # A record's indices may be the caller's names (a device function
        # reading through its record parameter): names of this scope now.
        self.t.bound |= {n.id for i in ref.items for n in ast.walk(i) if isinstance(n, ast.Name)}
        if not items:
            return ast.Name(ref.leaf, ctx)
        return ast.Subscript(ast.Name(ref.leaf, ast.Load()), _index(items), ctx)

    def use(self, ref, node):
        """``ref`` read as a value: a field's element, or its array."""
        if ref.kind != "field":
            self.fail(node, "a record used as a value (read or write its fields, pass it to a "
                            "device function, or assign it to an element of an array of records)")
        whole = [ast.Slice() for _ in ref.shape] if ref.items else []
        return ast.copy_location(self.element(ref, whole, getattr(node, "ctx", ast.Load())), node)

    # --- expressions ---------------------------------------------------------------
    def visit_Name(self, node):
        if node.id in self.t.records or node.id in self.t.record_aliases:
            ref = self.resolve(node)
            if ref.kind != "arr" or isinstance(node.ctx, ast.Store):
                self.fail(node, f"the record '{node.id}' used as a value or re-bound")
            self.fail(node, f"the array of records '{node.id}' used as a whole (index it, or "
                            "read a field's array: a.x)")
        return node

    def visit_Subscript(self, node):
        base = self.resolve(node.value)
        if base is not None and base.kind == "field":
            extra = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            dims = len(base.shape) + (0 if base.items else base.info.ndim)
            if len(extra) > dims:
                self.fail(node, "more indices than the field has dimensions")
            # fewer: the rest whole (a row of an array field, a view)
            extra = [self.visit(e) for e in extra] + [ast.Slice() for _ in range(dims - len(extra))]
            return ast.copy_location(self.element(base, extra, node.ctx), node)
        ref = self.resolve(node)
        return self.generic_visit(node) if ref is None else self.use(ref, node)

    def visit_Attribute(self, node):
        ref = self.resolve(node)
        if ref is not None:
            return self.use(ref, node)
        base = self.resolve(node.value)
        if base is not None and base.kind == "arr":  # a.shape, a.size, a.ndim
            leaf = next((f[1] for f in base.info.fields if not f[2]), None)
            if leaf is None:
                self.fail(node, f"'{node.attr}' of an array of records whose fields are all arrays")
            return ast.copy_location(ast.Attribute(ast.Name(leaf, ast.Load()), node.attr, node.ctx),
                                     node)
        return self.generic_visit(node)

    def visit_Call(self, node):
        args = []
        for a in node.args:
            ref = self.resolve(a) if isinstance(a, (ast.Name, ast.Subscript, ast.Attribute)) else None
            if ref is None or ref.kind == "field":
                args.append(self.visit(a))
            elif isinstance(node.func, ast.Name) and node.func.id == "len" and ref.kind == "arr":
                args.append(ast.Name(ref.info.fields[0][1], ast.Load()))
            elif isinstance(a, ast.Name):
                args.append(a)  # a device function reads the record by its name
            else:  # f(a[i]): the callee reads through a local bound to the record
                name = self.temp()
                self.t.record_aliases[name] = ref
                args.append(ast.copy_location(ast.Name(name, ast.Load()), a))
        node.args = args
        node.keywords = [self.visit(k) for k in node.keywords]
        node.func = self.visit(node.func)
        return node

    # --- statements ----------------------------------------------------------------
    def visit_Assign(self, node):
        if len(node.targets) != 1:
            return self.generic_visit(node)
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Name):
            dtype = _declared_record(self.t, value)
            if dtype is not None:
                return self.declare(target.id, value, dtype, node)
            ref = self.resolve(value)
            if ref is not None and ref.kind in ("rec", "arr"):
                return self.alias(target.id, ref, node)
            if target.id in self.t.records or target.id in self.t.record_aliases:
                self.fail(node, f"re-binding the record '{target.id}'")
            return self.generic_visit(node)
        ref = self.resolve(target) if isinstance(target, (ast.Subscript, ast.Attribute)) else None
        if ref is None:
            return self.generic_visit(node)
        if ref.kind == "rec":
            return self.assign_record(ref, value, node)
        if ref.kind == "field":
            return self.assign_field(ref, value, node)
        self.fail(node, "assigning to an array of records as a whole")

    def visit_Return(self, node):
        """``return r`` of a record, where the caller assigns the result to
        a record: the record's elements, field by field, as a tuple (the
        caller's per-field result locals, ``assign_returned``)."""
        layout = self.t.record_result
        if layout is None or node.value is None:
            return self.generic_visit(node)
        source = self.resolve(node.value) if isinstance(
            node.value, (ast.Name, ast.Subscript, ast.Attribute)) else None
        if source is None or source.kind != "rec":
            self.fail(node, "returning other than a record where the caller assigns the result "
                            "to a record")
        of = self.leaves(source)
        if [(a.path[len(source.path):], a.shape) for a in of] != layout:
            self.fail(node, "returning a record of another layout than the one its result is "
                            "assigned to (fields or their shapes differ)")
        parts = [self.element(b, [ast.Constant(i) for i in idx], ast.Load())
                 for b in of for idx in np.ndindex(*b.shape)]
        return ast.copy_location(ast.Return(ast.Tuple(parts, ast.Load())), node)

    def assign_returned(self, target, call, node):
        """``a[i] = f(...)`` of a device function returning a record: the
        call's result as one local per element of each field (``f``'s
        ``return`` gives them: ``visit_Return``), then a store of each."""
        out = []
        target = self.bind_items(target, out, node)
        into = self.leaves(target)
        call = self.visit(call)
        call._lf_record_result = [(a.path[len(target.path):], a.shape) for a in into]
        temps = [self.temp() for a in into for _ in np.ndindex(*a.shape)]
        out.append(ast.copy_location(ast.Assign(
            [ast.Tuple([ast.Name(t, ast.Store()) for t in temps], ast.Store())], call), node))
        values = iter(temps)
        for a in into:
            for idx in np.ndindex(*a.shape):
                store = self.element(a, [ast.Constant(i) for i in idx], ast.Store())
                out.append(ast.copy_location(ast.Assign([store], ast.Name(next(values), ast.Load())),
                                             node))
        return out

    def visit_AugAssign(self, node):
        ref = self.resolve(node.target) if isinstance(node.target, (ast.Subscript, ast.Attribute)) else None
        if ref is None:
            return self.generic_visit(node)
        if ref.kind != "field" or ref.shape:
            self.fail(node, "an augmented assignment of a record or of an array field")
        node.target = ast.copy_location(self.element(ref, [], ast.Store()), node.target)
        node.value = self.visit(node.value)
        return node

    def visit_For(self, node):
        if isinstance(node.target, ast.Name) and self.resolve(node.iter) is not None:
            self.fail(node, "a loop over an array of records (loop over its indices)")
        return self.generic_visit(node)

    def alias(self, name, ref, node):
        """``x = a[i]``: ``x`` reads through the record, its indices bound
        to temporaries now."""
        if self.stores[name] != 1:
            self.fail(node, f"the local '{name}' assigned a record and assigned again")
        out, items = [], []
        for item in ref.items:
            if isinstance(item, ast.Constant):
                items.append(item)
                continue
            temp = self.temp()
            out.append(ast.copy_location(ast.Assign([ast.Name(temp, ast.Store())], item), node))
            items.append(ast.Name(temp, ast.Load()))
        self.t.record_aliases[name] = ref._replace(items=items)
        self.t.bound.add(name)
        return out

    def declare(self, name, call, dtype, node):
        """``sm = cuda.shared.array(shape, dtype=record)``: an array per field."""
        if self.stores[name] != 1:
            self.fail(node, f"the local '{name}' assigned an array of records and assigned again")
        shape = {k.arg: k.value for k in call.keywords}.get("shape", call.args[0] if call.args else None)
        dims = list(shape.elts) if isinstance(shape, ast.Tuple) else [shape]
        if len(dims) == 1 and isinstance(dims[0], ast.Constant) and dims[0].value == 0:
            self.fail(node, "a dynamic shared array of records")
        out, fields = [], []
        for k, (path, base, fshape) in enumerate(record_fields(dtype, f"the array '{name}'")):
            leaf = f"{name}__lff{k}"
            sizes = [copy.deepcopy(d) for d in dims] + [ast.Constant(s) for s in fshape]
            unit = base.name
            if base.kind in "SU":  # a string field: its code units (`_string_values`)
                self.t.strings[leaf] = string_layout(base)
                sizes.append(ast.Constant(self.t.strings[leaf][1]))
                self.t.ndims[leaf] = len(sizes)  # known now: `_string_values` reads it
                unit = np.dtype(UNITS[base.kind]).name
            declared = ast.Call(copy.deepcopy(call.func), [], [
                ast.keyword("shape", ast.Tuple(sizes, ast.Load())),
                ast.keyword("dtype", ast.Constant(unit))])
            out.append(ast.copy_location(ast.Assign([ast.Name(leaf, ast.Store())], declared), node))
            fields.append((path, leaf, tuple(fshape), base.name))
            self.t.bound.add(leaf)
        self.t.records[name] = RecordInfo(len(dims), False, tuple(fields))
        self.t.bound.add(name)
        return out

    def leaves(self, ref):
        """The fields under record ``ref``, each as a field ``Ref``."""
        depth = len(ref.path)
        return [Ref("field", ref.info, ref.items, p, leaf, tuple(shape))
                for p, leaf, shape, _ in ref.info.fields if p[:depth] == ref.path]

    def bind_items(self, ref, out, node):
        """``ref`` with its computed indices in temporaries (``out`` gets
        the assignments): evaluated once, before any store."""
        items = []
        for item in ref.items:
            if isinstance(item, (ast.Constant, ast.Name)):
                items.append(item)
                continue
            temp = self.temp()
            out.append(ast.copy_location(ast.Assign([ast.Name(temp, ast.Store())], item), node))
            items.append(ast.Name(temp, ast.Load()))
        return ref._replace(items=items)

    def assign_record(self, target, value, node):
        """``a[i] = b[j]``: each field's elements, field by field in order
        (NumPy assigns records by position)."""
        if isinstance(value, ast.Call) and self.t.inlines(self.t.resolved_value(value.func)):
            return self.assign_returned(target, value, node)
        source = self.resolve(value) if isinstance(value, (ast.Name, ast.Subscript, ast.Attribute)) else None
        if source is None or source.kind != "rec":
            self.fail(node, "assigning to a record other than another record or a device "
                            "function's record result (a[i] = b[j], a[i] = f(...); a tuple is "
                            "not supported)")
        out = []
        source, target = self.bind_items(source, out, node), self.bind_items(target, out, node)
        into, of = self.leaves(target), self.leaves(source)
        if len(into) != len(of) or any(a.shape != b.shape for a, b in zip(into, of)):
            self.fail(node, "assigning a record of another layout (fields or their shapes differ)")
        for a, b in zip(into, of):
            out += self.copy_elements(a, lambda idx, b=b: self.element(b, idx, ast.Load()), node)
        return out

    def assign_field(self, target, value, node):
        """``a[i].x = v``, and a field that is an array assigned whole
        (``r['h'] = src``: another such field, an array or a number)."""
        if not target.items:
            self.fail(node, "assigning to a whole field of an array of records (a.x = v; "
                            "assign its elements: a[i].x = v)")
        if not target.shape:
            return ast.copy_location(ast.Assign([self.element(target, [], ast.Store())],
                                                self.visit(value)), node)
        out = []
        target = self.bind_items(target, out, node)
        source = self.resolve(value) if isinstance(value, (ast.Name, ast.Subscript, ast.Attribute)) else None
        if source is not None:
            if source.kind != "field" or source.shape != target.shape:
                self.fail(node, "assigning to an array field other than an array of its shape")
            source = self.bind_items(source, out, node)
            return out + self.copy_elements(
                target, lambda idx: self.element(source, idx, ast.Load()), node)
        if isinstance(value, ast.Name) and value.id in self.t.arrays:
            return out + self.copy_elements(
                target, lambda idx: ast.Subscript(ast.Name(value.id, ast.Load()), _index(idx),
                                                  ast.Load()), node)
        temp = self.temp()  # a number, broadcast
        out.append(ast.copy_location(ast.Assign([ast.Name(temp, ast.Store())], self.visit(value)), node))
        return out + self.copy_elements(target, lambda idx: ast.Name(temp, ast.Load()), node)

    def copy_elements(self, target, source, node):
        """Stores into each element of field ``target``, the value of
        ``source(indices)``: one store, or loops over the field's shape."""
        counters = [self.temp() for _ in target.shape]
        idx = [ast.Name(c, ast.Load()) for c in counters]
        stmt = ast.Assign([self.element(target, idx, ast.Store())], source(idx) if idx else source([]))
        for counter, size in reversed(list(zip(counters, target.shape))):
            stmt = ast.For(ast.Name(counter, ast.Store()),
                           ast.Call(ast.Name("range", ast.Load()), [ast.Constant(size)], []),
                           [stmt], [])
        return [ast.copy_location(stmt, node)]
