"""Basic indexing (``x[1:3, ::2]``, ``x[0]``, ``x[..., None]``) and the
views it makes, which share their array's value as NumPy's share its
memory: a view reads its array's current value (it sees later writes to
the array), and a write to the view (``v[:] = 1``, ``v += 1``, ``out=v``,
a kernel writing ``v``) writes the array (``assign_region``: one small
kernel, lazily). ``x[key] = value`` writes ``x`` the same way.

Rearranging views (:class:`Rearranged`: ``transpose``, ``.T``,
``swapaxes``; :class:`Reshaped`: ``x[None]``, ``squeeze``, and
``reshape``/``ravel`` where NumPy's would be a view) share their array's value the same way: a write
to one is rearranged back and becomes the array's whole new value.
Where NumPy's ``reshape`` copies (an array whose elements are not one
contiguous block in order, and the new shape does more than add or drop
length-1 axes), and for ``flatten``, the result is a value of its own."""

import numpy as np

from . import _fancy
from ._array import Array
from ._registry import OPERATIONS, register
from .errors import ShapeError


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
    """``array[key]``: a :class:`View` for ints and slices; a new array for
    an integer or boolean array index (`_fancy`)."""
    shape = _new_axes_only(array, key)
    if shape is not None:
        return reshaped(array, shape)
    basic = array._a.basic_index(key)  # Python ints and slices: one native call
    if basic is not None:
        view, region, drop = basic
        return View(array, region, drop, view)
    if _fancy.is_advanced(key):
        return _fancy.get(array, key)
    shape = array.shape
    key, region, drop, new_axes = _resolve(shape, key)
    if new_axes:
        return _with_new_axes(array, key)
    return View(array, region, drop, _select(array._a, shape, region, drop))


def _new_axes_only(array, key):
    """The shape of ``array[key]`` when ``key`` only adds length-1 axes
    (``x[:, None]``, ``x[None]``, ``x[..., None, :]``: ``None``, at most one
    ``...`` and whole-axis ``:``), else ``None``. Such a key is a reshape,
    so it takes the short way (k-means' ``p[:, None, :]``). Any other key
    is told apart in one look at its items, before the shape is read."""
    if type(key) is not tuple:
        return None if key is not None else [1] + array._a.shape
    added_axes, whole, ellipsis = False, 0, 0
    for k in key:  # `None in key` would compare arrays with ==
        if k is None:
            added_axes = True
        elif k is Ellipsis:
            ellipsis += 1
        elif type(k) is slice and k.start is None and k.stop is None and k.step is None:
            whole += 1
        else:
            return None
    shape = array._a.shape
    if not added_axes or ellipsis > 1 or whole > len(shape):
        return None
    added, rest = [], iter(shape)
    for k in key:
        if k is None:
            added.append(1)
        elif k is Ellipsis:
            added.extend(next(rest) for _ in range(len(shape) - whole))
        else:
            added.append(next(rest))
    added.extend(rest)
    return added


def _with_new_axes(array, key):
    """``x[..., None, i]``: the key without its ``None``s, then a length-1
    axis where each ``None`` stood (a view of the view)."""
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
    if _fancy.is_advanced(key):
        _fancy.put(array, key, value)
        return
    _, region, drop, _ = _resolve(array.shape, key)  # new axes select nothing more
    if not isinstance(value, Array):
        value = array._like(value)
    target = tuple(length for axis, (_, _, length) in enumerate(region) if axis not in drop)
    shape = value.shape
    while len(shape) > len(target) and shape[0] == 1:
        shape = shape[1:]  # NumPy drops leading length-1 axes of the value
    if len(shape) > len(target) or any(v not in (1, t) for v, t in zip(shape[::-1], target[::-1])):
        raise ShapeError(f"could not broadcast a value of shape {value.shape} into the indexed "
                         f"shape {target} of an array of shape {array.shape}")
    # The value's axes lined up with the region's: ones where ints dropped
    # an axis and in front; the native side broadcasts the rest.
    aligned = list((1,) * (len(target) - len(shape)) + shape)
    for axis in drop:
        aligned.insert(axis, 1)
    native = value._a if tuple(aligned) == value.shape else value._a.reshape(aligned)
    array._rebind(array._a.with_region(region, native))


