"""``lazyfuse.linalg``: NumPy's ``linalg``.

- **Lazy:** the norms (``norm``, ``vector_norm``, ``matrix_norm``:
  reductions fused with the element-wise work in them), the products
  (``matmul``, ``outer``, ``tensordot``, ``vecdot``, ``multi_dot`` in the
  cheapest order, ``matrix_power`` by repeated squaring), ``cross``,
  ``diagonal``, ``trace``, ``matrix_transpose``. ``np.linalg.norm(x)`` on a
  lazy array comes here too.
- **Computed in NumPy:** the decompositions, solvers and what needs
  singular values (``inv``, ``solve``, ``det``, ``slogdet``, ``svd``,
  ``qr``, ``cholesky``, ``eigh``, ``eig``…; the norms ``ord=2``, ``-2``
  and ``"nuc"`` of a matrix) run in LAPACK through NumPy on computed
  values, and their arrays are given back to the context as lazyfuse
  arrays, as CuPy's ``cupy.linalg`` returns CuPy arrays (complex ones, as
  ``eig`` of a matrix with complex eigenvalues gives, as
  ``lazyfuse.ComplexArray``)."""

import operator

import numpy as np

from ._array import Array, _axes, _store
from ._creation import _lazy, _one, asarray
from ._registry import FUNCTIONS, LINALG_FUNCTIONS, register
from .errors import ArgumentError

__all__ = ["norm", "vector_norm", "matrix_norm", "matmul", "outer", "tensordot", "vecdot"]


def _floating(x):
    """``x`` as a lazy array of a floating dtype (integers and bools as
    float64, as NumPy's norms take them)."""
    x = _one(x)
    return x if x.dtype.kind in "fc" else x.astype(np.float64)


def _squares(x):
    """``|x|**2``, real: of a complex value, the sum of its parts' squares."""
    return x.real * x.real + x.imag * x.imag if x.dtype.kind == "c" else x * x


def norm(x, ord=None, axis=None, keepdims=False):
    """NumPy's ``linalg.norm``: a vector norm over one axis (or of the
    flattened array for ``axis=None`` and ``ord=None``), a matrix norm over
    two."""
    x = _floating(x)
    if axis is None:
        if ord is None:
            result = np.sqrt(_squares(x).sum())
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
        return (x != 0).astype(magnitude.dtype).sum(axis=axis, keepdims=keepdims)
    if ord == 1:
        return magnitude.sum(axis=axis, keepdims=keepdims)
    if ord == 2:
        return np.sqrt(_squares(x).sum(axis=axis, keepdims=keepdims))
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
    x = _floating(x)
    if x.ndim < 2:
        raise ArgumentError(f"matrix_norm: an array of shape {x.shape} (expected at least 2 axes)")
    rows, columns = (_axes(x, a, "matrix_norm")[0] for a in axes)
    if rows == columns:
        raise ArgumentError("matrix_norm: duplicate axes given")
    if ord in (2, -2, "nuc"):
        value = np.linalg.norm(x.numpy(), ord=ord, axis=(rows, columns), keepdims=keepdims)
        return x.real._like(value)
    magnitude = abs(x)
    if ord == "fro":
        result = np.sqrt(_squares(x).sum(axis=(rows, columns), keepdims=keepdims))
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
    return FUNCTIONS["matmul"](x1, x2)


def outer(x1, x2, /):
    """NumPy's ``linalg.outer`` of two vectors."""
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


def matrix_power(a, n):
    """NumPy's ``linalg.matrix_power``: ``a`` (square, or a stack) to the
    integer power ``n`` by repeated squaring, lazily (``n < 0``: of the
    inverse, computed in NumPy)."""
    a = _one(a)
    n = operator.index(n)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ArgumentError(f"matrix_power: an array of shape {a.shape} (expected square "
                            "matrices in its last two axes)")
    if n == 0:
        identity = FUNCTIONS["eye"](a.shape[-1], dtype=a.dtype)
        return FUNCTIONS["broadcast_to"](identity, a.shape) * 1
    if n < 0:
        a, n = inv(a), -n
    result, square = None, a
    while n:
        if n & 1:
            result = square if result is None else result @ square
        n >>= 1
        if n:
            square = square @ square
    return result


