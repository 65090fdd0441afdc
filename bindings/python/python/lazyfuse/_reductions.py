"""NumPy's reductions over lazy arrays with NumPy's keywords: ``dtype=``
(the dtype computed in and returned), ``out=`` (written with NumPy's
unsafe casting, as reductions do), ``initial=`` (combined with the result;
the result of an empty ``min``/``max``), ``where=`` (a mask: masked-out
elements count as the reduction's identity, or ``initial``); ``var`` and
``std`` over several axes; the ufunc methods ``np.add.reduce`` and
``accumulate``; and ``matmul`` (``@``) as one launch of the matrix-product
kernel.
Everything stays lazy."""

import numpy as np

from . import _array, _native
from ._array import _axes
from ._registry import OPERATIONS, register
from .errors import ArgumentError, ShapeError

# The engine's built-in reductions, from its table (`core/src/ops/reduce.rs`):
# `(name, scan name, NumPy name of the combining ufunc)`.
_BUILTIN = _native.builtin_reductions()
# What a masked-out element counts as, per reduction with an identity
# (NumPy's: min and max have none).
_IDENTITY = {"sum": 0, "prod": 1, "any": False, "all": True}
# How `initial=` combines with a reduction's result.
_COMBINE = {name: combiner for name, _, combiner in _BUILTIN}
# NumPy ufunc -> its reduction and its accumulation (``np.add.reduce``):
# the built-in ones, and the logical ones as reductions of bools (`all`
# is the minimum of bools, `any` the maximum).
UFUNC_REDUCTIONS = {combiner: (name, scan) for name, scan, combiner in _BUILTIN}
UFUNC_REDUCTIONS.update(logical_and=("all", "cummin"), logical_or=("any", "cummax"))


def _mask(x, where, name):
    """`where=` as a bool array of `x`'s shape, or None for no mask."""
    if where is None or where is True:
        return None
    mask = where if isinstance(where, _array.Array) else x._like(np.asarray(where, dtype=bool))
    try:
        return _array.Array(mask._a.astype("bool").broadcast_to(list(x.shape)))
    except ValueError as e:
        raise ShapeError(f"{name}: a where= mask of shape {mask.shape} does not broadcast to the "
                         f"array's shape {x.shape}") from e


def _finish(result, dtype, out, name):
    """Casts to `dtype` when given and writes `out` when given."""
    if dtype is not None and result.dtype != np.dtype(dtype):
        result = result.astype(dtype)
    if out is not None:
        return _array._store(result, out, name, casting="unsafe")
    return result


