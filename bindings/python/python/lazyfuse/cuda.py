"""Numba's ``numba.cuda`` vocabulary over lazyfuse: device arrays (lazy
lazyfuse arrays, kept on the device of the current context), ``reduce``
and ``defer_cleanup``. On a machine without a GPU the current context (the
CPU, or ``with lazyfuse.use("sim")``) stands in, so programs run anywhere.
"""

import contextlib
import sys
import types

import numpy as np

from . import _array_api, _cuda_random, _libdevice, _native, _trace
from ._array import Array, _dtype_name, compute, where
from ._creation import asarray, empty, empty_like
from ._methods import like_layout
from ._numba import _package_names
from ._enum_values import Enums
from ._record_args import Records, record_device_array, stays_numpy
from ._kernel_args import (  # noqa: F401  (In, Out, InOut, wrap_arg: Numba's names)
    Complexes, Datetimes, In, InOut, Out, _flatten, _launch_dims, _launch_value, _raise_reported,
    _scalar_types, wrap_arg,
)
from ._devicearray import to_device  # noqa: F401  (Numba's name)
from . import _devicearray as devicearray  # noqa: E402  (Numba's `cuda.devicearray`)
from ._grid_groups import Overload, refuse_large_grid
from ._cu_sources import CUSource, declare_device  # noqa: F401  (Numba's names)
from ._streams import (  # noqa: F401  (Numba's names)
    Event, Stream, default_stream, event, event_elapsed_time, external_stream,
    legacy_default_stream, per_thread_default_stream, stream, synchronize,
)


def is_available():
    """Whether a CUDA GPU can be used."""
    return _array_api.cuda_usable()


def _layout(what, strides, order):
    if strides is not None:
        raise ValueError(f"{what}: explicit strides are not supported (lazyfuse lays arrays out itself)")
    if order not in ("C", "F"):
        raise ValueError(f"{what}: order must be 'C' or 'F', not {order!r}")


def device_array(shape, dtype=np.float64, strides=None, order="C", stream=0):
    """Numba's ``cuda.device_array``: an uninitialised device array (zeros
    here). ``order="F"`` gives a column-major one (a transposed view)."""
    _layout("device_array", strides, order)
    if stays_numpy(np.dtype(dtype)):  # records, strings: see `_record_args.RecordDeviceArray`
        return record_device_array(shape, dtype)
    if order == "F":
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        return empty(shape[::-1], dtype).T
    return empty(shape, dtype)


def device_array_like(ary, stream=0):
    """A device array of ``ary``'s shape and dtype (a lazyfuse ``ary``: in
    its context), laid out as NumPy's ``empty_like`` lays it out (a
    column-major ``ary`` gives a column-major one: ``strides``, ``flags``).
    Of a structured ``ary`` (or of strings): a zeroed ``RecordDeviceArray``."""
    if stays_numpy(getattr(ary, "dtype", None)):
        return record_device_array(ary.shape, ary.dtype)
    return like_layout(ary, lambda shape: empty_like(ary, shape=shape))


def pinned_array(shape, dtype=np.float64, strides=None, order="C"):
    """Numba's ``cuda.pinned_array``: a zeroed NumPy array in page-locked
    host memory of the current context; ``copy_to_host(out=it)`` downloads
    straight into it and ``to_device(it)`` uploads straight from it, with no
    staging copy (``stats()["staged_bytes"]``). ``asarray`` of it copies it,
    as of any NumPy array."""
    from ._contexts import current_context  # (the module's own is Numba's)
    _layout("pinned_array", strides, order)
    shape = [shape] if isinstance(shape, (int, np.integer)) else list(shape)
    if order == "F":
        return pinned_array(shape[::-1], dtype).T
    return current_context()._cx.pinned_array(shape, _dtype_name(dtype))


def pinned_array_like(ary):
    """A zeroed ``pinned_array`` of ``ary``'s shape and dtype, laid out as
    NumPy's ``empty_like`` lays it out."""
    return like_layout(ary, lambda shape: pinned_array(shape, ary.dtype))


def mapped_array_like(ary, portable=False, wc=False):
    """A zeroed ``mapped_array`` of ``ary``'s shape and dtype, laid out as
    NumPy's ``empty_like`` lays it out."""
    return like_layout(ary, lambda shape: mapped_array(shape, ary.dtype, portable=portable, wc=wc))


