"""NumPy's functions that rearrange, repeat, split or join arrays, lazily:
``flip``/``fliplr``/``flipud``/``rot90`` (views, as NumPy's), ``roll``,
``repeat``, ``tile``, ``append``, ``atleast_1d``/``2d``/``3d``,
``broadcast_arrays``, ``meshgrid``, ``column_stack``, ``dstack``,
``split``/``array_split``/``hsplit``/``vsplit``/``dsplit`` (views), and
``nonzero``/``flatnonzero``/``argwhere`` (whose lengths are data: their
input is computed, as CuPy's is).

Each is a composition of basic indexing (views), reshapes, broadcasts and
``concatenate``; nothing runs until a result is demanded."""

import operator
import warnings

import numpy as np

from ._array import Array, _axes
from ._creation import _lazy, _one
from ._fancy import take
from ._joins import _pieces, broadcast_to, concatenate, moveaxis
from ._registry import FUNCTIONS
from .errors import ArgumentError, ShapeError


def _axis(a, axis, name):
    return _axes(a, axis, name)


def flip(m, axis=None):
    """NumPy's ``flip``: the elements along ``axis`` (all axes for None)
    in reverse order; a view."""
    m = _one(m)
    axes = _axis(m, axis, "flip")
    return m[tuple(slice(None, None, -1) if d in axes else slice(None) for d in range(m.ndim))]


def fliplr(m):
    """NumPy's ``fliplr``: columns (axis 1) reversed."""
    m = _one(m)
    if m.ndim < 2:
        raise ArgumentError(f"fliplr: an array of shape {m.shape} (expected at least 2 axes)")
    return flip(m, 1)


def flipud(m):
    """NumPy's ``flipud``: rows (axis 0) reversed."""
    m = _one(m)
    if m.ndim < 1:
        raise ArgumentError("flipud: a 0-d array (expected at least 1 axis)")
    return flip(m, 0)


def rot90(m, k=1, axes=(0, 1)):
    """NumPy's ``rot90``: ``k`` quarter turns in the plane of ``axes``,
    from the first towards the second; a view."""
    m = _one(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ArgumentError(f"rot90: axes {axes} (expected 2 axes)")
    if m.ndim < 2:
        raise ArgumentError(f"rot90: an array of shape {m.shape} (expected at least 2 axes)")
    first, second = (_axis(m, a, "rot90")[0] for a in axes)
    if first == second:
        raise ArgumentError(f"rot90: axes {axes} are the same axis")
    k = operator.index(k) % 4
    if k == 0:
        return m[...]
    if k == 2:
        return flip(flip(m, first), second)
    order = list(range(m.ndim))
    order[first], order[second] = order[second], order[first]
    if k == 1:
        return flip(m, second).transpose(order)
    return flip(m.transpose(order), second)


def roll(a, shift, axis=None):
    """NumPy's ``roll``: elements shifted along ``axis`` (of the flattened
    array for None), those past the end coming back at the start."""
    a = _one(a)
    if axis is None:
        return roll(a.reshape(-1), shift, 0).reshape(a.shape)
    shifts = np.broadcast_to(np.asarray(shift), np.broadcast_shapes(np.shape(shift), np.shape(axis)))
    axes = np.broadcast_to(np.asarray(axis), shifts.shape)
    total = {}
    for s, d in zip(shifts.reshape(-1), axes.reshape(-1)):
        d = _axis(a, int(d), "roll")[0]
        total[d] = total.get(d, 0) + operator.index(s)
    for d, s in total.items():
        n = a.shape[d]
        s = s % n if n else 0
        if s:
            a = Array(a._a.roll(s, d))  # one launch: two copies per line on the CPU
    return a


def repeat(a, repeats, axis=None):
    """NumPy's ``repeat``: each element ``repeats`` times along ``axis`` (of
    the flattened array for None); one count broadcasts lazily, counts per
    element gather by their indices."""
    a = _one(a)
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = _axis(a, axis, "repeat")[0]
    counts = repeats.numpy() if isinstance(repeats, Array) else np.asarray(repeats)
    if not np.issubdtype(counts.dtype, np.integer):
        raise TypeError(f"repeat: counts must be integers, not {counts.dtype}")
    if (counts < 0).any():
        raise ArgumentError("repeat: negative dimensions are not allowed")
    n = a.shape[axis]
    if counts.size == 1:
        count = int(counts.reshape(-1)[0])
        spread = a.shape[:axis + 1] + (1,) + a.shape[axis + 1:]
        wide = a.shape[:axis + 1] + (count,) + a.shape[axis + 1:]
        repeated = broadcast_to(a.reshape(spread), wide)
        return repeated.reshape(a.shape[:axis] + (n * count,) + a.shape[axis + 1:])
    if counts.shape != (n,):
        raise ShapeError(f"repeat: {counts.size} counts for an axis of length {n}")
    return take(a, np.repeat(np.arange(n), counts), axis)


def tile(A, reps):
    """NumPy's ``tile``: ``A`` repeated ``reps`` times along each axis (a
    broadcast, then a reshape)."""
    A = _one(A)
    reps = (operator.index(reps),) if np.ndim(reps) == 0 else tuple(operator.index(r) for r in reps)
    if any(r < 0 for r in reps):
        raise ArgumentError(f"tile: negative repetitions {reps}")
    d = max(len(reps), A.ndim)
    shape = (1,) * (d - A.ndim) + A.shape
    reps = (1,) * (d - len(reps)) + reps
    interleaved = tuple(x for pair in zip((1,) * d, shape) for x in pair)
    wide = tuple(x for pair in zip(reps, shape) for x in pair)
    tiled = broadcast_to(A.reshape(interleaved), wide)
    return tiled.reshape(tuple(r * s for r, s in zip(reps, shape)))


def append(arr, values, axis=None):
    """NumPy's ``append``: ``values`` after ``arr`` along ``axis`` (both
    flattened for None)."""
    arr, values = (_one(x) for x in _lazy([arr, values]))
    if axis is None:
        return concatenate([arr.reshape(-1), values.reshape(-1)])
    return concatenate([arr, values], axis=axis)


def _atleast(arys, ndim, shape_of):
    out = []
    for a in arys:
        a = _one(a)
        out.append(a if a.ndim >= ndim else a.reshape(shape_of(a)))
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys):
    """NumPy's ``atleast_1d``: 0-d arrays as 1-element arrays (views)."""
    return _atleast(arys, 1, lambda a: (1,))


