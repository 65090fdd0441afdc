"""NumPy's diagonals: ``diagonal``, ``trace``, ``diag``, ``diagflat`` and
``fill_diagonal``, lazily. A diagonal of a matrix is a strided run of its
elements laid out row-major: ``m + 1`` apart from the ``offset``-th, so it
is a basic slice of the flattened axes (a view, no kernel of its own)."""

import operator

import numpy as np

from ._array import Array, _axes
from ._creation import _one
from ._fancy import put_flat
from ._joins import moveaxis
from ._registry import OPERATIONS, register
from .errors import ArgumentError


def diagonal(a, offset=0, axis1=0, axis2=1):
    """NumPy's ``diagonal``: the ``offset``-th diagonal of the matrices on
    ``axis1`` and ``axis2``, as a last axis."""
    a, offset = _one(a), operator.index(offset)
    if a.ndim < 2:
        raise ArgumentError(f"diagonal: an array of shape {a.shape} (expected at least 2 axes)")
    axis1, axis2 = (_axes(a, axis, "diagonal")[0] for axis in (axis1, axis2))
    if axis1 == axis2:
        raise ArgumentError("diagonal: axis1 and axis2 cannot be the same")
    matrices = moveaxis(a, (axis1, axis2), (-2, -1))
    n, m = matrices.shape[-2:]
    if offset >= 0:
        length, start = max(0, min(n, m - offset)), offset
    else:
        length, start = max(0, min(n + offset, m)), -offset * m
    flat = matrices.reshape(matrices.shape[:-2] + (n * m,))
    return flat[..., start:start + length * (m + 1):m + 1]


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """NumPy's ``trace``: the sum along the diagonal."""
    return diagonal(a, offset, axis1, axis2).sum(-1, dtype=dtype, out=out)


def diag(v, k=0):
    """NumPy's ``diag``: a 1-d ``v`` on the ``k``-th diagonal of a square
    matrix of zeros, or a copy of a matrix's ``k``-th diagonal."""
    v, k = _one(v), operator.index(k)
    if v.ndim == 2:
        return diagonal(v, k).copy()
    if v.ndim != 1:
        raise ArgumentError(f"diag: an array of shape {v.shape} (expected 1 or 2 axes)")
    n = v.size + abs(k)
    matrix = Array(v._a.full_like([n * n], 0, v.dtype.name))
    start = k if k >= 0 else -k * n
    matrix[start:start + v.size * (n + 1):n + 1] = v
    return matrix.reshape(n, n)


def diagflat(v, k=0):
    """NumPy's ``diagflat``: ``diag`` of ``v`` flattened."""
    return diag(_one(v).reshape(-1), k)


def fill_diagonal(a, val, wrap=False):
    """NumPy's ``fill_diagonal``: writes ``val`` (repeated as needed) along
    the main diagonal of ``a``, which takes the new value."""
    if not isinstance(a, Array):
        return np.fill_diagonal(a, val.numpy() if isinstance(val, Array) else val, wrap)
    if a.ndim < 2:
        raise ArgumentError("fill_diagonal: array must be at least 2-d")
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = a.size if wrap else min(a.size, a.shape[1] * a.shape[1])
    else:
        if len(set(a.shape)) != 1:
            raise ArgumentError("fill_diagonal: all dimensions of input must be of equal length")
        step = 1 + int(np.cumprod(a.shape[:-1]).sum())
        end = a.size
    put_flat(a, np.arange(0, end, step), val)
    return None


register(OPERATIONS, diagonal, trace)  # `Array`'s methods