def mapped_array(shape, dtype=np.float64, strides=None, order="C", portable=False, wc=False):
    """Numba's ``cuda.mapped_array``: a zeroed NumPy array in host memory
    mapped into the current context's device; ``copy_to_host(out=it)`` has
    the device write it in place, with no copy (on ``sim``,
    ``stats()["mapped_bytes"]`` counts that traffic). ``asarray``/
    ``to_device`` of it copy it, as of any NumPy array (NumPy may write it).
    ``portable`` and ``wc`` are accepted and have no effect."""
    from ._contexts import current_context  # (the module's own is Numba's)
    _layout("mapped_array", strides, order)
    shape = [shape] if isinstance(shape, (int, np.integer)) else list(shape)
    if order == "F":
        return mapped_array(shape[::-1], dtype, portable=portable, wc=wc).T
    return current_context()._cx.mapped_array(shape, _dtype_name(dtype))


@contextlib.contextmanager
def defer_cleanup():
    """While inside, device buffers whose arrays are gone are queued rather
    than reused or freed; they are released on leaving."""
    from ._contexts import current_context  # (the module's own is Numba's)
    guard = current_context()._cx.defer_cleanup()
    try:
        yield
    finally:
        guard.close()


class Reduce:
    """A reduction made by ``@cuda.reduce``: ``f(array, init=0)`` combines
    every element with the traced binary function, then the result with
    ``init`` once, as Numba does (so a product or a maximum wants an
    ``init`` of 1 or of the lowest value: with the default 0 it is 0, in
    Numba too). The result is a NumPy scalar of the array's dtype; an
    empty array gives ``init``.

    lazyfuse reduces in any order and pads with a neutral element of the
    function, which it finds by trying 0, 1, the dtype's lowest and highest
    values (±inf for floats) on sample values."""

    def __init__(self, function):
        self.__name__ = function.__name__
        self._function = function
        expr, names = _trace.expression(function, f"cuda.reduce '{function.__name__}'")
        if len(names) != 2:
            raise TypeError(f"cuda.reduce '{function.__name__}' takes a function of two arguments")
        self._expr, self._names = expr, names
        self._reducers = {}

    def _reducer(self, dtype):
        if dtype not in self._reducers:
            identity = _neutral_element(self._function, dtype)
            if identity is None:
                from .errors import ArgumentError
                raise ArgumentError(
                    f"cuda.reduce '{self.__name__}' over {dtype}: found no neutral element among "
                    "0, 1 and the dtype's lowest and highest values (lazyfuse reduces in any order "
                    "and pads with one; expected an associative, commutative function that has one)"
                )
            self._reducers[dtype] = _native.Reducer(
                self.__name__, self._expr, self._names[0], self._names[1], float(identity)
            )
        return self._reducers[dtype]

    def __call__(self, arr, size=None, res=None, init=0, stream=0):
        a = arr if isinstance(arr, Array) else asarray(arr)
        if size is not None:
            a = a.reshape(-1)[:size]
        if not isinstance(a.dtype, np.dtype):
            a = a.astype(np.float32)  # bfloat16: reduced as float32
        kind = a.dtype.type
        init = kind(init)
        if a.size == 0:
            result = init
        else:
            reduced = kind(Array(self._reducer(a.dtype).reduce(a._a)).item())
            with np.errstate(all="ignore"):
                result = kind(self._function(reduced, init))
        if res is None:
            return result
        if isinstance(res, Array):
            # Numba writes the result into res[0]; the rest of res stays.
            flat = res.reshape(-1)
            first = Array(flat._a.arange_like(flat.size, "int64")) == 0
            res._rebind(where(first, result, flat).astype(res.dtype).reshape(res.shape)._a)
        else:
            res.reshape(-1)[0] = result
        return None


def reduce(function):
    """Numba's ``@cuda.reduce``."""
    return Reduce(function)


def _samples(dtype):
    """Values to try a reduction's candidate neutral elements on."""
    if dtype == np.bool_:
        return [False, True], [False, True]
    if np.issubdtype(dtype, np.floating):
        return [-3.5, -1.0, -0.25, 0.0, 0.5, 1.0, 2.0, 7.75], [0.0, 1.0, -np.inf, np.inf]
    info = np.iinfo(dtype)
    values = [0, 1, 2, 5, 9] + ([-9, -2, -1] if info.min < 0 else [])
    return values, [0, 1, info.min, info.max]


