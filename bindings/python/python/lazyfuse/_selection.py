"""What an advanced-index key selects, NumPy's rules spelled out as one
gather or scatter along one axis.

A key with array indices (integer or boolean arrays; beside one, Python
ints count as 0-d integer arrays, as in NumPy) is resolved into:

- a *region*: the array itself, or a view of it (``None``'s new axes, the
  key's slices, and a transpose bringing the indexed axes together), so
  that a write to it writes the array;
- the *axis* of the region where the indexed axes start, and how many
  there are;
- one *index* into those axes taken as one (C order): the key's indices
  broadcast together and combined (``i * n_j + j``), a boolean mask's
  true positions (``flatnonzero``) standing for the axes it covers.

The indexed axes' values go where the indices' broadcast shape goes: in
place when the array indices are next to each other in the key, else in
front (NumPy's rule). Known indices (NumPy's, Python's, or computed
already) are checked and made non-negative here, with NumPy's messages;
lazy integer indices stay lazy (out of bounds, they wrap around, as in
CuPy); a lazy mask is computed, since its values decide the shape."""

import operator

import numpy as np

from ._array import Array

_FULL = slice(None)


class Selection:
    """What an advanced key selects of an array (see the module)."""

    __slots__ = ("region", "axis", "count", "index", "mask")

    def __init__(self, region, axis, count, index, mask):
        self.region, self.axis, self.count, self.index = region, axis, count, index
        self.mask = mask  # the mask, when the key's only array index is one

    def merged(self):
        """The region with its indexed axes as one axis (a view where NumPy's
        reshape would be one)."""
        shape = self.region.shape
        at, end = self.axis, self.axis + self.count
        if self.count == 1:
            return self.region
        return self.region.reshape(shape[:at] + (_product(shape[at:end]),) + shape[end:])


def is_array_index(k):
    """Whether ``k`` is an array index (cheap: on the indexing path)."""
    return isinstance(k, (list, np.ndarray, Array))


def lazy_mask(array, key):
    """``(axis, mask)`` when ``key`` is one lazy boolean array with only
    full slices and ``...`` around it, else None: the key that
    ``x[key] = value`` with one value can write without computing it."""
    parts = key if type(key) is tuple else (key,)
    at = [i for i, k in enumerate(parts) if is_array_index(k)]
    if len(at) != 1 or any(k is not Ellipsis and k != _FULL for i, k in enumerate(parts) if i != at[0]):
        return None
    mask = parts[at[0]]
    if not (isinstance(mask, Array) and mask.dtype == np.bool_):
        return None
    if all(k is not Ellipsis for k in parts[:at[0]]):
        return at[0], mask
    after = sum(k is not Ellipsis for k in parts[at[0] + 1:])
    return array.ndim - after - mask.ndim, mask


def resolve(array, key):
    """The :class:`Selection` ``key`` (with at least one array index) makes
    of ``array``. IndexError as NumPy raises it for a bad key."""
    parts, covers = _expanded(array.ndim, key if type(key) is tuple else (key,))
    base = array
    if None in covers:
        base = _with_new_axes(array, parts, covers)
        parts = [_FULL if k is None else k for k in parts]
        covers = [1 if n is None else n for n in covers]
    # The basic key (each advanced entry's axes full), and where in `base`
    # each advanced entry's axes start.
    basic, advanced, starts, axis = [], [], [], 0
    for i, (k, n) in enumerate(zip(parts, covers)):
        if type(k) is slice:
            basic.append(k)
        else:
            basic.extend((_FULL,) * n)
            advanced.append(i)
            starts.append(axis)
        axis += n
    region = base[tuple(basic)] if any(k != _FULL for k in basic) else base
    count = sum(covers[i] for i in advanced)
    if advanced[-1] - advanced[0] == len(advanced) - 1:
        first = starts[0]
    else:  # not next to each other: NumPy puts the indexed axes in front
        front = [a for i, start in zip(advanced, starts) for a in range(start, start + covers[i])]
        region = region.transpose(front + [a for a in range(region.ndim) if a not in front])
        first = 0
    indices, at = [], first
    for i, start in zip(advanced, starts):
        indices.append(_index(parts[i], region.shape, at, covers[i], start))
        at += covers[i]
    if len(advanced) == 1 and _is_mask(parts[advanced[0]]):  # checked by `_index`
        return Selection(region, first, count, indices[0][0], parts[advanced[0]])
    if len(advanced) == 1:
        return Selection(region, first, 1, indices[0][0], None)  # checked by `take`/`scatter`
    return Selection(region, first, count, _combined(region, indices), None)


