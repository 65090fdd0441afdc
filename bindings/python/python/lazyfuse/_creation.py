"""Making arrays: ``asarray`` (NumPy's values, and DLPack producers,
copied into a context), the constructors NumPy's namespace starts with
(``full``, ``zeros``, ``ones``, ``empty``, their ``*_like`` forms,
``arange``), and the conversion every NumPy function here makes of its
arguments (``_lazy``, ``_one``: arrays lazy, numbers left weak)."""

import math
import operator

import numpy as np

from ._array import Array, COMPLEX, _dtype_name
from ._contexts import context_of, current_context
from ._registry import FUNCTIONS, OPERATIONS, register
from .errors import ArgumentError


def asarray(x, dtype=None, context=None, *, copy=None, device=None):
    """An array holding a copy of ``x`` (anything ``numpy.asarray`` takes,
    or a ``__dlpack__`` producer in host memory); a lazyfuse array is
    returned as it is (cast if ``dtype`` differs).

    ``copy`` follows the array API: ``True`` always gives a new array (for a
    lazyfuse array, a new handle on its value: values never change);
    ``False`` never copies, and raises ``ValueError`` where a copy is needed
    — a cast, or memory from outside lazyfuse, which its owner may still
    write while a lazyfuse value never changes."""
    if type(x) is np.ndarray and dtype is None and copy is None and device is None \
            and x.dtype.kind in "biuf" and x.flags.c_contiguous:
        # The commonest call (a NumPy array of numbers, as it is): one copy
        # into the context, no other checks.
        return Array(_context(context, None)._cx.asarray(x))
    if copy is False:
        _asarray_without_copy(x, dtype)
    if isinstance(x, COMPLEX.types):
        return x if dtype is None else x.astype(dtype)
    if isinstance(x, Array):
        same = dtype is None or _dtype_name(dtype) == _dtype_name(x.dtype)
        if copy:
            return x.copy() if same else x.astype(dtype)
        return x if same else x.astype(dtype)
    if isinstance(x, (list, tuple)) and any(isinstance(e, (Array,) + COMPLEX.types) for e in x):
        # A sequence of lazy arrays (and numbers): stacked, lazily.
        stacked = FUNCTIONS["stack"](list(x))
        return stacked if dtype is None else stacked.astype(dtype)
    cx = _context(context, device)._cx
    if hasattr(x, "__dlpack__") and not hasattr(x, "__array__") and not isinstance(x, np.ndarray):
        x = np.from_dlpack(x)  # a DLPack producer NumPy does not take as an array
    value = np.asarray(x, dtype=dtype, order="C")  # (ascontiguousarray makes 0-d arrays 1-d)
    if value.dtype.kind == "c":
        return COMPLEX.from_numpy(cx, value)
    return Array(cx.asarray(value))


array = asarray


def _asarray_without_copy(x, dtype):
    """Raises the array API's ``ValueError`` unless ``asarray(x, dtype,
    copy=False)`` can return ``x`` itself."""
    if not isinstance(x, (Array,) + COMPLEX.types):
        raise ValueError(
            f"asarray(copy=False): a {type(x).__name__} cannot be shared without a copy: "
            "its memory is outside lazyfuse and its owner may still write it, while a "
            "lazyfuse value never changes (pass copy=None to copy it)")
    if dtype is not None and _dtype_name(dtype) != _dtype_name(x.dtype):
        raise ValueError(
            f"asarray(copy=False): casting a {_dtype_name(x.dtype)} array to "
            f"{_dtype_name(dtype)} needs a copy")


def _shape(shape, what):
    """A shape argument (an int or a sequence of ints, NumPy's integers
    too) as a list; a negative size is an ``ArgumentError``."""
    dims = [shape] if isinstance(shape, (int, np.integer)) else list(shape)
    dims = [operator.index(d) for d in dims]
    if any(d < 0 for d in dims):
        raise ArgumentError(f"{what}: negative dimensions are not allowed (shape {tuple(dims)})")
    return dims


def _context(context, device):
    """The context of a creation function's ``context=`` or the array API's
    ``device=`` (a ``lazyfuse.Device``, a ``Context`` or a backend name);
    the current one without either."""
    if device is not None and context is None:
        return context_of(device)
    return context or current_context()


def full(shape, fill_value, dtype=None, context=None, *, device=None):
    """``shape`` filled with ``fill_value`` (generated where it is used)."""
    shape = _shape(shape, "full")
    if dtype is None:
        dtype = np.asarray(fill_value).dtype
    cx = _context(context, device)._cx
    if not (isinstance(dtype, str) and dtype == "bfloat16") and np.dtype(dtype).kind == "c":
        # A complex fill: each part filled, in the parts' float dtype.
        value, part = complex(fill_value), np.dtype(dtype).type(0).real.dtype.name
        return COMPLEX.from_parts(cx.full(shape, value.real, part), cx.full(shape, value.imag, part))
    return Array(cx.full(shape, _fill(fill_value), _dtype_name(dtype)))