def _neutral_element(function, dtype, first=()):
    """The first candidate ``e`` — those of ``first``, then 0, 1 and the
    dtype's extremes — with ``f(e, x) == x == f(x, e)`` on every sample
    value ``x`` of ``dtype`` (Python's ``function`` on NumPy scalars), or
    None."""
    kind = np.dtype(dtype).type
    values, candidates = _samples(np.dtype(dtype))
    for candidate in [*first, *candidates]:
        e = kind(candidate)
        try:
            with np.errstate(all="ignore"):
                if all(function(e, kind(x)) == kind(x) and function(kind(x), e) == kind(x)
                       for x in values):
                    return candidate
        except Exception:  # the function cannot take these values: not this one
            continue
    return None


class Dispatcher:
    """A kernel made by ``@cuda.jit``: launch it as ``kernel[blocks, threads](args)``.
    The source is translated (``lazyfuse._jit``) at the first launch with
    each combination of argument types. NumPy arguments are copied to the
    device and the ones the kernel writes copied back before the launch
    returns; lazyfuse arrays stay lazy (a written one is re-bound to the
    new value)."""

    def __init__(self, function, scalar_types=None, debug=False, signature=None):
        import inspect
        self.__name__ = function.__name__
        self._params = list(inspect.signature(function).parameters)
        # Numba's `debug=True`: a raise inside the kernel is reported.
        self._debug = debug
        self.__doc__ = function.__doc__
        self._function = function
        self._kernels = {}
        # The dtypes an explicit signature gives the scalar parameters
        # (Python numbers are converted to them, as Numba does).
        self._scalar_types = scalar_types
        self._signature = signature
        #: Numba's dispatcher extensions: objects whose
        #: ``prepare_args(type, value, stream=, retr=)`` returns
        #: ``(type, value)`` for each argument before a launch.
        self.extensions = []

    @property
    def py_func(self):
        """The Python function the kernel is translated from."""
        return self._function

    @property
    def overloads(self):
        """Numba's kernels by signature: for an explicit signature
        (``cuda.jit((int32[:],))``) its argument types, keyed as Numba
        keys them."""
        sig = self._signature
        args = tuple(sig) if isinstance(sig, tuple) else getattr(sig, "args", None)
        return {} if args is None else {args: Overload(self, sig)}

    def specialize(self, *args):
        """Numba's ``specialize``: a kernel for these arguments' types.
        Each launch already translates once per combination of argument
        types, so this is the kernel itself."""
        return self

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        """Numba's ``kernel.forall(n)(args)``: a launch of at least ``n``
        threads in one dimension (blocks of ``tpb`` threads, 128 unless
        given); nothing runs for ``n == 0``."""
        if ntasks < 0:
            raise ValueError("Can't create ForAll with negative task count")
        threads = int(tpb) or 128
        blocks = -(-int(ntasks) // threads)

        def launch(*args):
            if ntasks:
                self._launch(blocks, threads, args)
        return launch

    def __call__(self, *args):
        raise ValueError(f"kernel '{self.__name__}': the launch configuration was not specified "
                         "(launch it as kernel[blocks, threads](args))")

    def __getitem__(self, config):
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise TypeError("launch a kernel as kernel[blocks, threads](args) or "
                            "kernel[blocks, threads, stream, dynamic shared bytes](args)")
        grid, block = _launch_dims("griddim", config[0]), _launch_dims("blockdim", config[1])
        shared = int(config[3]) if len(config) == 4 else None
        return lambda *args: self._launch(grid, block, args, shared)

    def _launch(self, grid, block, args, dynamic_shared=None):
        from . import _jit
        Array, _, asarray, ComplexArray = _package_names()
        params = self._params
        if len(args) != len(params):
            raise TypeError(f"kernel '{self.__name__}' takes {len(params)} arguments, got {len(args)}")
        for extension in self.extensions:
            args = tuple(extension.prepare_args(None, a, stream=0, retr=[])[1] for a in args)
        declared = self._scalar_types
        if not declared or len(declared) != len(args):
            declared = [None] * len(args)
        # Tuples (also nested, and namedtuples) are passed element by
        # element: one parameter per number or array.
        leaves, tuples, fields = [], {}, {}
        complexes, records, enums = Complexes(Array, ComplexArray), Records(), Enums()
        dates = Datetimes(self.__name__)
        for p, a, dtype in zip(params, args, declared):
            a = dates.value(p, enums.value(p, a))
            _flatten(p, a, dtype, leaves, tuples, fields, complexes, records)
        names = [name for name, _, _ in leaves]
        lazy, key = [], []
        for name, a, dtype in leaves:
            value, kind = _launch_value(self.__name__, name, a, dtype, Array, asarray)
            lazy.append(value)
            key.append(kind)
        key = (tuple(key), tuple(sorted((t, len(e)) for t, e in tuples.items())),
               tuple(sorted((t, tuple(f)) for t, f in fields.items())), dynamic_shared,
               tuple(sorted(complexes.names.items())), records.key(), enums.key())
        if key not in self._kernels:
            self._kernels[key] = self._compile(key, names, tuples, fields, dynamic_shared,
                                               complexes.names, records, enums.classes)
        kernel, written, constants, prints, raises, cooperative = self._kernels[key]
        if cooperative:
            refuse_large_grid(self.__name__, grid)
        constants = [asarray(c) if isinstance(c, np.ndarray) else c for c in constants]
        values = {name: a for name, a, _ in leaves}
        _refuse_aliases(self.__name__, names, [values[n] for n in names], written)
        dims = lambda d: list(d) if isinstance(d, (tuple, list)) else [int(d)]
        results = kernel.launch(dims(grid), dims(block),
                                [a._a if isinstance(a, Array) else a for a in lazy + constants])
        kept = {p for p, a in zip(params, args) if isinstance(a, In) and not a.copy_back}
        if prints:  # its lines appear now, as a launch's do in Numba
            compute(*[Array(r) for r in results])
        if raises:
            _raise_reported(raises, np.asarray(Array(results[written.index(_jit.RAISED)])))
        for name, result in zip(written, results):
            if name in kept or name not in values:
                continue
            original = values[name]
            if isinstance(original, Array):
                original._rebind(result)
            else:
                Array(result).copy_to_host(original)  # straight into it when it is dense
        complexes.join(set(written), kept)
        records.join(set(written), kept, complexes)

    def _compile(self, key, names, tuples, fields, dynamic_shared, complexes, records, enums):
        """The kernel for a launch's ``key`` (leaf dtypes and dimensions,
        tuple shapes, dynamic shared memory): the native kernel, the names
        it writes (its results' order), the extra arrays every launch
        passes after the arguments, whether it prints, what it raises."""
        from . import _jit
        arrays = [n for n, k in zip(names, key[0]) if isinstance(k, tuple)]
        ndims = {n: k[1] for n, k in zip(names, key[0]) if isinstance(k, tuple)}
        translator = _jit.Translator(self._function, arrays, ndims=ndims, tuples=tuples,
                                     fields=fields, dynamic_shared=dynamic_shared,
                                     debug=self._debug, complexes=complexes, records=records.infos,
                                     enums=enums, strings=records.strings)
        translator.array_dtypes.update((n, str(k[0])) for n, k in zip(names, key[0])
                                       if isinstance(k, tuple))
        body = translator.kernel()
        spec = [(n, str(k[0]), k[1], n in translator.written) if isinstance(k, tuple)
                else (n, k, -1, False) for n, k in zip(names, key[0])]
        written = [n for n, k in zip(names, key[0]) if isinstance(k, tuple) and n in translator.written]
        # The global arrays the kernel reads, frozen now as Numba does.
        constants = [(name, asarray(np.ascontiguousarray(value)))
                     for name, value in translator.implicit.items()]
        spec += [(name, str(a.dtype), a.ndim, False) for name, a in constants]
        extra = [a for _, a in constants]
        raises = translator.raises if _jit.RAISED in translator.written else []
        if raises:  # where a raise is reported: code, thread and block indices
            spec.append((_jit.RAISED, "int64", 1, True))
            written.append(_jit.RAISED)
            extra.append(np.zeros(7, np.int64))
        if not written:
            # A launch has an output (and runs over an array's context):
            # a kernel that writes no array gets one it never touches.
            spec.append(("_lf_unused", "int8", 1, True))
            written.append("_lf_unused")
            extra.append(np.zeros(1, np.int8))
        return (_native.build_kernel(self.__name__, spec, body), written, extra,
                translator.prints[0], raises, translator.cooperative[0])


def _refuse_aliases(name, params, args, written):
    """Arguments that share memory (the same array twice, or overlapping
    NumPy views) where the kernel writes one of them: lazyfuse gives each
    argument its own value, so the writes through one would not be seen
    through the other, as they are in Numba. Refused, naming both, rather
    than run."""
    arrays = [(p, a) for p, a in zip(params, args) if isinstance(a, (Array, np.ndarray))]
    for i, (p, a) in enumerate(arrays):
        for q, b in arrays[i + 1:]:
            if p not in written and q not in written:
                continue
            same = a is b or (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
                              and np.may_share_memory(a, b)) or _views_overlap(a, b)
            if same:
                from .errors import ArgumentError
                raise ArgumentError(
                    f"kernel '{name}': arguments '{p}' and '{q}' share memory (lazyfuse gives each "
                    "argument its own value, so writes through one would not reach the other; "
                    "expected distinct arrays)"
                )


def _views_overlap(a, b):
    """Whether two lazyfuse arrays are views of one array that may share
    elements (or one views the other); regions of one array are compared
    axis by axis, views of views conservatively."""
    from ._views import View

    def root(x):
        while isinstance(x, View):
            x = x._base
        return x

    if not isinstance(a, Array) or not isinstance(b, Array) or root(a) is not root(b):
        return False
    if not (isinstance(a, View) and isinstance(b, View) and a._base is b._base):
        return True

    def span(start, step, length):
        last = start + step * (length - 1)
        return min(start, last), max(start, last)

    return all(
        ra[2] and rb[2] and span(*ra)[0] <= span(*rb)[1] and span(*rb)[0] <= span(*ra)[1]
        for ra, rb in zip(a._region, b._region)
    )


def jit(function=None, device=False, **options):
    """Numba's ``@cuda.jit`` (and ``@cuda.jit(device=True)`` for device
    functions, inlined where called)."""
    from . import _jit

    signature = function if isinstance(function, (str, list, tuple)) else None

    def wrap(f):
        return _jit.DeviceFunction(f) if device else Dispatcher(
            f, _scalar_types(signature), debug=bool(options.get("debug")), signature=signature)

    if function is None or signature is not None:
        return wrap
    return wrap(function)


def syncthreads():
    """``cuda.syncthreads()`` (only meaningful inside a ``@cuda.jit`` kernel)."""
    raise RuntimeError("cuda.syncthreads() is only translated inside a @cuda.jit kernel")


class _Namespace:
    def __init__(self, **entries):
        self.__dict__.update(entries)


class _Intrinsic:
    """A ``cuda.*`` function that exists only inside kernels: calling it
    from Python raises; inside a kernel the translator knows it by ``path``
    (also when it is passed to a device function as a value, as Numba's
    tests pass ``cuda.atomic.add``)."""

    def __init__(self, path):
        self._lf_path = path

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"{self._lf_path}() is only translated inside a @cuda.jit kernel")

    def __repr__(self):
        return f"<kernel intrinsic {self._lf_path}>"