class _Shared(Array):
    """An array whose value is derived from another array's current value
    (recomputed when that array was written) and whose writes go back to
    that array."""

    __slots__ = ("_base", "_seen", "_native")

    def _share(self, base):
        self._base, self._seen = base, base._a.value_id()
        self._native = self._derive(base._a)

    @property
    def _a(self):
        base = self._base._a
        seen = base.value_id()
        if seen != self._seen:
            self._native, self._seen = self._derive(base), seen
        return self._native

    def copy(self, order="C"):
        return Array(self._a.copy())  # a value of its own, not a view


class View(_Shared):
    """A view by basic indexing: its array's value's region; writing it
    writes that region of the array."""

    __slots__ = ("_region", "_drop")

    def __init__(self, base, region, drop, native):
        self._region, self._drop = region, drop
        self._base, self._seen, self._native = base, base._a.value_id(), native

    def _derive(self, base):
        return _select(base, base.shape, self._region, self._drop)

    def _rebind(self, native):
        aligned = list(native.shape)
        for axis in self._drop:
            aligned.insert(axis, 1)
        self._base._rebind(self._base._a.with_region(self._region, native.reshape(aligned)))

    @property
    def strides(self):
        """NumPy's strides of the view: its array's, times each step (the
        axes of ints dropped)."""
        base = self._base.strides
        return tuple(base[a] * step for a, (_, step, _) in enumerate(self._region)
                     if a not in self._drop)

    @property
    def _contiguous(self):
        """Whether the region is one block of the array's elements in order
        (NumPy's C-contiguity, up to the block's start)."""
        shape = self._base.shape
        partial = [a for a, (_, _, n) in enumerate(self._region) if n != shape[a]]
        if not partial or not _contiguous(self._base):
            return _contiguous(self._base)
        last = partial[-1]
        return (self._region[last][1] == 1 or self._region[last][2] <= 1) and all(
            self._region[a][2] <= 1 for a in range(last))


class Rearranged(_Shared):
    """A view that rearranges its array's elements (a transpose or a
    reshape): ``forward`` maps the array's native value to the view's,
    ``backward`` a value of the view's shape back to the array's."""

    __slots__ = ("_forward", "_backward", "_in_order", "_axes")

    def __init__(self, base, forward, backward, in_order, axes=None):
        self._forward, self._backward, self._in_order = forward, backward, in_order
        self._axes = axes  # a transpose's permutation: the strides follow it
        self._share(base)

    @property
    def strides(self):
        if self._axes is None:
            return super().strides
        base = self._base.strides
        return tuple(base[a] for a in self._axes)

    def _derive(self, base):
        return self._forward(base)

    def _rebind(self, native):
        self._base._rebind(self._backward(native))

    @property
    def _contiguous(self):
        return self._in_order and _contiguous(self._base)


def _contiguous(array):
    """Whether NumPy's ``array`` would be C-contiguous: its elements one
    block, in order."""
    return getattr(array, "_contiguous", True)


def transposed(array, axes):
    """``array.transpose(axes)`` (``axes`` a full permutation, or None for
    the reverse): always a view, as in NumPy."""
    axes = list(range(array.ndim))[::-1] if axes is None else list(axes)
    inverse = [0] * len(axes)
    for i, a in enumerate(axes):
        inverse[a] = i
    in_order = [a for a in axes if array.shape[a] != 1] == sorted(
        a for a in axes if array.shape[a] != 1)
    return Rearranged(array, lambda n: n.transpose(axes), lambda v: v.transpose(inverse), in_order,
                      axes)


def reshaped(array, shape):
    """``array.reshape(shape)`` (sizes resolved): a view where NumPy's is
    one (the elements in order, or only length-1 axes added or dropped),
    else a value of its own."""
    shape, old = list(shape), array._a.shape
    if type(array) is not Array and not _contiguous(array) and (
            [d for d in shape if d != 1] != [d for d in old if d != 1]):
        return Array(array._a.reshape(shape))  # NumPy copies: a value of its own
    return Reshaped(array, shape, old)


class Reshaped(_Shared):
    """A view of its array's elements, in order, in another shape: writing
    it writes them."""

    __slots__ = ("_shape", "_old")

    def __init__(self, base, shape, old):
        self._shape, self._old = shape, old
        self._share(base)

    def _derive(self, base):
        return base.reshape(self._shape)

    def _rebind(self, native):
        self._base._rebind(native.reshape(self._old))

    @property
    def _contiguous(self):
        return _contiguous(self._base)


# What `Array`'s indexing, `reshape`, `transpose` and `.T` call.
register(OPERATIONS, transposed, reshaped, index=get, assign_index=put)
