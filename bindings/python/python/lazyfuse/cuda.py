"""Numba's ``numba.cuda`` vocabulary over lazyfuse: device arrays (lazy
lazyfuse arrays, kept on the device of the current context), ``reduce``
and ``defer_cleanup``. On a machine without a GPU the current context (the
CPU, or ``with lazyfuse.use("sim")``) stands in, so programs run anywhere.
"""

import contextlib

import numpy as np

from . import _native, _trace


def is_available():
    """Whether a CUDA GPU can be used."""
    try:
        _native.Context("cuda")
        return True
    except RuntimeError:
        return False


def to_device(array, stream=0):
    """Copies a NumPy array to the device now (lazyfuse keeps it there)."""
    from . import asarray
    return asarray(array).eval()._to_device()


def device_array(shape, dtype=np.float64, stream=0):
    """An uninitialised device array (zeros here)."""
    from . import empty
    return empty(shape, dtype)


def device_array_like(array, stream=0):
    """A device array of ``array``'s shape and dtype."""
    from . import empty
    return empty(np.shape(array), np.asarray(array).dtype if not hasattr(array, "dtype") else array.dtype)


@contextlib.contextmanager
def defer_cleanup():
    """While inside, device buffers whose arrays are gone are queued rather
    than reused or freed; they are released on leaving."""
    from . import current_context
    guard = current_context()._cx.defer_cleanup()
    try:
        yield
    finally:
        guard.close()


class Reduce:
    """A reduction made by ``@cuda.reduce``: ``f(array, init=0)`` combines
    every element with the traced binary function, starting from ``init``."""

    def __init__(self, function):
        self.__name__ = function.__name__
        expr, names = _trace.expression(function, f"cuda.reduce '{function.__name__}'")
        if len(names) != 2:
            raise TypeError(f"cuda.reduce '{function.__name__}' takes a function of two arguments")
        self._expr, self._names = expr, names

    def __call__(self, array, size=None, res=None, init=0, stream=0):
        from . import Array, asarray
        a = array if isinstance(array, Array) else asarray(array)
        if size is not None:
            a = a.reshape(-1)[:size]
        reducer = _native.Reducer(self.__name__, self._expr, self._names[0], self._names[1], float(init))
        value = Array(reducer.reduce(a._a))
        if res is not None:
            if isinstance(res, Array):
                res._a.assign(value.reshape(res.shape)._a)
            else:
                res[0] = value.item()
            return None
        return value.item()


def reduce(function):
    """Numba's ``@cuda.reduce``."""
    return Reduce(function)
