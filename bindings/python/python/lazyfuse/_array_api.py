"""The Python array API standard's introspection (2024.12): devices
(``x.device``, ``x.to_device``: ``Device`` is in ``_contexts``), ``__array_namespace__`` and
``__array_namespace_info__()``. The namespace's functions themselves are
NumPy's names over lazy arrays (``lazyfuse._numpy``)."""

import sys

import numpy as np

from . import _native
from ._array import Array
from ._contexts import BACKENDS, Device, context_of, current_context
from ._creation import asarray
from ._registry import FUNCTIONS, OPERATIONS, register
from .errors import ArgumentError

API_VERSION = "2024.12"
VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")

# The standard's dtypes lazyfuse has (float16 and bfloat16 are beyond it).
_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float32", "float64", "complex64", "complex128")


def to_device(x, device, stream=None):
    """``x`` on ``device``: itself when it is there already, else its value
    copied into that device's context."""
    if stream is not None:
        raise ArgumentError("to_device: stream= is not supported (lazyfuse's streams are "
                            "lazyfuse.cuda.stream(); pass stream=None)")
    target = context_of(device)
    if target.backend == x._a.backend:
        return x
    return asarray(x.numpy(), context=target)


def namespace(api_version=None):
    """``x.__array_namespace__(api_version)``: the ``lazyfuse`` module."""
    if api_version is not None and api_version not in VERSIONS:
        raise ValueError(f"__array_namespace__: lazyfuse implements the array API "
                         f"{', '.join(VERSIONS)}, not {api_version!r}")
    # The package itself, always imported before its modules: named,
    # not imported (it is the layer above this one).
    return sys.modules[__package__]


class Info:
    """What ``lazyfuse.__array_namespace_info__()`` returns: the namespace's
    capabilities, devices and dtypes, as the array API standard asks."""

    def capabilities(self):
        """Boolean indexing and data-dependent shapes (``unique``,
        ``nonzero``: computed when asked) are supported; 32 dimensions."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 32}

    def default_device(self):
        """The current context's device."""
        return Device(current_context().backend)

    def devices(self):
        """The devices this machine has: ``cpu`` and ``sim`` always,
        ``cuda`` where a GPU is usable."""
        return [Device(b) for b in BACKENDS if b != "cuda" or cuda_usable()]

    def default_dtypes(self, *, device=None):
        """NumPy's defaults (float64, complex128, int64)."""
        return {"real floating": np.dtype(np.float64), "complex floating": np.dtype(np.complex128),
                "integral": np.dtype(np.int64), "indexing": np.dtype(np.int64)}

    def dtypes(self, *, device=None, kind=None):
        """lazyfuse's dtypes by name, all of them or those of ``kind`` (a
        kind name of ``isdtype``, or a tuple of them)."""
        every = {name: np.dtype(name) for name in _DTYPES}
        if kind is None:
            return every
        return {name: d for name, d in every.items() if np.isdtype(d, kind)}


def _dtype_of(dtype):
    """NumPy's dtype of a lazyfuse or NumPy dtype (``lf.float32``,
    ``np.float32``, ``"float32"``) or of an array's."""
    if not isinstance(dtype, (type, np.dtype, str)) and hasattr(dtype, "shape"):
        dtype = dtype.dtype  # an array's (NumPy's, lazyfuse's, a NumPy scalar's)
    return np.dtype(dtype)


def isdtype(dtype, kind):
    """The array API's ``isdtype``, over lazyfuse's dtype names too."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    kinds = tuple(k if isinstance(k, str) else _dtype_of(k) for k in kinds)
    return np.isdtype(_dtype_of(dtype), kinds if isinstance(kind, tuple) else kinds[0])


class FloatInfo:
    """``finfo``'s answer: NumPy's ``finfo`` with the array API's fields
    (``bits``, ``eps``, ``max``, ``min``, ``smallest_normal``) as Python
    numbers, and NumPy's others as NumPy has them."""

    def __init__(self, info):
        self._info = info
        self.bits, self.dtype = info.bits, info.dtype
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.smallest_normal = float(info.smallest_normal)

    def __getattr__(self, name):
        return getattr(self._info, name)

    def __repr__(self):
        return repr(self._info)


def finfo(type):
    """NumPy's ``finfo`` of a float dtype or array (see `FloatInfo`)."""
    return FloatInfo(np.finfo(_dtype_of(type)))


def from_dlpack(x, /, *, device=None, copy=None):
    """The array API's ``from_dlpack``: a lazyfuse array of ``x``'s value on
    ``device`` (a lazyfuse array moved with ``to_device``; anything else
    through NumPy's ``from_dlpack``, then copied into lazyfuse)."""
    if isinstance(x, Array):
        moved = x if device is None else x.to_device(device)
        return moved.copy() if copy else moved
    return asarray(np.from_dlpack(x, copy=copy), device=device)


def cuda_usable():
    """Whether a CUDA GPU can be used (``lazyfuse.cuda.is_available()``):
    here, below ``cuda``, so that this layer imports nothing above it."""
    try:
        _native.Context("cuda")
        return True
    except RuntimeError:
        return False


def namespace_info():
    """``lazyfuse.__array_namespace_info__()``."""
    return Info()


register(FUNCTIONS, from_dlpack)
register(OPERATIONS, to_device, array_namespace=namespace)  # `Array`'s methods
