"""The functions a kernel inlines: ``@cuda.jit(device=True)`` functions,
functions defined inside a kernel, and the helpers that read their source
(``_parse``, ``_where``) and their trees (returns, rebinding, renaming).
Used by the translator (``_jit``)."""

import ast
import inspect
import textwrap

from ._control import own_nodes
from ._sources import keep_exec_sources, source_lines
from .errors import CompileError

keep_exec_sources()  # kernels made by exec() of a string translate too


class DeviceFunction:
    """A ``@cuda.jit(device=True)`` function: inlined where it is called.
    Its parameters are positional, the last may be ``*args``."""

    #: Names of an enclosing function the body reads (none: a module's
    #: function reads globals).
    outer = frozenset()

    def __init__(self, function):
        self.function = function
        self.name = function.__name__
        self.__doc__ = function.__doc__
        self.tree = _parse(function)
        self.params, self.vararg = _parameters(self.tree, function)

    def scope(self):
        """The values the body's free names read: globals and closure."""
        env = dict(self.function.__globals__)
        if self.function.__closure__:
            names = self.function.__code__.co_freevars
            env.update({n: c.cell_contents for n, c in zip(names, self.function.__closure__)})
        return env

    def __call__(self, *args):
        return self.function(*args)

class _LocalFunction:
    """A function defined inside a kernel or device function (``def
    inner(z): return y + z``): inlined where called (also where it is
    passed to), its free names read in the scope that defined it."""

    def __init__(self, node, function, env, outer):
        self.function, self.name, self.tree = function, node.name, node
        self.params, self.vararg = _parameters(node, function)
        self.env, self.outer = env, frozenset(outer)

    def scope(self):
        """The defining scope's values."""
        return dict(self.env)

def _parameters(tree, function):
    """The positional parameters of a function's tree and its ``*args``
    name (or None); anything else is refused. Defaults must be numbers
    (``_defaults``)."""
    args = tree.args
    if args.kwarg or args.kwonlyargs or args.posonlyargs:
        raise CompileError(
            f"device function '{tree.name}' ({_where(function, tree)}): only positional "
            "parameters (with defaults) and *args can be inlined"
        )
    _defaults(tree, function)
    return [a.arg for a in args.args], args.vararg.arg if args.vararg else None

def _defaults(tree, function):
    """``{parameter: default}`` of a function's tree: its defaults must be
    numbers (or tuples of them), known when compiling."""
    args = tree.args
    found = {}
    for param, node in zip(args.args[len(args.args) - len(args.defaults):], args.defaults):
        try:
            found[param.arg] = ast.literal_eval(node)
        except ValueError:
            raise CompileError(
                f"device function '{tree.name}' ({_where(function, tree)}): the default of "
                f"'{param.arg}' is not a number ({ast.unparse(node)})"
            ) from None
    return found

class _Renamer(ast.NodeTransformer):
    """Renames the names of a device function's body for one call site."""

    def __init__(self, names):
        self.names = names

    def visit_Name(self, node):
        if node.id in self.names:
            return ast.copy_location(ast.Name(self.names[node.id], node.ctx), node)
        return node

def _parse(function):
    """The function's definition, its line numbers those of its file."""
    try:
        lines, first_line = source_lines(function)
    except (OSError, TypeError) as e:
        raise CompileError(
            f"cannot read the source of {function!r}: {e} (lazyfuse translates kernels from their "
            "source: define them in a file, a notebook cell or a string given to exec() after "
            "importing lazyfuse, not on standard input)"
        ) from None
    tree = ast.parse(textwrap.dedent("".join(lines)))
    ast.increment_lineno(tree, first_line - 1)
    node = tree.body[0]
    if function.__name__ == "<lambda>":
        node = _lambda_definition(tree, function)
    if not isinstance(node, ast.FunctionDef):
        raise CompileError(f"{function!r} is not a plain function")
    return node

def _lambda_definition(tree, function):
    """A ``lambda``'s definition as a function returning its body: the one
    lambda of its source lines with its parameters (of several, the one
    whose body holds the code's first position)."""
    code = function.__code__
    params = list(code.co_varnames[:code.co_argcount])
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)
             and [a.arg for a in n.args.args] == params]
    if len(found) > 1:
        line, col = next(((p[0], p[2]) for p in code.co_positions() if p[0] and p[2] is not None),
                         (None, None))
        found = [n for n in found if (n.lineno, n.col_offset) <= (line, col)
                 <= (n.end_lineno, n.end_col_offset)][-1:]
    if len(found) != 1:
        raise CompileError(f"cannot find the source of {function!r} (a lambda of its line)")
    node = found[0]
    definition = ast.FunctionDef("_lf_lambda", node.args, [ast.Return(node.body)], [], None)
    definition.type_params = []
    return ast.fix_missing_locations(ast.copy_location(definition, node))

def _where(function, node):
    """``file, line N`` of ``node`` (line numbers are the file's)."""
    try:
        file = inspect.getsourcefile(function) or function.__code__.co_filename
    except (TypeError, AttributeError):
        file = "<unknown>"
    return f"{file}, line {getattr(node, 'lineno', '?')}"

#: Functions inlined as device functions (see ``_as_device_function``), made once.
_LIBRARY = {}
#: The modules of functions written in the kernel dialect (inlined where called).
_DIALECT_LIBRARIES = {__package__ + "._kernel_math", __package__ + "._kernel_cmath"}

def _as_device_function(value):
    """``value`` as a device function to inline: a ``@cuda.jit(device=True)``
    function, a ``@cuda.jit`` kernel called from another kernel (Numba
    compiles it as a device function there), or one of ``_kernel_math``'s
    or ``_kernel_cmath``'s functions; None for anything else."""
    if isinstance(value, (DeviceFunction, _LocalFunction)):
        return value
    function = getattr(value, "py_func", None) if hasattr(value, "forall") else None
    if function is None and getattr(value, "__module__", None) in _DIALECT_LIBRARIES:
        function = value
    if function is None:
        return None
    if function not in _LIBRARY:
        _LIBRARY[function] = DeviceFunction(function)
    return _LIBRARY[function]

def _inlined(function):
    """A plain Python function (an ``@overload``'s implementation) as a
    device function to inline, made once."""
    if function not in _LIBRARY:
        _LIBRARY[function] = DeviceFunction(function)
    return _LIBRARY[function]

def _returns_value(tree):
    """True when a `return <value>` is in the function (not in a nested one)."""
    return any(isinstance(n, ast.Return) and n.value is not None for n in own_nodes(tree))

def _tuple_arity(tree):
    """The length of the tuples a function returns (``return x, y``), when
    every ``return <value>`` returns a tuple of that length; else None."""
    values = [n.value for n in own_nodes(tree) if isinstance(n, ast.Return) and n.value is not None]
    lengths = {len(v.elts) if isinstance(v, ast.Tuple) else None for v in values}
    return lengths.pop() if len(lengths) == 1 and None not in lengths else None

def _rebinds(tree, name):
    """True when the function assigns to `name`."""
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
               for n in ast.walk(tree))

def _binds(params, tree):
    """The names a function binds: its parameters and what it assigns."""
    return set(params) | {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