def _fill(value):
    """A fill value for the native side: ints stay exact ints."""
    return value.item() if isinstance(value, np.generic) else value


def zeros(shape, dtype=np.float64, context=None, *, device=None):
    return full(shape, 0, np.float64 if dtype is None else dtype, context, device=device)


def ones(shape, dtype=np.float64, context=None, *, device=None):
    return full(shape, 1, np.float64 if dtype is None else dtype, context, device=device)


def empty(shape, dtype=np.float64, context=None, *, device=None):
    """A destination (its contents are unspecified until written; zeros here)."""
    return full(shape, 0, np.float64 if dtype is None else dtype, context, device=device)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``a``'s shape (or ``shape``) filled with ``fill_value``, in ``a``'s
    dtype (or ``dtype``); a lazyfuse ``a`` gives an array of its context
    (nothing computed). ``order``, ``subok`` and ``device`` are NumPy's,
    accepted: a lazy array's elements are in C order, on its context."""
    shape = _shape(np.shape(a) if shape is None else shape, "full_like")
    dtype = (a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype) if dtype is None else dtype
    native = a._a if isinstance(a, Array) else a._re if isinstance(a, COMPLEX.types) else None
    if native is None:
        return full(shape, fill_value, dtype)
    if _dtype_name(dtype) in ("complex64", "complex128"):
        value, part = complex(fill_value), np.dtype(dtype).type(0).real.dtype.name
        return COMPLEX.from_parts(native.full_like(shape, value.real, part),
                            native.full_like(shape, value.imag, part))
    return Array(native.full_like(shape, _fill(fill_value), _dtype_name(dtype)))


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``full_like(a, 0, …)``."""
    return full_like(a, 0, dtype, shape=shape)


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``full_like(a, 1, …)``."""
    return full_like(a, 1, dtype, shape=shape)


def empty_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """A destination like ``a`` (zeros here, as ``empty``)."""
    return full_like(a, 0, dtype, shape=shape)


def arange(start, stop=None, step=1, dtype=None, context=None, *, device=None):
    """NumPy's ``arange`` (generated where it is used)."""
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        # NumPy's: float64 when any of the three is a float, else int64.
        floats = any(isinstance(v, (float, np.floating)) for v in (start, stop, step))
        dtype = np.float64 if floats or not step else np.arange(start, start + step, step).dtype
    cx = _context(context, device)._cx
    name = _dtype_name(dtype)
    exact = all(isinstance(v, (int, np.integer)) for v in (start, stop, step))
    if exact and np.dtype(name).kind in "iu" and max(abs(int(start)), abs(int(stop))) > 2**53:
        # Beyond 2**53 an f64 would round the ends: count in f64 (exact for
        # any length that fits in memory), then scale and shift in integers.
        n = len(range(int(start), int(stop), int(step)))
        return Array(cx.arange(0.0, float(n), 1.0, name)) * int(step) + int(start)
    if not exact and np.dtype(name).kind in "iu":
        # NumPy's rule: the first two values in the dtype, their difference
        # the step (np.arange(0, 5, 0.5, dtype=int) is all zeros).
        first = int(np.array(start).astype(name))
        delta = int(np.array(start + step).astype(name)) - first
        n = max(0, math.ceil((stop - start) / step)) if step else 0
        # In int64, then wrapped into the dtype, as NumPy's fill wraps.
        return (Array(cx.arange(0.0, float(n), 1.0, "int64")) * delta + first).astype(name)
    return Array(cx.arange(float(start), float(stop), float(step), name))


def _lazy(args):
    """``args`` with the arrays among them lazy: NumPy arrays and sequences
    go to the context of the first lazyfuse array (else the current one);
    numbers stay numbers (weak, as NEP 50 has them). With no array at all,
    the first argument becomes one."""
    first = next((a for a in args if isinstance(a, Array)), None)
    lazy = []
    for a in args:
        if not isinstance(a, (Array, bool, int, float, np.generic) + COMPLEX.types):
            a = asarray(a) if first is None else first._like(np.asarray(a))
            first = a if first is None else first
        lazy.append(a)
    if first is None and lazy:
        lazy[0] = asarray(lazy[0])
    return lazy


def _one(a):
    return _lazy([a])[0]


# NumPy's own `np.zeros_like(x)` of a lazy `x` comes here too.
register(FUNCTIONS, full_like, zeros_like, ones_like, empty_like)


register(OPERATIONS, asarray)  # for `where` and unpickling, below this module