def _expanded(ndim, parts):
    """The key's entries checked (lists as NumPy arrays, lazy masks
    computed) with ``...`` spelled out as full slices, and the axes each
    covers (None for ``None``'s new axis)."""
    entries, covers, ellipsis = [], [], None
    for k in parts:
        kind = type(k)
        if kind is slice or _is_int(k):
            n = 1
        elif k is None:
            n = None
        elif k is Ellipsis:
            if ellipsis is not None:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ellipsis = len(entries)
            continue
        elif is_array_index(k):
            if kind is list:
                k = np.asarray(k)
            n = k.ndim if k.dtype == np.bool_ else 1
            if n != 1 and isinstance(k, Array):
                k = k.numpy()  # a mask's values decide the shape: computed
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                f"integer or boolean arrays are valid indices, not {kind.__name__}")
        entries.append(k)
        covers.append(n)
    named = sum(n for n in covers if n is not None)
    if named > ndim:
        raise IndexError(f"too many indices: {named} for an array of dimension {ndim}")
    at = len(entries) if ellipsis is None else ellipsis
    entries[at:at] = [_FULL] * (ndim - named)
    covers[at:at] = [1] * (ndim - named)
    return entries, covers


def _with_new_axes(array, parts, covers):
    """``array`` with a length-1 axis where each ``None`` of ``parts``
    stands (a view)."""
    shape, axis = [], 0
    for k, n in zip(parts, covers):
        if k is None:
            shape.append(1)
            continue
        shape.extend(array.shape[axis:axis + n])
        axis += n
    return array.reshape(tuple(shape))


def _index(k, shape, at, count, axis):
    """Entry ``k`` (covering ``count`` axes of ``shape`` from ``at``; the
    first is ``axis`` of the array) as ``(index into those axes as one,
    their size, axis)``: an int a 0-d index, a mask its true positions."""
    size = _product(shape[at:at + count])
    if _is_int(k):
        return np.asarray(operator.index(k), dtype=np.intp), size, axis
    if _is_mask(k):
        check_mask(shape, at, k)
        return np.flatnonzero(k), size, axis
    if isinstance(k, Array):
        if not np.issubdtype(k.dtype, np.integer):
            raise IndexError(f"arrays used as indices must be of integer or boolean type, not {k.dtype}")
        return k, size, axis
    index = k
    if index.size == 0:
        return index.astype(np.intp), size, axis  # `x[[]]`: no indices
    if not np.issubdtype(index.dtype, np.integer):
        raise IndexError(f"arrays used as indices must be of integer or boolean type, not {index.dtype}")
    return index, size, axis


def _combined(region, indices):
    """One index into the axes the ``(index, size, axis)`` entries cover,
    taken as one axis: NumPy's when all are known (checked), else lazy
    (the lazy ones wrapped into their axes)."""
    shapes = [index.shape for index, _, _ in indices]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with "
                         "shapes " + " ".join(str(s) for s in shapes)) from None
    known = [_in_bounds(index, size, axis) if not isinstance(index, Array) else index
             for index, size, axis in indices]
    if all(not isinstance(index, Array) for index in known):
        flat = known[0]
        for index, (_, size, _) in zip(known[1:], indices[1:]):
            flat = flat * size  # a new array: safe to add into below
            if flat.shape == np.broadcast_shapes(flat.shape, index.shape):
                np.add(flat, index, out=flat)
            else:
                flat = flat + index
        return flat
    flat = None
    for index, (_, size, _) in zip(known, indices):
        if isinstance(index, Array):
            if size == 0 and index.size:
                raise IndexError("cannot do a non-empty take from an empty axes.")
            index = index.astype(np.int64) % size  # wraps, as `take` does
        else:
            index = region._like(index.astype(np.int64))
        flat = index if flat is None else flat * size + index
    return flat


def _in_bounds(index, size, axis):
    """Known ``index`` checked against an axis of ``size`` (NumPy's
    IndexError), negative ones counted from the end."""
    index = index.astype(np.intp, copy=False)
    if index.size == 0:
        return index
    low, high = index.min(), index.max()  # cheaper than a mask of the bad ones
    if 0 <= low and high < size:
        return index
    if low < -size or high >= size:
        bad = index[(index < -size) | (index >= size)]
        raise IndexError(f"index {bad.flat[0]} is out of bounds for axis {axis} with size {size}")
    return np.where(index < 0, index + size, index)


def _is_mask(k):
    """Whether entry ``k`` (lists made NumPy arrays) is a boolean array."""
    return isinstance(k, (np.ndarray, Array)) and k.dtype == np.bool_


def _is_int(k):
    return type(k) is int or (not isinstance(k, (bool, np.bool_)) and isinstance(k, np.integer))


def check_mask(shape, axis, mask):
    """NumPy's ``IndexError`` unless ``mask`` has the shape of the axes of
    ``shape`` it covers from ``axis``."""
    covered = tuple(shape[axis:axis + mask.ndim])
    # NumPy lets a mask's axis of length 0 cover an axis of any length.
    fits = len(covered) == mask.ndim and all(m in (n, 0) for m, n in zip(mask.shape, covered))
    if not fits:
        raise IndexError(
            f"boolean index did not match indexed array along axis {axis}; the index has "
            f"shape {mask.shape}, the axes it covers {covered}")


def _product(dims):
    n = 1
    for d in dims:
        n *= d
    return n