def _intrinsics(prefix, *names):
    return {name: _Intrinsic(f"{prefix}.{name}") for name in names}


grid, gridsize = _Intrinsic("cuda.grid"), _Intrinsic("cuda.gridsize")
shared = _Namespace(array=_Intrinsic("cuda.shared.array"))
local = _Namespace(array=_Intrinsic("cuda.local.array"))
#: Numba's atomic operations (``and_``/``or_`` spelled as Numba spells them).
atomic = _Namespace(**_intrinsics(
    "cuda.atomic", "add", "sub", "max", "min", "nanmax", "nanmin", "and_", "or_", "xor", "inc",
    "dec", "exch", "compare_and_swap", "cas",
))
#: Numba's cooperative groups: a grid group's ``sync()`` (``_grid_groups``).
cg = _Namespace(this_grid=_Intrinsic("cuda.cg.this_grid"))
threadIdx = blockIdx = blockDim = gridDim = _Namespace(x=0, y=0, z=0)


def is_cuda_array(obj):
    """Whether ``obj`` is a device array (a lazyfuse array)."""
    return isinstance(obj, Array)


def as_cuda_array(obj):
    """``obj`` as a device array: a lazyfuse array as it is, anything else
    (a NumPy array…) copied to the device."""
    return obj if is_cuda_array(obj) else to_device(obj)


