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
    """Copies a NumPy array to the device (now, or queued on ``stream``).
    An array made by ``pinned_array`` is uploaded straight from its pinned
    memory, with no staging copy; later writes of it do not reach the
    device copy."""
    from . import Array, asarray
    if not isinstance(stream, Stream) and isinstance(getattr(array, "base", None), _native.PinnedMemory):
        return Array(array.base.upload(list(array.shape)))
    a = asarray(array)
    if isinstance(stream, Stream):
        return Array(stream._s.to_device(a._a))
    return a.eval()._to_device()


def device_array(shape, dtype=np.float64, stream=0):
    """An uninitialised device array (zeros here)."""
    from . import empty
    return empty(shape, dtype)


def device_array_like(array, stream=0):
    """A device array of ``array``'s shape and dtype."""
    from . import empty
    return empty(np.shape(array), np.asarray(array).dtype if not hasattr(array, "dtype") else array.dtype)


def pinned_array(shape, dtype=np.float64, strides=None, order="C"):
    """Numba's ``cuda.pinned_array``: a zeroed NumPy array in page-locked
    host memory of the current context; ``copy_to_host(out=it)`` downloads
    straight into it and ``to_device(it)`` uploads straight from it, with no
    staging copy (``stats()["staged_bytes"]``). ``asarray`` of it copies it,
    as of any NumPy array."""
    from . import _dtype_name, current_context
    if strides is not None or order != "C":
        raise ValueError("pinned_array: only C-ordered arrays without explicit strides")
    shape = [shape] if isinstance(shape, (int, np.integer)) else list(shape)
    return current_context()._cx.pinned_array(shape, _dtype_name(dtype))


def mapped_array(shape, dtype=np.float64, strides=None, order="C", portable=False, wc=False):
    """Numba's ``cuda.mapped_array``: a zeroed NumPy array in host memory
    mapped into the current context's device; ``copy_to_host(out=it)`` has
    the device write it in place, with no copy (on ``sim``,
    ``stats()["mapped_bytes"]`` counts that traffic). ``asarray``/
    ``to_device`` of it copy it, as of any NumPy array (NumPy may write it).
    ``portable`` and ``wc`` are accepted and have no effect."""
    from . import _dtype_name, current_context
    if strides is not None or order != "C":
        raise ValueError("mapped_array: only C-ordered arrays without explicit strides")
    shape = [shape] if isinstance(shape, (int, np.integer)) else list(shape)
    return current_context()._cx.mapped_array(shape, _dtype_name(dtype))


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


class Dispatcher:
    """A kernel made by ``@cuda.jit``: launch it as ``kernel[blocks, threads](args)``.
    The source is translated (``lazyfuse._jit``) at the first launch with
    each combination of argument types. NumPy arguments are copied to the
    device and the ones the kernel writes copied back before the launch
    returns; lazyfuse arrays stay lazy (a written one is re-bound to the
    new value)."""

    def __init__(self, function):
        self.__name__ = function.__name__
        self._function = function
        self._kernels = {}

    def __getitem__(self, config):
        if not isinstance(config, tuple) or len(config) < 2:
            raise TypeError("launch a kernel as kernel[blocks, threads](args)")
        return lambda *args: self._launch(config[0], config[1], args)

    def _launch(self, grid, block, args):
        import inspect
        from . import Array, asarray, _jit
        params = list(inspect.signature(self._function).parameters)
        if len(args) != len(params):
            raise TypeError(f"kernel '{self.__name__}' takes {len(params)} arguments, got {len(args)}")
        lazy, key = [], []
        for a in args:
            if isinstance(a, (Array, np.ndarray)):
                a = a if isinstance(a, Array) else asarray(a)
                lazy.append(a)
                key.append((str(a.dtype), a.ndim))
            elif isinstance(a, (bool, int, float, np.generic)):
                lazy.append(a.item() if isinstance(a, np.generic) else a)
                key.append("float64" if isinstance(lazy[-1], float) else "int64")
            else:
                raise TypeError(f"kernel '{self.__name__}': cannot pass a {type(a).__name__}")
        key = tuple(key)
        if key not in self._kernels:
            arrays = [p for p, k in zip(params, key) if isinstance(k, tuple)]
            translator = _jit.Translator(self._function, arrays)
            body = translator.kernel()
            spec = [(p, k[0], k[1], p in translator.written) if isinstance(k, tuple) else (p, k, -1, False)
                    for p, k in zip(params, key)]
            written = [p for p, k in zip(params, key) if isinstance(k, tuple) and p in translator.written]
            self._kernels[key] = (_native.build_kernel(self.__name__, spec, body), written)
        kernel, written = self._kernels[key]
        dims = lambda d: list(d) if isinstance(d, (tuple, list)) else [int(d)]
        results = kernel.launch(dims(grid), dims(block), [a._a if isinstance(a, Array) else a for a in lazy])
        for name, result in zip(written, results):
            original = args[params.index(name)]
            if isinstance(original, Array):
                original._a.assign(result)
            else:
                np.copyto(original, result.numpy())


def jit(function=None, device=False, **options):
    """Numba's ``@cuda.jit`` (and ``@cuda.jit(device=True)`` for device
    functions, inlined where called)."""
    from . import _jit

    def wrap(f):
        return _jit.DeviceFunction(f) if device else Dispatcher(f)

    if function is None or isinstance(function, (str, list, tuple)):
        return wrap
    return wrap(function)


def syncthreads():
    """``cuda.syncthreads()`` (only meaningful inside a ``@cuda.jit`` kernel)."""
    raise RuntimeError("cuda.syncthreads() is only translated inside a @cuda.jit kernel")


class _Namespace:
    def __init__(self, **entries):
        self.__dict__.update(entries)


def _only_in_kernels(*args, **kwargs):
    raise RuntimeError("this cuda function is only translated inside a @cuda.jit kernel")


grid = gridsize = _only_in_kernels
shared = _Namespace(array=_only_in_kernels)
local = _Namespace(array=_only_in_kernels)
atomic = _Namespace(add=_only_in_kernels, max=_only_in_kernels, min=_only_in_kernels,
                    compare_and_swap=_only_in_kernels, exch=_only_in_kernels)
threadIdx = blockIdx = blockDim = gridDim = _Namespace(x=0, y=0, z=0)


class Stream:
    """Numba's ``cuda.stream()``: an ordered queue of asynchronous work.
    ``s.eval(*arrays)`` queues their demand and returns a pending outcome
    (``.wait()``); ``to_device(a, stream=s)`` queues a copy;
    ``s.synchronize()`` waits for everything queued."""

    def __init__(self, native):
        self._s = native

    def eval(self, *arrays):
        return self._s.eval([a._a for a in arrays])

    def synchronize(self):
        self._s.synchronize()

    @contextlib.contextmanager
    def auto_synchronize(self):
        """``with stream.auto_synchronize():`` synchronizes on leaving."""
        try:
            yield self
        finally:
            self.synchronize()


def stream():
    """A new stream on the current context."""
    from . import current_context
    return Stream(current_context()._cx.stream())
