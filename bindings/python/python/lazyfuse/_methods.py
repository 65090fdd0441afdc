"""The rest of NumPy's ``ndarray`` methods and properties on lazy arrays
(``Array`` inherits them): compositions of the lazy operations, in-place
ones by re-binding the array (a view writes the array it views), and the
layout facts of a C-contiguous array. Those whose answer is the data
itself (``tobytes``, ``tofile``, ``byteswap``) compute it."""

import operator

import numpy as np

from ._registry import FUNCTIONS
from .errors import ArgumentError, ShapeError


def _function(name):
    """NumPy's function ``name`` as lazyfuse has it (`_registry.FUNCTIONS`:
    this base of ``Array`` imports none of the modules above it)."""
    return FUNCTIONS[name]


class NdarrayMethods:
    """NumPy's ``ndarray`` API beyond what ``Array`` defines itself."""

    __slots__ = ()

    # --- layout (a lazy array's elements are in C order) ----------------
    @property
    def itemsize(self):
        return 2 if self.dtype == "bfloat16" else self.dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self.itemsize

    @property
    def strides(self):
        strides, step = [], self.itemsize
        for n in reversed(self.shape):
            strides.append(step)
            step *= n
        return tuple(reversed(strides))

    @property
    def flags(self):
        """NumPy's flags as they follow from the shape and ``strides``
        (``a.flags["C_CONTIGUOUS"]``, ``a.flags.f_contiguous``); a lazyfuse
        array is written through its methods, so it is ``WRITEABLE``."""
        return Flags(self.shape, self.strides, self.itemsize)

    @property
    def base(self):
        return None

    @property
    def mT(self):
        if self.ndim < 2:
            raise ShapeError(f"matrix transpose with ndim < 2 is undefined (shape {self.shape})")
        return self.swapaxes(-1, -2)

    @property
    def flat(self):
        return FlatIter(self)

    # --- a real array's complex parts ---------------------------------
    @property
    def real(self):
        return self

    @property
    def imag(self):
        return FUNCTIONS["zeros_like"](self)

    def conj(self):
        return self.astype(self.dtype)

    conjugate = conj

    # --- NumPy's functions as methods ----------------------------------
    def dot(self, b, out=None):
        return _function("dot")(self, b, out=out)

    def repeat(self, repeats, axis=None):
        return _function("repeat")(self, repeats, axis)

    def nonzero(self):
        return _function("nonzero")(self)

    def compress(self, condition, axis=None, out=None):
        return _function("compress")(condition, self, axis, out)

    def choose(self, choices, out=None, mode="raise"):
        return _function("choose")(self, choices, out, mode)

    def argpartition(self, kth, axis=-1, kind="introselect", order=None):
        return _function("argpartition")(self, kth, axis, kind, order)

    def partition(self, kth, axis=-1, kind="introselect", order=None):
        """In place, as NumPy's method."""
        self._rebind(_function("partition")(self, kth, axis, kind, order)._a)

    def fill(self, value):
        """Every element set to ``value``, in place."""
        self._rebind(FUNCTIONS["full_like"](self, value)._a)

    def item(self, *args):
        """One element as a Python scalar: the only one, the one at a flat
        index, or at one index per axis."""
        if not args:
            return self._a.item()
        if len(args) == 1 and isinstance(args[0], tuple):
            args = args[0]
        if len(args) == 1:
            flat = operator.index(args[0])
            if not -self.size <= flat < self.size:
                raise IndexError(f"index {flat} is out of bounds for size {self.size}")
            return self.reshape(-1)[flat]._a.item()
        if len(args) != self.ndim:
            raise ArgumentError(f"item: {len(args)} indices for an array of {self.ndim} "
                                "dimensions (expected one, or one per axis)")
        return self[tuple(args)]._a.item()

    # --- the data itself ------------------------------------------------
    def tobytes(self, order="C"):
        return self.numpy().tobytes(order)

    def tofile(self, fid, sep="", format="%s"):
        self.numpy().tofile(fid, sep, format)

    def byteswap(self, inplace=False):
        swapped = self._like(self.numpy().byteswap())
        if inplace:
            self._rebind(swapped._a)
            return self
        return swapped

    # --- Python's protocols --------------------------------------------
    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __contains__(self, value):
        return bool((self == value).any())

    def __format__(self, spec):
        """A 0-d array formats as its value (computed: ``f"{x.sum():.3f}"``),
        as NumPy's; other arrays take only the empty format."""
        if self.ndim == 0:
            return format(self.item(), spec)
        if spec:
            raise TypeError(f"unsupported format string {spec!r} passed to a lazyfuse array of "
                            f"shape {self.shape} (only a 0-d array formats as a number)")
        return str(self)

    def copy_to_device(self, ary, stream=0):
        """Numba's ``copy_to_device`` (and ``cuda.to_device(ary, to=self)``):
        this device array takes the values of ``ary`` (a NumPy or device
        array of its shape and dtype)."""
        value = ary if isinstance(ary, NdarrayMethods) else self._like(np.asarray(ary))
        if value.dtype != self.dtype or value.shape != self.shape:
            raise ShapeError(
                f"to_device: to= is {self.dtype}{list(self.shape)}, the array "
                f"{value.dtype}{list(value.shape)} (expected the same shape and dtype)")
        self._rebind(value._a)

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def __complex__(self):
        return complex(self.item())


