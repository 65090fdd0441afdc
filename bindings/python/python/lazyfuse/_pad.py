"""NumPy's ``pad``, lazily in every mode but a Python function's.

Each axis in turn is padded (a later axis pads the corners, as NumPy's):
- ``edge``, ``wrap``, ``reflect`` and ``symmetric``: a gather of the
  positions NumPy's own padding of ``arange(n)`` gives; an odd reflection
  (``reflect_type="odd"``), linear in the values, is NumPy's padding of the
  identity matrix: each padded value a few values times small integers;
- ``constant`` (and ``empty``, as zeros), ``maximum``, ``minimum``,
  ``mean``, ``median``: the edge gathered, then the constant or the
  statistic of the first or last ``stat_length`` values where the pad is
  (a fused ``where``);
- ``linear_ramp``: joined between blocks of ``linspace`` from the end
  value to the edge.

Nothing runs until a result is demanded."""

import functools

import numpy as np

from ._array import Array, where
from ._creation import _one
from ._fancy import take
from ._joins import concatenate
from ._ranges import linspace
from ._registry import FUNCTIONS
from .errors import ArgumentError

_INDEX_MODES = ("edge", "reflect", "symmetric", "wrap")
_STATISTICS = {"maximum": "max", "minimum": "min", "mean": "mean", "median": "median"}
#: The keywords each mode takes, as NumPy's.
_OPTIONS = {"constant": ("constant_values",), "empty": (), "edge": (), "wrap": (),
            "reflect": ("reflect_type",), "symmetric": ("reflect_type",),
            "linear_ramp": ("end_values",), **{m: ("stat_length",) for m in _STATISTICS}}


def pad(array, pad_width, mode="constant", **kwargs):
    """NumPy's ``pad``: ``array`` widened by ``pad_width`` (per axis and
    side) in ``mode``. Lazy; a callable ``mode`` runs in NumPy on the
    computed array."""
    array = _one(array)
    if not np.issubdtype(np.asarray(pad_width).dtype, np.integer) and np.size(pad_width):
        raise TypeError("pad: `pad_width` must be of integral type")
    widths = _pairs(pad_width, array.ndim, "pad_width", index=True)
    if callable(mode):
        return array._like(np.pad(array.numpy(), widths, mode=mode, **kwargs))
    if mode not in _OPTIONS:
        raise ArgumentError(f"pad: mode {mode!r} (expected one of {', '.join(_OPTIONS)}, or a "
                            "function)")
    unknown = set(kwargs) - set(_OPTIONS[mode])
    if unknown:
        raise ArgumentError(f"pad: unsupported keyword arguments for mode {mode!r}: {unknown}")
    if mode in ("constant", "empty"):
        return _pad_constant(array, widths, kwargs.get("constant_values", 0))
    for axis, (before, after) in enumerate(widths):
        if array.shape[axis] == 0 and (before or after):
            raise ArgumentError(f"pad: can't extend empty axis {axis} using modes other than "
                                "'constant' or 'empty'")
    if mode in _INDEX_MODES:
        return _pad_by_positions(array, widths, mode, kwargs.get("reflect_type", "even"))
    if mode in _STATISTICS:
        return _pad_statistic(array, widths, mode, kwargs.get("stat_length"))
    return _pad_linear_ramp(array, widths, kwargs.get("end_values", 0))


def _pairs(values, ndim, name, index=False):
    """``values`` as one ``(before, after)`` pair per axis, as NumPy reads
    them (indices rounded to integers and never negative)."""
    x = np.asarray(values.numpy() if isinstance(values, Array) else values)
    if index:
        x = np.round(x).astype(np.intp)
        if (x < 0).any():
            raise ArgumentError(f"pad: {name} can't contain negative values")
    try:
        return [tuple(pair) for pair in np.broadcast_to(x, (ndim, 2)).tolist()]
    except ValueError:
        raise ArgumentError(f"pad: {name} of shape {x.shape} for an array of {ndim} axes "
                            f"(expected a number, a pair, or ({ndim}, 2) of them)") from None


def _join(array, axis, before, after):
    """``array`` between the blocks ``before`` and ``after`` (None: no
    block) along ``axis``."""
    pieces = [p for p in (before, array, after) if p is not None]
    return concatenate(pieces, axis=axis) if len(pieces) > 1 else array


def _along(array, axis, index):
    """``array[..., index, ...]`` with ``index`` at ``axis``."""
    return array[(slice(None),) * axis + (index,)]


