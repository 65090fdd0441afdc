"""NumPy's functions that join arrays and reshape how they line up:
``concatenate``, ``stack``, ``hstack``, ``vstack``; ``broadcast_to``,
``expand_dims``, ``moveaxis`` (views). Lazy: each array is written into its
part of a join's result, fused with the work that computes it."""

import numpy as np

from ._array import COMPLEX, Array, _axes, _dtype_name, _store
from ._creation import _lazy, _one
from .errors import ArgumentError, DTypeError, ShapeError


def expand_dims(a, axis):
    """NumPy's ``expand_dims``: length-1 axes inserted (a view)."""
    a = _one(a)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    ndim = a.ndim + len(axes)
    axes = _axes(np.empty((1,) * ndim), tuple(axes), "expand_dims")
    if len(axes) != len(set(axes)) or len(axes) != ndim - a.ndim:
        raise ArgumentError(f"expand_dims: repeated axis in {axis}")
    shape, rest = [], iter(a.shape)
    for d in range(ndim):
        shape.append(1 if d in axes else next(rest))
    return a.reshape(shape)


def moveaxis(a, source, destination):
    """NumPy's ``moveaxis`` (a view)."""
    a = _one(a)
    src = source if isinstance(source, (tuple, list)) else (source,)
    dst = destination if isinstance(destination, (tuple, list)) else (destination,)
    src = [_axes(a, s, "moveaxis")[0] for s in src]
    dst = [_axes(a, d, "moveaxis")[0] for d in dst]
    if len(src) != len(dst):
        raise ArgumentError("moveaxis: `source` and `destination` arguments must have the same "
                            "number of elements")
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return a.transpose(order)


def broadcast_to(array, shape):
    """NumPy's ``broadcast_to``, lazily."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return Array(_one(array)._a.broadcast_to(list(shape)))


def _pieces(arrays, what):
    if isinstance(arrays, Array) or not hasattr(arrays, "__iter__"):
        raise ArgumentError(f"{what}: expected a sequence of arrays")
    pieces = _lazy(list(arrays))
    if not pieces:
        raise ArgumentError(f"{what}: need at least one array to join")
    first = next(p for p in pieces if isinstance(p, Array))
    return [p if isinstance(p, Array) else first._like(np.asarray(p)) for p in pieces]


def concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """NumPy's ``concatenate`` (``axis=None``: of the flattened arrays),
    lazily: each array is written into its part of the result (fused with
    the work that computes it)."""
    if any(isinstance(p, COMPLEX.types) for p in arrays):
        return COMPLEX.join(concatenate, list(arrays), axis=axis, out=out, dtype=dtype,
                                   casting=casting)
    pieces = _pieces(arrays, "concatenate")
    if axis is None:
        pieces, axis = [p.reshape(-1) for p in pieces], 0
    first = pieces[0]
    if first.ndim == 0:
        raise ArgumentError("concatenate: zero-dimensional arrays cannot be concatenated")
    axis = _axes(first, axis, "concatenate")[0]
    for p in pieces:
        others = [n for d, n in enumerate(p.shape) if d != axis]
        if p.ndim != first.ndim or others != [n for d, n in enumerate(first.shape) if d != axis]:
            raise ShapeError(
                f"concatenate: all the input array dimensions except for the concatenation axis "
                f"must match exactly (shapes {', '.join(str(q.shape) for q in pieces)}, axis "
                f"{axis})")
    if dtype is None:
        dtype = np.result_type(*[p.dtype for p in pieces])
    elif not all(np.can_cast(p.dtype, dtype, casting) for p in pieces):
        raise DTypeError(
            f"concatenate: cannot cast the arrays to {np.dtype(dtype)} with casting={casting!r}")
    shape = list(first.shape)
    shape[axis] = sum(p.shape[axis] for p in pieces)
    result = Array(first._a.full_like(shape, 0, _dtype_name(dtype)))
    at = 0
    for p in pieces:
        n = p.shape[axis]
        if n:
            region = [(at if d == axis else 0, 1, n if d == axis else length)
                      for d, length in enumerate(shape)]
            result = Array(result._a.with_region(region, p.astype(dtype)._a))
        at += n
    return result if out is None else _store(result, out, "concatenate")


def stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """NumPy's ``stack``: arrays of one shape along a new axis, lazily."""
    if any(isinstance(p, COMPLEX.types) for p in arrays):
        return COMPLEX.join(stack, list(arrays), axis=axis, out=out, dtype=dtype,
                                   casting=casting)
    pieces = _pieces(arrays, "stack")
    if len({p.shape for p in pieces}) != 1:
        raise ShapeError(f"stack: all input arrays must have the same shape (got "
                         f"{', '.join(str(p.shape) for p in pieces)})")
    axis = _axes(np.empty((1,) * (pieces[0].ndim + 1)), axis, "stack")[0]
    return concatenate([expand_dims(p, axis) for p in pieces], axis, out, dtype, casting)


def hstack(tup, *, dtype=None, casting="same_kind"):
    """NumPy's ``hstack``: along the first axis for 1-d arrays, else the second."""
    pieces = [p.reshape(1) if p.ndim == 0 else p for p in _pieces(tup, "hstack")]
    return concatenate(pieces, 0 if pieces[0].ndim == 1 else 1, dtype=dtype, casting=casting)


def vstack(tup, *, dtype=None, casting="same_kind"):
    """NumPy's ``vstack``: 1-d arrays as rows, along the first axis."""
    pieces = [p.reshape(1, -1) if p.ndim < 2 else p for p in _pieces(tup, "vstack")]
    return concatenate(pieces, 0, dtype=dtype, casting=casting)


EXPORTED = (expand_dims, moveaxis, broadcast_to, concatenate, stack, hstack, vstack)
