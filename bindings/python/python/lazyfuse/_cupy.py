"""CuPy's namespace helpers, so CuPy programs run with one changed
import: ``get_array_module`` (the namespace of the arrays given),
``asnumpy`` (a NumPy copy) and ``fuse`` (lazyfuse fuses everything: the
decorator keeps CuPy's calling conventions)."""

import functools
import sys

import numpy as np

from ._array import Array


def get_array_module(*args):
    """CuPy's ``get_array_module``: ``lazyfuse`` when any argument is a
    lazyfuse array, else ``numpy`` (``xp = lf.get_array_module(x)``)."""
    for arg in args:
        if isinstance(arg, Array):
            return sys.modules[__package__]  # the package (see `_array_api.namespace`)
    return np


def asnumpy(a, stream=None, order="C", out=None, *, blocking=True):
    """CuPy's ``asnumpy``: ``a`` as a new NumPy array (computed), or
    written into ``out``; anything else through ``np.asarray``. ``stream``
    and ``blocking`` are CuPy's: a lazyfuse demand returns when its value
    is ready."""
    if out is not None:
        if isinstance(a, Array):
            a.copy_to_host(out=out, stream=stream or 0)
        else:
            np.copyto(out, a)
        return out
    if isinstance(a, Array):
        value = a.numpy()
        return value if order in ("C", "K", "A") else np.asfortranarray(value)
    return np.array(a, order=order)


def fuse(*args, kernel_name=None):
    """CuPy's ``fuse`` decorator (``@fuse`` or ``@fuse(kernel_name=…)``).
    Called on lazyfuse arrays the function builds one lazy graph, which
    lazyfuse fuses when it is demanded, as it fuses any code; called on
    NumPy arrays and scalars only, it runs on them, as CuPy's does."""
    def decorate(function):
        @functools.wraps(function)
        def fused(*call_args, **kwargs):
            return function(*call_args, **kwargs)
        fused.kernel_name = kernel_name or function.__name__
        return fused

    if len(args) == 1 and callable(args[0]) and kernel_name is None:
        return decorate(args[0])
    if args:
        raise TypeError(f"fuse: expected a function or keywords, not {args!r}")
    return decorate
