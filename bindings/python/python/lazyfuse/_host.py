"""NumPy's functions whose result depends on data in a way no kernel can
decide ahead (set operations, polynomial division and roots, fits,
``apply_along_axis`` of Python functions), or which read and write files
and text: they run in NumPy on computed values, as ``np.f(lazy)`` does,
and array results are given to the context (lazy arrays over them), so
that ``lf.f`` returns lazyfuse arrays as CuPy's return CuPy's. Plus
``trim_zeros``, whose ends are computed and whose result is a lazy view,
and the questions about dtypes and objects that compute nothing."""

import numpy as np

from . import _array
from ._array import Array
from ._creation import _one, asarray

#: Computed in NumPy, array results given to the context.
_COMPUTED = (
    "intersect1d", "union1d", "setdiff1d", "setxor1d", "polydiv", "poly", "roots", "polyfit",
    "apply_along_axis", "apply_over_axes", "mask_indices", "frombuffer", "fromfile", "fromiter",
    "fromstring", "fromregex", "loadtxt", "genfromtxt", "load",
)  # (`from_dlpack` is the array API's, lazily: `_array_api`)
#: Questions and formatting: NumPy's answer about the computed values, as it is.
_ANSWERED = (
    "isscalar", "iterable", "min_scalar_type", "common_type", "mintypecode", "typename",
    "isfortran", "array2string", "array_repr", "array_str", "format_float_positional",
    "format_float_scientific", "base_repr", "binary_repr", "save", "savez", "savez_compressed",
    "savetxt", "get_printoptions", "set_printoptions", "printoptions", "geterr", "seterr",
    "errstate", "getbufsize", "setbufsize", "info", "einsum_path", "frompyfunc",
)


def _computed(x):
    """``x`` with lazyfuse arrays computed (in sequences and dicts too)."""
    if isinstance(x, (Array,) + _array.COMPLEX.types):
        return x.numpy()
    if isinstance(x, (list, tuple)):
        return type(x)(_computed(y) for y in x)
    if isinstance(x, dict):
        return {k: _computed(v) for k, v in x.items()}
    return x


def _given(result, like):
    """NumPy's ``result`` with its arrays given to ``like``'s context."""
    if isinstance(result, np.ndarray):
        return like._like(result) if like is not None else asarray(result)
    if isinstance(result, tuple) and not hasattr(result, "_fields"):
        return tuple(_given(r, like) for r in result)
    if isinstance(result, list):
        return [_given(r, like) for r in result]
    return result


def _first_array(args, kwargs):
    for x in (*args, *kwargs.values()):
        if isinstance(x, Array):
            return x
    return None


def _in_numpy(name, give):
    numpy_function = getattr(np, name)

    def apply(*args, **kwargs):
        result = numpy_function(*_computed(args), **_computed(kwargs))
        return _given(result, _first_array(args, kwargs)) if give else result
    apply.__name__ = apply.__qualname__ = name
    how = ("array results given to the context" if give else "its answer as it is")
    apply.__doc__ = f"NumPy's ``{name}``, run in NumPy on computed values ({how})."
    return apply


def trim_zeros(filt, trim="fb", axis=None):
    """NumPy's ``trim_zeros``: ``filt`` without its leading (``f``) and
    trailing (``b``) zeros along every axis (or ``axis``): the ends are
    computed (which lines hold a non-zero), the result is a lazy view."""
    a = _one(filt)
    trim = trim.lower()
    if trim not in ("fb", "bf", "f", "b"):
        raise ValueError(f"trim_zeros: unexpected character(s) in `trim`: {trim!r}")
    if axis is None:
        axes = set(range(a.ndim))
    else:
        axes = {int(ax) % max(a.ndim, 1) for ax in np.atleast_1d(axis)}
    keys = [slice(None)] * a.ndim
    nonzero = a != 0
    for ax in sorted(axes):
        others = tuple(d for d in range(a.ndim) if d != ax)
        found = np.flatnonzero((nonzero.any(axis=others) if others else nonzero).numpy())
        if not found.size:  # all zeros: empty along the trimmed axes, as NumPy's
            return a[tuple(slice(0, 0) if d in axes else slice(None) for d in range(a.ndim))]
        keys[ax] = slice(int(found[0]) if "f" in trim else None,
                         int(found[-1]) + 1 if "b" in trim else None)
    return a[tuple(keys)]


EXPORTED = (*(_in_numpy(name, True) for name in _COMPUTED if hasattr(np, name)),
             *(_in_numpy(name, False) for name in _ANSWERED if hasattr(np, name)),
             trim_zeros)