def atleast_2d(*arys):
    """NumPy's ``atleast_2d``: a 1-d ``(n,)`` as ``(1, n)`` (views)."""
    return _atleast(arys, 2, lambda a: (1,) * (2 - a.ndim) + a.shape)


def atleast_3d(*arys):
    """NumPy's ``atleast_3d``: ``(n,)`` as ``(1, n, 1)``, ``(m, n)`` as
    ``(m, n, 1)`` (views)."""
    return _atleast(arys, 3, lambda a: {0: (1, 1, 1), 1: (1,) + a.shape + (1,),
                                        2: a.shape + (1,)}[a.ndim])


def broadcast_arrays(*args):
    """NumPy's ``broadcast_arrays``: every array broadcast to their common
    shape."""
    arrays = [_one(a) for a in _lazy(list(args))]
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        raise ShapeError("broadcast_arrays: shapes " + " ".join(str(a.shape) for a in arrays)
                         + " do not broadcast together") from None
    return tuple(a if a.shape == shape else broadcast_to(a, shape) for a in arrays)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """NumPy's ``meshgrid``: coordinate arrays from coordinate vectors
    (``"xy"``: the first two axes swapped, as for plotting)."""
    if indexing not in ("xy", "ij"):
        raise ArgumentError(f"meshgrid: indexing {indexing!r} (expected 'xy' or 'ij')")
    vectors = [_one(x).reshape(-1) for x in _lazy(list(xi))]
    n = len(vectors)
    shapes = [[1] * n for _ in vectors]
    for i, v in enumerate(vectors):
        shapes[i][i] = v.size
    if indexing == "xy" and n > 1:
        for s in shapes:
            s[0], s[1] = s[1], s[0]
    grids = [v.reshape(tuple(s)) for v, s in zip(vectors, shapes)]
    if sparse:
        return tuple(grids)
    full = tuple(max(s[d] for s in shapes) for d in range(n))
    return tuple(broadcast_to(g, full) for g in grids)


def column_stack(tup):
    """NumPy's ``column_stack``: 1-d arrays as columns, joined along axis 1."""
    pieces = [p.reshape(-1, 1) if p.ndim < 2 else p for p in _pieces(tup, "column_stack")]
    return concatenate(pieces, axis=1)


def dstack(tup):
    """NumPy's ``dstack``: arrays joined along a third axis."""
    pieces = _pieces(tup, "dstack")
    return concatenate([atleast_3d(p) for p in pieces], axis=2)