def detect():
    """Numba's ``cuda.detect()``: prints whether a CUDA GPU is usable and
    what runs ``target="cuda"`` code otherwise; returns whether one is."""
    from ._contexts import current_context  # (the module's own is Numba's)
    if is_available():
        print("lazyfuse: a CUDA GPU is available (device 0 runs target='cuda' code)")
        return True
    print("lazyfuse: no CUDA GPU; target='cuda' code runs on the current context "
          f"({current_context().backend!r})")
    return False


# Numba's remaining ``numba.cuda`` names: device queries, the type objects
# (``cuda.float32``), and ``vectorize``/``guvectorize`` for ``target="cuda"``.
from ._cuda_devices import (  # noqa: E402,F401
    close, current_context, get_context, get_current_device, gpus, list_devices, select_device,
)
from ._numba import (  # noqa: E402,F401
    b1, boolean, bool_, c8, c16, complex64, complex128, f2, f4, f8, float16, float32, float64, i1,
    i2, i4, i8, int8, int16, int32, int64, intp, u1, u2, u4, u8, uint8, uint16, uint32, uint64,
    uintp, void,
)


# CUDA's vector types (`cuda.float32x4`, `cuda.float4`…): `_vectors`.
from ._vector_types import all_names as _vector_names, vector_types  # noqa: E402,F401
globals().update(_vector_names)


