"""Calls of device functions, inlined: arguments bound (the caller's own
names, compile-time values, slices, ``*args``, keywords and defaults), the
callee's names renamed for the call site, its body translated where it is
called. A mixin of the translator (``_jit.Translator``)."""

import ast
import copy

from ._compile_time import _constant_locals
from ._control import has_return
from ._functions import (
    _Renamer, _as_device_function, _defaults, _inlined, _rebinds, _returns_value, _tuple_arity
)
from .extending import Computed, Function, implementation, is_overloaded
from ._reports import _RAISE, _Raises
from ._zero_division import check_division


class Inlining:
    """The translator's calls of device functions. Expects the
    translator's state and methods (it makes a translator of its own type
    for each inlined body)."""

    def inlines(self, target):
        """Whether a call of ``target`` is inlined: a device function, or a
        function of ``_kernel_math`` (which call one another), or a
        function ``@overload`` (``lazyfuse.extending``) gave a typer."""
        return _as_device_function(target) is not None or is_overloaded(target)

    def library_call(self, name, call):
        """A call of the ``_kernel_math`` function ``name``, inlined."""
        from . import _kernel_math
        return self.inline_call(getattr(_kernel_math, name), call)

    def inline_call(self, target, call):
        """A device function's call, inlined: ``("let", statements, value)``.
        Its locals and parameters are renamed for this call site, except a
        parameter given a name it does not rebind (an array, or a local of
        the caller), which reads that name; its `return`s assign a result
        local, read after the statements."""
        target = self.callee(target, call)
        name = target.name
        if target in self.inlining:
            self.fail(call, f"a recursive call of the device function '{name}'")
        args = self.call_arguments(call, target)
        if len(args) != len(target.params) and not (target.vararg and len(args) >= len(target.params)):
            self.fail(call, f"a call of '{name}' with {len(args)} arguments "
                            f"(it takes {len(target.params)}{' or more' if target.vararg else ''})")
        tree = target.tree
        bound = set(target.params) | {target.vararg} - {None} | {
            n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        self.sites[0] += 1
        prefix = f"_lf_{name}{self.sites[0]}_"
        names = {n: prefix + n for n in bound}
        returns_complex = self.any_complex and self.call_returns_complex(target, args)
        setup, static = self.bind_arguments(target, args, names, bound, call)
        sub = type(self).__new__(type(self))
        sub.__dict__.update(self.__dict__)
        sub.function, sub.loops = target.function, ()
        sub.tree = _Renamer(names).visit(copy.deepcopy(tree))
        sub.env = target.scope()
        sub.env.update(static)
        sub.bound = (set(names.values()) - set(static)) | target.outer
        if target.vararg:  # the elements of `*args`, made by the caller
            sub.bound |= set(self.tuples[names[target.vararg]])
        sub.tree = sub.global_arrays(sub.tree)
        sub.tree = sub.rewrite_grid_groups(sub.tree)
        # A record result the caller assigns to a record: returned as its
        # elements (`_record_values`), a tuple of them.
        sub.record_result = getattr(call, "_lf_record_result", None)
        sub.tree = sub.rewrite_records(sub.tree)
        sub.tree = sub.rewrite_strings(sub.tree)
        sub.constant_locals = _constant_locals(sub.tree, set(names.values()))
        sub.env.setdefault("_lf_raise", _RAISE)
        if sub.debug:  # Numba's Python error model: a division by zero raises
            sub.tree = check_division(sub.tree, sub.env)
        sub.tree = _Raises(sub).apply(sub.tree)
        sub.tree = sub.find_complex_locals(sub.tree)
        if not returns_complex and sub.records and sub.any_complex and sub.returns_complex_field():
            # `return r.c` of a complex field: the caller typed the call as real.
            self.fail(call, f"'{name}' returning a complex field of a record (read the field "
                            "where the record is, or pass the value)")
        sub.complex_result = (f"{prefix}return__lfre", f"{prefix}return__lfim") if (
            returns_complex) else None
        arity = _tuple_arity(sub.tree) if sub.record_result is not None else _tuple_arity(tree)
        if arity:
            sub.result = [f"{prefix}return{i}" for i in range(arity)]
        else:
            sub.result = prefix + "return" if _returns_value(tree) else None
        sub.inlining = self.inlining + [target]
        sub.returned = self.fresh("returned")
        body = sub.start_of_function(sub.tree) + sub.body(sub.tree.body)
        hoisted = sub.hoisted_parts(sub.function_scoped())
        results = (list(sub.complex_result) if returns_complex else sub.result if arity
                   else [sub.result] if sub.result else [])
        if results and not all(isinstance(s, ast.Return) for s in sub.tree.body if has_return(s)):
            hoisted.extend(results)  # assigned in a branch
        statements = ([("hoist", hoisted)] if hoisted else []) + setup + body
        if returns_complex:
            return ("let", statements, ("complex", *[("var", r) for r in results]))
        if arity:
            return ("let", statements, ("tuple", [("var", r) for r in results]))
        value = ("var", sub.result) if sub.result else ("const", 0)
        return ("let", statements, value)

    def callee(self, target, call):
        """The device function a call of ``target`` inlines: ``target``'s
        own, or for an ``@overload``-ed function the implementation its
        typers give for this call (asked once per call site)."""
        if not is_overloaded(target):
            return _as_device_function(target)
        if getattr(call, "_lf_overload", None) is None:
            call._lf_overload = self.overload_implementation(target, call)
        return call._lf_overload

    def overload_implementation(self, func, call):
        """The device function that implements a call of the ``@overload``-ed
        ``func``: what its typers return for the arguments' types."""
        name = getattr(func, "__name__", repr(func))
        if call.keywords:
            self.fail(call, f"keyword arguments in a call of the overloaded '{name}'")
        types = [self.argument_type(a) for a in self.spread_arguments(call)]
        found = implementation(func, types)
        if found is None or not callable(found):
            self.fail(call, f"a call of '{name}' with arguments of types ({', '.join(map(repr, types))}): "
                            "its @overload gives no implementation for them")
        return _as_device_function(found) or _inlined(found)

    def argument_type(self, node):
        """An argument's type as an ``@overload`` typer sees it (see
        ``lazyfuse.extending``)."""
        from ._registry import OPERATIONS  # `_numba`'s (it imports the translator)
        typeof = OPERATIONS["numba_typeof"]
        if isinstance(node, ast.Name) and (node.id in self.arrays or node.id in self.views):
            return Computed(array=True)
        known, value = self.static_value(node)
        if not known:
            return Computed()
        return _value_type(value, typeof)

    def spread_arguments(self, call):
        """A call's positional arguments, ``*t`` of a tuple spread into its
        elements (as names or constants)."""
        out = []
        for arg in call.args:
            if not isinstance(arg, ast.Starred):
                out.append(arg)
                continue
            parts = self.tuple_parts(arg.value)
            if parts is None or any(p[0] not in ("var", "array", "const") for p in parts):
                self.fail(call, "*arguments other than a tuple")
            out += [ast.Constant(p[1]) if p[0] == "const" else ast.Name(p[1], ast.Load())
                    for p in parts]
        return out

    def call_arguments(self, call, target):
        """A call's arguments in the order of the callee's parameters:
        ``*t`` of a tuple spread into its elements (as names or constants),
        keyword arguments in their places, defaults where none is given."""
        out = self.spread_arguments(call)
        given = {k.arg: k.value for k in call.keywords}
        if None in given or set(given) - set(target.params):
            self.fail(call, f"keyword arguments that '{target.name}' does not take")
        defaults = _defaults(target.tree, target.function)
        for param in target.params[len(out):]:
            if param in given:
                out.append(given.pop(param))
            elif param in defaults:
                out.append(ast.Constant(defaults[param]))
            else:
                given_count = len(call.args) + len(call.keywords)
                self.fail(call, f"a call of '{target.name}' with {given_count} arguments (it takes "
                                f"{len(target.params)}), none for '{param}'")
        if given:
            self.fail(call, f"'{target.name}' given {', '.join(given)} twice")
        return out

    def bind_arguments(self, target, args, names, bound, call):
        """The statements binding a callee's parameters to ``args``, and
        the parameters known when compiling (read as globals); may point a
        parameter's name at the caller's own name or at a slice."""
        tree = target.tree
        free = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - bound
        setup, static = [], {}
        for param, arg in zip(target.params, args):
            if self.is_complex(arg):
                setup += self.bind_complex_argument(tree, param, arg, names)
                continue
            if self.is_sliced(arg):  # a row `a[i, :]` passed on: a slice of the callee's own
                view = self.fresh("slice")
                setup += self.make_view(view, arg)
                names[param] = view
                continue
            known, value = self.static_value(arg)
            if known and not _rebinds(tree, param):
                # Known when compiling (a type, a function, a tuple, a
                # number): the body reads it as a global, as Numba's
                # specialisation on literal arguments would.
                static[names[param]] = value
                continue
            if isinstance(arg, ast.Name) and (arg.id in self.arrays or arg.id in self.bound):
                if not _rebinds(tree, param) and arg.id not in free:
                    names[param] = arg.id  # read the caller's name itself
                    continue
                if arg.id in self.arrays:
                    self.fail(call, f"'{target.name}' re-binding its array parameter '{param}'")
            setup.append(("assign", names[param], self.expr(arg)))
        if target.vararg:
            extra = [self.expr(a) for a in args[len(target.params):]]
            setup += self.assign_tuple(names[target.vararg], extra, call)
        return setup, static


def _value_type(value, typeof):
    """The type of a value known when compiling: Numba's for numbers,
    ``Function`` for functions, a tuple of types for a tuple."""
    if isinstance(value, tuple):
        return tuple(_value_type(v, typeof) for v in value)
    if isinstance(value, (bool, int, float, complex)) or hasattr(value, "dtype") and not callable(value):
        return typeof(value)
    if callable(value) or _as_device_function(value) is not None:
        return Function(value)
    return Computed()