def _contiguous(shape, strides, itemsize, fortran):
    """NumPy's contiguity: each axis longer than 1 steps by the product of
    the lengths inside it (an array without elements is both)."""
    if 0 in shape:
        return True
    expected = itemsize
    for a in (range(len(shape)) if fortran else reversed(range(len(shape)))):
        if shape[a] != 1:
            if strides[a] != expected:
                return False
            expected *= shape[a]
    return True


class Flags:
    """An array's flags, read by key (``"C_CONTIGUOUS"``) or attribute."""

    def __init__(self, shape, strides, itemsize):
        self.c_contiguous = _contiguous(shape, strides, itemsize, fortran=False)
        self.f_contiguous = _contiguous(shape, strides, itemsize, fortran=True)
        self.contiguous = self.c_contiguous
        self.fortran = self.f_contiguous and not self.c_contiguous
        self.writeable, self.aligned, self.owndata = True, True, False

    _KEYS = {"C_CONTIGUOUS": "c_contiguous", "C": "c_contiguous", "CONTIGUOUS": "contiguous",
             "F_CONTIGUOUS": "f_contiguous", "F": "f_contiguous", "FORTRAN": "fortran",
             "WRITEABLE": "writeable", "W": "writeable", "ALIGNED": "aligned", "A": "aligned",
             "OWNDATA": "owndata", "O": "owndata"}

    def __getitem__(self, key):
        return getattr(self, self._KEYS[key])

    def __repr__(self):
        return "\n".join(f"  {k} : {self[k]}" for k in ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA",
                                                           "WRITEABLE", "ALIGNED"))


def like_layout(array, make):
    """An array of ``array``'s shape laid out as NumPy's ``*_like`` (order
    ``"K"``) lays it out: ``make(shape)`` (a new C-ordered array) of the
    axes sorted by ``array``'s strides, largest first, transposed back."""
    strides = getattr(array, "strides", None)
    shape = tuple(array.shape)
    if strides is None or len(shape) < 2:
        return make(shape)
    order = sorted(range(len(shape)), key=lambda a: -abs(strides[a]))
    if order == list(range(len(shape))):
        return make(shape)
    inverse = [0] * len(order)
    for i, a in enumerate(order):
        inverse[a] = i
    return make(tuple(shape[a] for a in order)).transpose(inverse)


class FlatIter:
    """``a.flat``: the elements in C order, read and written by flat index
    (``a.flat[3]``, ``a.flat[::2] = 0``), or iterated."""

    __slots__ = ("base",)

    def __init__(self, base):
        self.base = base

    def __len__(self):
        return self.base.size

    def __iter__(self):
        return iter(self.base.reshape(-1))

    def __getitem__(self, key):
        return self.base.reshape(-1)[key]

    def __setitem__(self, key, value):
        flat = self.base.reshape(-1)
        flat[key] = value  # a view: writes the base

    def copy(self):
        return self.base.reshape(-1).copy()

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.base.numpy().reshape(-1), dtype=dtype)
