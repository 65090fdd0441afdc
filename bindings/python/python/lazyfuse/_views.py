"""Basic indexing (``x[1:3, ::2]``, ``x[0]``, ``x[..., None]``) and the
views it makes, which share their array's value as NumPy's share its
memory: a view reads its array's current value (it sees later writes to
the array), and a write to the view (``v[:] = 1``, ``v += 1``, ``out=v``,
a kernel writing ``v``) writes the array (``assign_region``: one small
kernel, lazily). ``x[key] = value`` writes ``x`` the same way.

Views made otherwise (``reshape``, ``transpose``, ``x[None]``) are values
of their own, as lazyfuse's arrays are."""

import numpy as np

from ._array import Array


def _resolve(shape, key):
    """What basic index ``key`` selects of an array of ``shape``: the key
    with ``...`` expanded; per axis the ``(start, step, len)`` it selects;
    the axes ints drop; and whether it has ``None``. IndexError for what
    is not a basic index. (One pass each: indexing is on the hot path.)"""
    if type(key) is not tuple:
        key = (key,)
    ndim, named, ellipsis, new_axes = len(shape), 0, None, False
    for i, k in enumerate(key):
        kind = type(k)
        if kind is slice or kind is int or (kind is not bool and isinstance(k, np.integer)):
            named += 1
        elif k is None:
            new_axes = True
        elif k is Ellipsis:
            if ellipsis is not None:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ellipsis = i
        elif isinstance(k, (bool, np.bool_)):
            raise IndexError("lazyfuse arrays take basic indices (ints, slices, ..., None), not booleans")
        else:
            raise IndexError(
                f"lazyfuse arrays take basic indices (ints, slices, ..., None), not {kind.__name__}"
            )
    if named > ndim:
        raise IndexError(f"too many indices: {named} for an array of dimension {ndim}")
    if ellipsis is not None:
        key = key[:ellipsis] + (slice(None),) * (ndim - named) + key[ellipsis + 1:]
    region, drop, axis = [], [], 0
    for k in key:
        if k is None:
            continue
        n = shape[axis]
        if type(k) is slice:
            start, stop, step = k.indices(n)
            region.append((start, step, len(range(start, stop, step))))
        else:
            i = int(k)
            if i < 0:
                i += n
            if not 0 <= i < n:
                raise IndexError(f"index {int(k)} is out of bounds for axis {axis} with size {n}")
            region.append((i, 1, 1))
            drop.append(axis)
        axis += 1
    region.extend((0, 1, shape[a]) for a in range(axis, ndim))
    return key, region, drop, new_axes


def _select(native, shape, region, drop):
    """The native view of ``region`` of an array of ``shape`` (ints' axes
    dropped)."""
    a = native
    for axis, (start, step, length) in enumerate(region):
        if step != 1 or start != 0 or length != shape[axis]:
            stop = start + step * length
            a = a.slice_axis(axis, start, stop if stop >= 0 else None, step)
    if drop:
        a = a.reshape([length for axis, (_, _, length) in enumerate(region) if axis not in drop])
    return a


def get(array, key):
    """``array[key]``: a :class:`View` for ints and slices."""
    shape = array.shape
    key, region, drop, new_axes = _resolve(shape, key)
    if new_axes:
        return _with_new_axes(array, key)
    return View(array, region, drop, _select(array._a, shape, region, drop))


def _with_new_axes(array, key):
    """``x[..., None, i]``: the key without its ``None``s, then a length-1
    axis where each ``None`` stood (a value of its own)."""
    value = get(array, tuple(k for k in key if k is not None))
    shape, axis = [], 0
    for k in key:
        if k is None:
            shape.append(1)
        elif type(k) is slice:
            shape.append(value.shape[axis])
            axis += 1
    return value.reshape(tuple(shape) + value.shape[axis:])


def put(array, key, value):
    """``array[key] = value``: ``value`` broadcast to ``array[key]``'s shape
    and cast to its dtype (NumPy's unsafe casting, as assignment does)."""
    _, region, drop, _ = _resolve(array.shape, key)  # new axes select nothing more
    if not isinstance(value, Array):
        value = array._like(value)
    target = tuple(length for axis, (_, _, length) in enumerate(region) if axis not in drop)
    shape = value.shape
    while len(shape) > len(target) and shape[0] == 1:
        shape = shape[1:]  # NumPy drops leading length-1 axes of the value
    if len(shape) > len(target) or any(v not in (1, t) for v, t in zip(shape[::-1], target[::-1])):
        from .errors import ShapeError
        raise ShapeError(f"could not broadcast a value of shape {value.shape} into the indexed "
                         f"shape {target} of an array of shape {array.shape}")
    # The value's axes lined up with the region's: ones where ints dropped
    # an axis and in front; the native side broadcasts the rest.
    aligned = list((1,) * (len(target) - len(shape)) + shape)
    for axis in drop:
        aligned.insert(axis, 1)
    native = value._a if tuple(aligned) == value.shape else value._a.reshape(aligned)
    array._rebind(array._a.with_region(region, native))


class View(Array):
    """A view by basic indexing: its value is its array's current value's
    region (recomputed when the array was written), and writing it writes
    the array."""

    __slots__ = ("_base", "_region", "_drop", "_seen", "_native")

    def __init__(self, base, region, drop, native):
        self._base, self._region, self._drop = base, region, drop
        self._seen, self._native = base._a.value_id(), native

    @property
    def _a(self):
        base = self._base._a
        seen = base.value_id()
        if seen != self._seen:
            self._native = _select(base, base.shape, self._region, self._drop)
            self._seen = seen
        return self._native

    def _rebind(self, native):
        aligned = list(native.shape)
        for axis in self._drop:
            aligned.insert(axis, 1)
        self._base._rebind(self._base._a.with_region(self._region, native.reshape(aligned)))

    def copy(self, order="C"):
        return Array(self._a.copy())  # a value of its own, not a view
