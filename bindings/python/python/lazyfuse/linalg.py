"""``lazyfuse.linalg``: NumPy's ``linalg`` norms, lazily (``norm``,
``vector_norm``, ``matrix_norm``: reductions fused with the element-wise
work in them), and the products (``matmul``, ``outer``, ``tensordot``,
``vecdot``). ``np.linalg.norm(x)`` on a lazy array comes here too.

Norms that need singular values (``ord=2``, ``-2`` and ``"nuc"`` of a
matrix) and the decompositions and solvers (``inv``, ``solve``, ``det``,
``svd``…) run in NumPy on computed values, as every NumPy function
lazyfuse lacks does."""

import operator

import numpy as np

from ._array import Array
from .errors import ArgumentError

__all__ = ["norm", "vector_norm", "matrix_norm", "matmul", "outer", "tensordot", "vecdot"]


def _floating(x):
    """``x`` as a lazy array of a floating dtype (integers and bools as
    float64, as NumPy's norms take them)."""
    from ._numpy import _one
    x = _one(x)
    return x if x.dtype.kind == "f" else x.astype(np.float64)


def norm(x, ord=None, axis=None, keepdims=False):
    """NumPy's ``linalg.norm``: a vector norm over one axis (or of the
    flattened array for ``axis=None`` and ``ord=None``), a matrix norm over
    two."""
    x = _floating(x)
    if axis is None:
        if ord is None:
            result = np.sqrt((x * x).sum())
            return result.reshape((1,) * x.ndim) if keepdims else result
        if x.ndim not in (1, 2):
            raise ArgumentError("norm: improper number of dimensions to norm "
                                f"({x.ndim}; expected 1 or 2 with an ord)")
        axis = tuple(range(x.ndim))
    axes = (operator.index(axis),) if np.ndim(axis) == 0 else tuple(operator.index(a) for a in axis)
    if len(axes) == 1:
        if isinstance(ord, str):
            raise ArgumentError(f"norm: invalid norm order {ord!r} for vectors")
        return vector_norm(x, axis=axes[0], keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axes) == 2:
        return matrix_norm(x, ord="fro" if ord is None else ord, keepdims=keepdims, axes=axes)
    raise ArgumentError(f"norm: improper number of dimensions to norm (axis {axis})")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """NumPy's ``linalg.vector_norm``: ``(sum |x|**ord) ** (1/ord)`` along
    ``axis`` (all axes for None), ``inf``/``-inf`` the largest/smallest
    magnitude, ``0`` the count of non-zeros."""
    x = _floating(x)
    magnitude = abs(x)
    if ord == np.inf:
        return magnitude.max(axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return magnitude.min(axis=axis, keepdims=keepdims)
    if ord == 0:
        return (x != 0).astype(x.dtype).sum(axis=axis, keepdims=keepdims)
    if ord == 1:
        return magnitude.sum(axis=axis, keepdims=keepdims)
    if ord == 2:
        return np.sqrt((x * x).sum(axis=axis, keepdims=keepdims))
    try:
        p = float(ord)
    except (TypeError, ValueError):
        raise ArgumentError(f"vector_norm: invalid norm order {ord!r}") from None
    return ((magnitude ** p).sum(axis=axis, keepdims=keepdims)) ** (1.0 / p)


def matrix_norm(x, /, *, keepdims=False, ord="fro", axes=(-2, -1)):
    """NumPy's ``linalg.matrix_norm`` over ``axes`` (the last two): ``"fro"``,
    ``1``/``-1`` (largest/smallest column sum of magnitudes), ``inf``/
    ``-inf`` (of row sums); ``2``, ``-2`` and ``"nuc"`` (singular values)
    run in NumPy on computed values."""
    from ._reductions import _axes
    x = _floating(x)
    if x.ndim < 2:
        raise ArgumentError(f"matrix_norm: an array of shape {x.shape} (expected at least 2 axes)")
    rows, columns = (_axes(x, a, "matrix_norm")[0] for a in axes)
    if rows == columns:
        raise ArgumentError("matrix_norm: duplicate axes given")
    if ord in (2, -2, "nuc"):
        value = np.linalg.norm(x.numpy(), ord=ord, axis=(rows, columns), keepdims=keepdims)
        return x._like(value)
    magnitude = abs(x)
    if ord == "fro":
        result = np.sqrt((x * x).sum(axis=(rows, columns), keepdims=keepdims))
    elif ord in (1, -1, np.inf, -np.inf):
        # Sum along one axis, then the extreme along the other.
        summed_axis, extreme_axis = (rows, columns) if ord in (1, -1) else (columns, rows)
        sums = magnitude.sum(axis=summed_axis, keepdims=True)
        pick = sums.max if ord in (1, np.inf) else sums.min
        result = pick(axis=extreme_axis, keepdims=True)
        if not keepdims:
            result = result.reshape(tuple(n for d, n in enumerate(result.shape)
                                          if d not in (rows, columns)))
    else:
        raise ArgumentError(f"matrix_norm: invalid norm order {ord!r} for matrices")
    return result


def matmul(x1, x2, /):
    """NumPy's ``linalg.matmul``: ``x1 @ x2``."""
    from ._numpy import FUNCTIONS
    return FUNCTIONS["matmul"](x1, x2)


def outer(x1, x2, /):
    """NumPy's ``linalg.outer`` of two vectors."""
    from ._numpy import FUNCTIONS
    return FUNCTIONS["outer"](x1, x2)


def tensordot(x1, x2, /, *, axes=2):
    """NumPy's ``linalg.tensordot``."""
    from ._contractions import tensordot as contract
    return contract(x1, x2, axes)


def vecdot(x1, x2, /, *, axis=-1):
    """NumPy's ``linalg.vecdot``: the sum of products along ``axis``
    (broadcast otherwise), in NumPy's result dtype."""
    from ._contractions import vecdot as contract
    return contract(x1, x2, axis)


FUNCTIONS = {f.__name__: f for f in (norm, vector_norm, matrix_norm, matmul, outer, tensordot,
                                     vecdot)}