def _pad_constant(array, widths, values):
    """Each axis' constants where its pad is."""
    pairs = _pairs(values, array.ndim, "constant_values")
    dtype = array.dtype.name
    for axis, ((before, after), constants) in enumerate(zip(widths, pairs)):
        if not (before or after):
            continue
        if array.shape[axis]:
            # Each constant as a 0-d array of the dtype (2.7 pads ints with 2).
            left, right = (Array(array._a.full_like([], c, dtype)) for c in constants)
            array = _pad_axis(array, axis, before, after, left, right)
            continue
        # An empty axis has no edge to gather: blocks of the constants.
        blocks = []
        for width, value in zip((before, after), constants):
            shape = array.shape[:axis] + (width,) + array.shape[axis + 1:]
            blocks.append(Array(array._a.full_like(list(shape), value, dtype)) if width else None)
        array = _join(array, axis, *blocks)
    return array


def _pad_axis(array, axis, before, after, left, right):
    """``array`` widened along ``axis``: its edge values gathered over the
    pad, then ``left`` and ``right`` (values broadcasting along the axis)
    where the pad is: a gather and a fused ``where``."""
    n = array.shape[axis]
    padded = take(array, np.pad(np.arange(n), (before, after), mode="edge"), axis)
    along = [1] * array.ndim
    along[axis] = n + before + after
    position = array._like(np.arange(n + before + after).reshape(along))
    if before:
        padded = where(position < before, left, padded)
    if after:
        padded = where(position >= before + n, right, padded)
    return padded


def _pad_by_positions(array, widths, mode, reflect_type):
    """A gather of NumPy's padding of the positions along each axis (an
    odd reflection: of the identity)."""
    for axis, (before, after) in enumerate(widths):
        n = array.shape[axis]
        if not (before or after):
            continue
        if reflect_type == "odd" and mode in ("reflect", "symmetric") and n > 1:
            array = _odd_reflection(array, axis, before, after, mode)
        else:
            array = take(array, np.pad(np.arange(n), (before, after), mode=mode), axis)
    return array


def _odd_reflection(array, axis, before, after, mode):
    """NumPy's odd reflection along ``axis``: ``2 * edge - reflected``,
    repeated where the pad is wider than the axis. Each padded value is the
    same sum of values times integers as in NumPy's padding of the identity
    (the coefficients of a row: its nonzero entries), computed as that sum."""
    n = array.shape[axis]
    matrix = np.pad(np.eye(n, dtype=np.int64), ((before, after), (0, 0)), mode=mode,
                    reflect_type="odd")
    blocks = []
    for rows in (matrix[:before], matrix[before + n:]):
        if not len(rows):
            blocks.append(None)
            continue
        terms = max(1, int((rows != 0).sum(axis=1).max()))
        columns = np.argsort(rows == 0, axis=1, kind="stable")[:, :terms]
        coefficients = np.take_along_axis(rows, columns, 1).astype(array.dtype)
        along = (1,) * axis + (len(rows),) + (1,) * (array.ndim - axis - 1)
        products = (take(array, columns[:, t], axis) * array._like(coefficients[:, t].reshape(along))
                    for t in range(terms))
        blocks.append(functools.reduce(lambda a, b: a + b, products))
    return _join(array, axis, *blocks)


def _pad_statistic(array, widths, mode, stat_length):
    """The statistic of the first and last ``stat_length`` values of each
    axis (all of them by default) where its pad is, rounded into an integer
    array as NumPy rounds them."""
    statistic = FUNCTIONS[_STATISTICS[mode]]
    lengths = ([(None, None)] * array.ndim if stat_length is None
               else _pairs(stat_length, array.ndim, "stat_length", index=True))
    for axis, ((before, after), (first, last)) in enumerate(zip(widths, lengths)):
        n = array.shape[axis]
        first, last = (n if k is None else min(k, n) for k in (first, last))
        if 0 in (first, last) and mode in ("maximum", "minimum"):
            raise ArgumentError("pad: stat_length of 0 yields no value for padding")
        if not (before or after):
            continue

        def stat(start, stop):
            value = statistic(array[(slice(None),) * axis + (slice(start, stop),)], axis=axis,
                              keepdims=True)
            if array.dtype.kind in "iu":
                value = np.round(value)
            return value.astype(array.dtype)

        left = stat(0, first)
        # Both sides read the whole axis: one statistic, as NumPy's.
        right = left if first == last == n else stat(n - last, n)
        array = _pad_axis(array, axis, before, after, left, right)
    return array


def _pad_linear_ramp(array, widths, end_values):
    """Blocks of ``linspace`` from each end value towards the edge (the
    edge itself left out), in the array's dtype."""
    ends = _pairs(end_values, array.ndim, "end_values")
    for axis, ((before, after), (first, last)) in enumerate(zip(widths, ends)):
        n = array.shape[axis]

        def ramp(end, edge, width):
            return (linspace(end, _along(array, axis, edge), width, endpoint=False,
                             dtype=array.dtype, axis=axis) if width else None)

        right = ramp(last, n - 1, after)
        if right is not None:
            right = right[(slice(None),) * axis + (slice(None, None, -1),)]
        array = _join(array, axis, ramp(first, 0, before), right)
    return array


EXPORTED = (pad,)