def is_float16_supported():
    """float16 kernels run on every backend (computed in float32, rounded once)."""
    return True


def is_bfloat16_supported():
    """Whether Numba's ``numba.cuda.bf16`` intrinsics are here: they are
    not (lazyfuse's bfloat16 arrays and operations are)."""
    return False


def is_fp8_supported():
    """Numba's fp8 types are not lazyfuse's."""
    return False


def vectorize(signatures=None, **options):
    """``numba.cuda.vectorize``: ``@vectorize`` for ``target="cuda"``."""
    from ._numba import vectorize as vectorize_for
    return vectorize_for(signatures, **{"target": "cuda", **options})


def guvectorize(signatures, layout, **options):
    """``numba.cuda.guvectorize``: ``@guvectorize`` for ``target="cuda"``."""
    from ._numba import guvectorize as guvectorize_for
    return guvectorize_for(signatures, layout, **{"target": "cuda", **options})


def create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0):
    """``n`` xoroshiro128+ states seeded as Numba's (state ``i`` is ``i``
    jumps of 2**64 steps after the first), as a device array of ``n`` rows
    of two uint64 words (see ``lazyfuse._cuda_random``)."""
    return to_device(_cuda_random.init_xoroshiro128p_states_host(n, seed, subsequence_start),
                     stream=stream)


sys.modules[__name__ + ".devicearray"] = devicearray  # `import lazyfuse.cuda.devicearray`
#: Numba's ``cuda.libdevice`` and its table ``cuda.libdevicefuncs`` (``_libdevice``).
libdevice, libdevicefuncs = _libdevice.modules(__name__)
sys.modules.update({m.__name__: m for m in (libdevice, libdevicefuncs)})

#: Numba's ``numba.cuda.random``, importable as ``lazyfuse.cuda.random``.
random = types.ModuleType(__name__ + ".random", "Numba's xoroshiro128+ generator (``_cuda_random``).")
sys.modules[random.__name__] = random
random.__dict__.update(
    create_xoroshiro128p_states=create_xoroshiro128p_states,
    init_xoroshiro128p_states_host=_cuda_random.init_xoroshiro128p_states_host,
    xoroshiro128p_next=_cuda_random.xoroshiro128p_next,
    xoroshiro128p_uniform_float32=_cuda_random.xoroshiro128p_uniform_float32,
    xoroshiro128p_uniform_float64=_cuda_random.xoroshiro128p_uniform_float64,
    xoroshiro128p_normal_float32=_cuda_random.xoroshiro128p_normal_float32,
    xoroshiro128p_normal_float64=_cuda_random.xoroshiro128p_normal_float64,
)


def from_dtype(dtype):
    """Numba's type object for a NumPy dtype: ``from_dtype(np.float32)`` is
    ``float32``; of a structured dtype a ``Record`` (``rec[:]`` is an array
    type, ``cuda.shared.array(n, rec)`` an array of records)."""
    from . import _numba
    if np.dtype(dtype).names is not None:
        return _numba.Record(dtype)
    name = np.dtype(dtype).name
    return getattr(_numba, "bool_" if name == "bool" else name)
