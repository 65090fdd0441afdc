"""Numba's ``@overload`` for lazyfuse's kernels: ``@overload(f)`` registers
a *typer* for the Python function ``f``; where a kernel or device function
calls ``f(args)``, the translator calls the typer with the arguments'
types and inlines the implementation it returns (a function taking the
same arguments, or a ``lambda``), as Numba compiles it in place of ``f``.
Outside kernels ``f`` stays the Python function it is.

The types a typer sees are Numba's (``lazyfuse.cuda.int64``…) for values
known when compiling: numbers and tuples of them, and ``Function`` for a
function (a device function, a kernel, a function defined in the kernel);
an array argument is ``Computed(array=True)`` and any other value computed
in the kernel ``Computed()``, since lazyfuse's kernel builder gives those
their dtypes after translation. A typer returning None has no
implementation for these arguments: the call is refused with a
``CompileError``, and so is a call whose arguments' number the
implementation does not take."""

__all__ = ["overload", "Function", "Computed"]

#: The typers of each overloaded function, in the order registered.
_TYPERS = {}


def overload(func, jit_options=None, strict=True, inline="never", prefer_literal=False, **kwargs):
    """``@overload(func)``: the decorated function types calls of ``func``
    in kernels (see the module doc). ``jit_options``, ``strict``,
    ``inline``, ``prefer_literal`` and ``target`` are accepted as Numba's
    are (lazyfuse inlines every device function)."""
    def register(typer):
        _TYPERS.setdefault(func, []).append(typer)
        return typer
    return register


class Function:
    """The type of a function passed as an argument (Numba's
    ``Dispatcher``/``MakeFunctionLiteral`` types): ``py_func`` is it."""

    def __init__(self, py_func):
        self.py_func = py_func

    def __repr__(self):
        return f"Function({getattr(self.py_func, 'name', getattr(self.py_func, '__name__', '?'))})"


class Computed:
    """The type of an argument computed in the kernel (an array when
    ``array``): its dtype is given by lazyfuse's kernel builder, after the
    implementation is chosen."""

    def __init__(self, array=False):
        self.array = array

    def __repr__(self):
        return "Computed(array)" if self.array else "Computed()"


def is_overloaded(value):
    """Whether ``value`` is a function ``@overload`` registered a typer for."""
    try:
        return value in _TYPERS
    except TypeError:  # unhashable: no function
        return False


def implementation(func, types):
    """The implementation the first of ``func``'s typers (in the order
    registered) that has one gives for ``types``, or None."""
    for typer in _TYPERS.get(func, []):
        found = typer(*types)
        if found is not None:
            return found
    return None