def reduce(x, name, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """``x.<name>(axis, dtype, out, keepdims, initial, where)`` as NumPy's."""
    if dtype is not None:
        x = x.astype(dtype)
    if initial is not None and name not in _COMBINE:
        raise ArgumentError(f"{name}: takes no initial= (NumPy's does not either)")
    mask = _mask(x, where, name)
    if mask is not None:
        if name == "mean":
            return _finish(_masked_mean(x, mask, axis, keepdims), dtype, out, name)
        fill = _IDENTITY.get(name, initial)
        if fill is None:
            raise ArgumentError(f"{name}: a where= mask needs initial= (the reduction has no "
                                "identity), as in NumPy")
        x = _array.where(mask, x, fill)
    if initial is not None and name in ("min", "max") and x.size == 0:
        axes = _axes(x, axis, name)
        if any(x.shape[a] == 0 for a in axes):
            # Nothing to reduce: the result is `initial`, as NumPy's.
            shape = tuple(1 if a in axes else n for a, n in enumerate(x.shape)
                          if keepdims or a not in axes)
            return _finish(x._like(np.full(shape, initial, dtype=x.dtype)), dtype, out, name)
    result = x._reduce(name, axis, keepdims)
    if initial is not None:
        result = result._binary(_COMBINE[name], initial)
    return _finish(result, dtype, out, name)


def _masked_mean(x, mask, axis, keepdims):
    """The mean of the elements `mask` keeps, in the dtype ``mean`` takes."""
    dtype = x._reduce("mean", axis, keepdims).dtype  # a graph node only: nothing runs
    total = _array.where(mask, x, 0).astype(dtype)._reduce("sum", axis, keepdims)
    count = mask.astype(dtype)._reduce("sum", axis, keepdims)
    return total / count


def arg_reduce(x, name, axis=None, out=None, keepdims=False):
    """``argmax``/``argmin`` with NumPy's ``out=`` and ``keepdims=``."""
    result = x._reduce(name, axis)
    if keepdims:
        axes = _axes(x, axis, name)
        result = result.reshape(tuple(1 if a in axes else n for a, n in enumerate(x.shape)))
    return _finish(result, None, out, name)


def moment(x, name, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=True,
           mean=None, correction=None):
    """``var``/``std`` over ``axis`` (also several: moved last and merged
    into one, views only), with NumPy's keywords (``mean=``: the mean to
    use, of keepdims' shape; ``correction=``: the array API's ``ddof``)."""
    if correction is not None:
        if ddof != 0:
            raise ArgumentError(f"{name}: ddof and correction can't be provided simultaneously")
        ddof = correction
    if dtype is not None:
        x = x.astype(dtype)
    mask = _mask(x, where, name)
    whole_ddof = float(ddof).is_integer()
    no_axes = axis is not None and not _axes(x, axis, name)
    if mask is not None or mean is not None or not whole_ddof or no_axes:
        if mean is None and mask is None:
            mean = x._reduce("mean", axis, True)
        elif mean is None:
            mean = _masked_mean(x, mask, axis, True)
        elif not isinstance(mean, _array.Array):
            mean = x._like(mean)
        deviations = (x - mean) * (x - mean)
        if mask is None:
            count = int(np.prod([x.shape[a] for a in _axes(x, axis, name)]))
            squares = deviations
        else:
            squares = _array.where(mask, deviations, 0).astype(deviations.dtype)
            count = mask.astype(deviations.dtype)._reduce("sum", axis, keepdims)
        result = squares._reduce("sum", axis, keepdims) / (count - ddof)
        return _finish(np.sqrt(result) if name == "std" else result, dtype, out, name)
    axes = _axes(x, axis, name)
    shape, over = x.shape, (None if axis is None else axes[0])
    if axis is not None and len(axes) > 1:
        rest = [a for a in range(x.ndim) if a not in axes]
        merged = int(np.prod([shape[a] for a in axes]))
        x = x.transpose(rest + axes).reshape(tuple(shape[a] for a in rest) + (merged,))
        over = len(rest)
    result = x._reduce(name, over, ddof=int(ddof))
    if keepdims:
        result = result.reshape(tuple(1 if a in axes else n for a, n in enumerate(shape)))
    return _finish(result, dtype, out, name)


def accumulate(x, name, axis=None, dtype=None, out=None):
    """``cumsum``/``cumprod``/``cummax``/``cummin`` (``axis=None``: over the
    flattened array)."""
    if dtype is not None:
        x = x.astype(dtype)
    a = x if axis is not None else x.reshape(-1)
    return _finish(a._reduce(name, -1 if axis is None else axis), dtype, out, name)


def ufunc_method(ufunc, method, inputs, kwargs):
    """``np.add.reduce(x, axis=0, …)`` and ``np.add.accumulate(x, axis=0, …)``
    as lazy reductions; None where lazyfuse has no such method."""
    names = UFUNC_REDUCTIONS.get(ufunc.__name__)
    if names is None or method not in ("reduce", "accumulate") or len(inputs) != 1:
        return None
    x = inputs[0]
    if not isinstance(x, _array.Array):
        return None
    out = kwargs.pop("out", None)
    if isinstance(out, tuple):
        (out,) = out
    axis = kwargs.pop("axis", 0)
    if method == "reduce":
        return reduce(x, names[0], axis, out=out, **kwargs)
    if ufunc.__name__.startswith("logical_") and kwargs.get("dtype") is None:
        x = x.astype(np.bool_)  # the running all/any of the truth values
    return accumulate(x, names[1], axis, out=out, **kwargs)


def matmul(a, b):
    """NumPy's ``a @ b``: a 1-d operand is a row (left) or a column (right)
    vector, dropped from the result; other leading axes broadcast. One
    launch of lazyfuse's matrix-product kernel (``lazyfuse::matmul``:
    matrixmultiply's GEMM on the CPU, shared-memory tiles on devices)."""
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"matmul: operands of shapes {a.shape} and {b.shape} (a scalar has no "
                         "matrix product; use *)")
    inner = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if a.shape[-1] != inner:
        raise ShapeError(f"matmul: shapes {a.shape} and {b.shape} (expected the last axis of the "
                         f"first, {a.shape[-1]}, to match the second-last of the second, {inner})")
    return _array.Array(a._a.matmul(b._a))


# What `Array`'s methods call (`x.sum()`, `x @ y`, `np.add.reduce(x)`).
register(OPERATIONS, reduce, arg_reduce, moment, accumulate, matmul, ufunc_reduction=ufunc_method)