def multi_dot(arrays, *, out=None):
    """NumPy's ``linalg.multi_dot``: the product of the matrices in the
    cheapest order (NumPy's dynamic programme over their shapes; the first
    and last may be 1-d), each product a lazy ``matmul``."""
    arrays = _lazy(list(arrays))
    if len(arrays) < 2:
        raise ArgumentError("multi_dot: expecting at least two arrays")
    first, last = arrays[0], arrays[-1]
    if first.ndim == 1:
        arrays[0] = first.reshape(1, -1)
    if last.ndim == 1:
        arrays[-1] = last.reshape(-1, 1)
    if any(m.ndim != 2 for m in arrays):
        raise ArgumentError("multi_dot: every array but the first and last must be 2-d")
    order = _chain_order([m.shape[0] for m in arrays] + [arrays[-1].shape[1]])
    result = _chain(arrays, order, 0, len(arrays) - 1)
    if first.ndim == 1 and last.ndim == 1:
        result = result.reshape(())
    elif first.ndim == 1:
        result = result.reshape(-1)
    elif last.ndim == 1:
        result = result.reshape(-1)
    return result if out is None else _store(result, out, "multi_dot", "same_kind")


def _chain_order(dims):
    """``split[i][j]``: where the cheapest product of matrices ``i..=j``
    splits (matrix ``k`` is ``dims[k] × dims[k + 1]``)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(arrays, split, i, j):
    if i == j:
        return arrays[i]
    k = split[i][j]
    return _chain(arrays, split, i, k) @ _chain(arrays, split, k + 1, j)


def _numpy_alias(name):
    def apply(*args, **kwargs):
        return FUNCTIONS[name](*args, **kwargs)
    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = f"NumPy's ``linalg.{name}``: ``lazyfuse.{name}``, lazily."
    return apply


cross, matrix_transpose = (_numpy_alias(n) for n in ("cross", "matrix_transpose"))


def diagonal(x, /, *, offset=0):
    """NumPy's (the array API's) ``linalg.diagonal``: the diagonals of the
    matrices in the last two axes (a view)."""
    return FUNCTIONS["diagonal"](x, offset, axis1=-2, axis2=-1)


def trace(x, /, *, offset=0, dtype=None):
    """NumPy's (the array API's) ``linalg.trace``: the sums of the diagonals
    of the matrices in the last two axes."""
    return FUNCTIONS["trace"](x, offset, axis1=-2, axis2=-1, dtype=dtype)

#: Computed in NumPy (LAPACK) on computed values, arrays given back.
_COMPUTED = ("inv", "pinv", "solve", "lstsq", "det", "slogdet", "cond", "matrix_rank", "svd",
             "svdvals", "qr", "cholesky", "eig", "eigh", "eigvals", "eigvalsh", "tensorinv",
             "tensorsolve")

LinAlgError = np.linalg.LinAlgError


def _computed(name):
    numpy_function = getattr(np.linalg, name)

    def apply(*args, **kwargs):
        from ._host import _computed as values, _first_array
        like = _first_array(args, kwargs)
        args, kwargs = values(args), values(kwargs)
        result = numpy_function(*args, **kwargs)
        # NumPy 2.5's eig/eigvals of a real matrix are complex even when
        # every value is real; NumPy 2.4 and older gave the real values,
        # as here. Of a complex matrix they stay complex, as does every
        # other result.
        real_values = name in ("eig", "eigvals") and not any(
            np.iscomplexobj(a) for a in (*args, *kwargs.values()))
        return _given(name, result, like, real_values)
    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = (f"NumPy's ``linalg.{name}``, computed in NumPy on computed values; its "
                     "arrays given back to the context.")
    return apply


def _given(name, result, like, real_values=False):
    """NumPy's ``result`` (an array, a number, or a named tuple of them)
    with its arrays as lazyfuse arrays of ``like``'s context; complex
    arrays of real values made real where ``real_values``."""
    if isinstance(result, np.ndarray):
        if real_values and result.dtype.kind == "c" and not result.imag.any():
            result = result.real.copy()
        return like._like(result) if like is not None else asarray(result)
    if isinstance(result, tuple):
        parts = [_given(name, r, like, real_values) for r in result]
        return type(result)(*parts) if hasattr(result, "_fields") else tuple(parts)
    return result


for _name in _COMPUTED:
    if hasattr(np.linalg, _name):
        globals()[_name] = _computed(_name)
del _name

__all__ += ["matrix_power", "multi_dot", "cross", "diagonal", "trace", "matrix_transpose",
            "LinAlgError", *(n for n in _COMPUTED if hasattr(np.linalg, n))]

# NumPy's `np.linalg.f(lazy)` comes here (`Array.__array_function__`).
register(LINALG_FUNCTIONS, norm, vector_norm, matrix_norm, matmul, outer, tensordot, vecdot,
         matrix_power, multi_dot, cross, diagonal, trace, matrix_transpose,
         **{n: globals()[n] for n in _COMPUTED if n in globals()})