def array_split(ary, indices_or_sections, axis=0):
    """NumPy's ``array_split``: views of ``ary`` cut along ``axis`` at the
    given indices, or into that many near-equal parts (the first ones one
    longer)."""
    ary = _one(ary)
    axis = _axis(ary, axis, "array_split")[0]
    n = ary.shape[axis]
    if np.ndim(indices_or_sections) == 0:
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise ArgumentError("array_split: number sections must be larger than 0")
        size, extra = divmod(n, sections)
        bounds = np.cumsum([0] + [size + 1] * extra + [size] * (sections - extra)).tolist()
    else:
        bounds = [0] + [operator.index(i) for i in indices_or_sections] + [n]
    return [ary[(slice(None),) * axis + (slice(start, stop),)]
            for start, stop in zip(bounds[:-1], bounds[1:])]


def split(ary, indices_or_sections, axis=0):
    """NumPy's ``split``: as ``array_split``, but a number of sections must
    divide the axis."""
    ary = _one(ary)
    if np.ndim(indices_or_sections) == 0:
        sections = operator.index(indices_or_sections)
        n = ary.shape[_axis(ary, axis, "split")[0]]
        if sections > 0 and n % sections:
            raise ArgumentError("split: array split does not result in an equal division "
                                f"({n} elements into {sections} sections)")
    return array_split(ary, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    """NumPy's ``hsplit``: ``split`` along axis 1 (axis 0 of a 1-d array)."""
    ary = _one(ary)
    if ary.ndim == 0:
        raise ArgumentError("hsplit only works on arrays of 1 or more dimensions")
    return split(ary, indices_or_sections, 1 if ary.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """NumPy's ``vsplit``: ``split`` along axis 0 of an array of 2 or more axes."""
    ary = _one(ary)
    if ary.ndim < 2:
        raise ArgumentError("vsplit only works on arrays of 2 or more dimensions")
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """NumPy's ``dsplit``: ``split`` along axis 2 of an array of 3 or more axes."""
    ary = _one(ary)
    if ary.ndim < 3:
        raise ArgumentError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, 2)


def delete(arr, obj, axis=None):
    """NumPy's ``delete``: ``arr`` without the entries ``obj`` (an int, a
    slice, or ints or a mask) along ``axis`` (of the flattened array for
    None): a gather of the others."""
    arr = _one(arr)
    if axis is None:
        arr, axis = arr.reshape(-1), 0
    axis = _axis(arr, axis, "delete")[0]
    n = arr.shape[axis]
    keep = np.ones(n, dtype=bool)
    if isinstance(obj, slice):
        keep[obj] = False
    else:
        gone = obj.numpy() if isinstance(obj, Array) else np.asarray(obj)
        if gone.dtype == np.bool_:
            if gone.shape != (n,):
                raise ArgumentError(f"delete: boolean array argument obj to delete must be one "
                                    f"dimensional and match the axis length of {n}")
            keep = ~gone
        else:
            if gone.size and not np.issubdtype(gone.dtype, np.integer):
                raise IndexError("delete: arrays used as indices must be of integer (or boolean) type")
            gone = gone.reshape(-1).astype(np.intp)
            if ((gone < -n) | (gone >= n)).any():
                bad = gone[(gone < -n) | (gone >= n)][0]
                raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
            keep[gone] = False
    return take(arr, np.flatnonzero(keep), axis)


def insert(arr, obj, values, axis=None):
    """NumPy's ``insert``: ``values`` put before the entries ``obj`` (an
    int, a slice, or ints) along ``axis`` (of the flattened array for
    None): the values joined after ``arr`` and one gather placing each
    entry, as NumPy places them (positions in order, equal ones in the
    given order)."""
    arr = _one(arr)
    if axis is None:
        arr, axis = arr.reshape(-1), 0
    axis = _axis(arr, axis, "insert")[0]
    n = arr.shape[axis]
    positions = np.arange(n)[obj] if isinstance(obj, slice) else np.asarray(
        obj.numpy() if isinstance(obj, Array) else obj)
    scalar_position = positions.ndim == 0
    if positions.size and not np.issubdtype(positions.dtype, np.integer):
        raise IndexError("insert: index array argument obj to insert must be one dimensional or scalar")
    positions = positions.reshape(-1).astype(np.intp)
    if ((positions < -n) | (positions > n)).any():
        bad = positions[(positions < -n) | (positions > n)][0]
        raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
    positions = np.where(positions < 0, positions + n, positions)
    values = values if isinstance(values, Array) else arr._like(np.asarray(values, dtype=arr.dtype))
    values = values.astype(arr.dtype)
    if positions.size == 1:
        # One position: the values (at least `arr`'s axes) are a block
        # there, their first axis along `axis` for a scalar position.
        block = values.reshape((1,) * (arr.ndim - values.ndim) + values.shape) \
            if values.ndim < arr.ndim else values
        if scalar_position:
            block = moveaxis(block, 0, axis)
        count = block.shape[axis]
        positions = np.repeat(positions, count)
    else:
        count, block = positions.size, values
    block = broadcast_to(block, arr.shape[:axis] + (count,) + arr.shape[axis + 1:])
    # Where each entry of the result comes from: the inserted ones at
    # their positions (stably ordered), the others in order around them.
    order = np.argsort(positions, kind="stable")
    placed = positions[order] + np.arange(count)
    source = np.empty(n + count, np.intp)
    taken = np.ones(n + count, dtype=bool)
    taken[placed] = False
    source[placed] = n + order
    source[taken] = np.arange(n)
    return take(concatenate([arr, block], axis=axis), source, axis)


def nonzero(a):
    """NumPy's ``nonzero``: the indices of the non-zero elements, one array
    per axis. Their count is data: ``a`` is computed (as in CuPy)."""
    a = _one(a)
    if a.ndim == 0:
        raise ArgumentError("nonzero: a 0-d array (NumPy no longer allows it; use atleast_1d)")
    return tuple(a._like(i) for i in np.nonzero(a.numpy()))


def flatnonzero(a):
    """NumPy's ``flatnonzero``: the flat indices of the non-zero elements
    (``a`` computed: their count is data)."""
    a = _one(a)
    return a._like(np.flatnonzero(a.numpy()))


def argwhere(a):
    """NumPy's ``argwhere``: the indices of the non-zero elements, one row
    each (``a`` computed: their count is data)."""
    a = _one(a)
    return a._like(np.argwhere(a.numpy()))


def matrix_transpose(x):
    """NumPy's ``matrix_transpose``: the last two axes swapped (a view)."""
    return _one(x).mT


def unstack(x, /, *, axis=0):
    """NumPy's ``unstack``: the arrays along ``axis``, as views."""
    x = _one(x)
    if x.ndim == 0:
        raise ArgumentError("Input array must be at least 1-d.")
    return tuple(moveaxis(x, axis, 0))


def row_stack(tup, *, dtype=None, casting="same_kind"):
    """NumPy's ``row_stack``: ``vstack``'s old name, deprecated in NumPy
    2.0 (and warned about here as there), removed in NumPy 2.5."""
    warnings.warn("`row_stack` alias is deprecated. Use `np.vstack` directly.",
                  DeprecationWarning, stacklevel=2)
    return FUNCTIONS["vstack"](tup, dtype=dtype, casting=casting)


def block(arrays):
    """NumPy's ``block``: nested lists of arrays joined, the innermost
    lists along the last axis, each list out along the axis before; every
    array gets leading axes up to the deepest nesting or the most axes."""

    def depth(x):
        if isinstance(x, tuple):
            raise TypeError("block: tuples are not allowed (use lists)")
        if isinstance(x, list):
            if not x:
                raise ArgumentError("block: lists cannot be empty")
            depths = {depth(e) for e in x}
            if len(depths) != 1:
                raise ArgumentError("block: list depths are mismatched")
            return depths.pop() + 1
        return 0

    def leaves(x):
        return [leaf for e in x for leaf in leaves(e)] if isinstance(x, list) else [x]

    levels = depth(arrays)
    pieces = _lazy(leaves(arrays))
    ndim = max([levels] + [p.ndim if isinstance(p, Array) else np.ndim(p) for p in pieces])
    pieces = iter([_one(p).reshape((1,) * (ndim - np.ndim(p)) + np.shape(p)) for p in pieces])

    def joined(x, level):
        if not isinstance(x, list):
            return next(pieces)
        return concatenate([joined(e, level + 1) for e in x], axis=level - levels)

    return joined(arrays, 0)


EXPORTED = (flip, fliplr, flipud, rot90, roll, repeat, tile, append, atleast_1d, atleast_2d,
             atleast_3d, broadcast_arrays, meshgrid, column_stack, dstack, array_split, split,
             hsplit, vsplit, dsplit, delete, insert, nonzero, flatnonzero, argwhere,
             matrix_transpose, unstack, row_stack, block)
