"""Numba's ``numba.cuda.devicearray`` module over lazyfuse, importable as
``lazyfuse.cuda.devicearray``: its device array class is lazyfuse's
``Array`` (``DeviceNDArray``), and ``auto_device`` copies what a launch or
a program hands it to the device, refusing buffers that are not one
contiguous region as Numba does."""

import numpy as np

from . import _native
from ._array import Array
from ._creation import asarray, empty
from ._record_args import RecordDeviceArray, record_device_array, stays_numpy
from ._streams import Stream

#: Numba's device array classes: lazyfuse's arrays (structured arrays stay
#: NumPy's, see ``_record_args.RecordDeviceArray``).
DeviceNDArray = DeviceNDArrayBase = Array
DeviceRecord = RecordDeviceArray

#: Numba's message for a host array that is not one memory region.
errmsg_contiguous_buffer = (
    "Array contains non-contiguous buffer and cannot be transferred as a single memory region. "
    "Please ensure contiguous buffer with numpy .ascontiguousarray()"
)


def is_cuda_ndarray(obj):
    """Whether ``obj`` is a device array (lazyfuse's, or another library's
    through ``__cuda_array_interface__``)."""
    return isinstance(obj, (Array, RecordDeviceArray)) or hasattr(obj, "__cuda_array_interface__")


def require_cuda_ndarray(obj):
    """Raises ``ValueError`` unless ``obj`` is a device array."""
    if not is_cuda_ndarray(obj):
        raise ValueError("require an cuda ndarray object")


def is_contiguous(ary):
    """Whether a NumPy array is one contiguous region (C or Fortran order)."""
    return ary.flags["C_CONTIGUOUS"] or ary.flags["F_CONTIGUOUS"]


def sentry_contiguous(ary):
    """Raises ``ValueError`` (Numba's message) when a host array is not one
    contiguous region: Numba copies a buffer to the device as it is laid
    out, so a strided view would need a gather first."""
    core = ary
    # A broadcast (zero-stride) axis is one element repeated: as Numba's
    # `array_core`, only the axes that step count.
    if ary.ndim and 0 in ary.strides:
        core = ary[tuple(0 if s == 0 else slice(None) for s in ary.strides)]
    if not is_contiguous(core):
        raise ValueError(errmsg_contiguous_buffer)


def from_array_like(ary, stream=0):
    """An uninitialised (zeroed) device array of ``ary``'s shape and dtype."""
    if stays_numpy(ary.dtype):
        return record_device_array(ary.shape, ary.dtype)
    return empty(ary.shape, ary.dtype)


def to_device(obj, stream=0, copy=True, to=None):
    """Numba's ``cuda.to_device``: copies a NumPy array to the device (now,
    or queued on ``stream``). An array made by ``pinned_array`` is uploaded
    straight from its pinned memory, with no staging copy; later writes of
    it do not reach the device copy. With ``to=`` (a device array of the
    same shape and dtype) that array takes the value and is returned.
    ``copy`` is accepted as Numba's is (the device copy is always made)."""
    if stays_numpy(getattr(obj, "dtype", None)) and to is None:
        # Records and strings stay NumPy's (`_record_args.RecordDeviceArray`).
        return np.array(obj).view(RecordDeviceArray)
    if to is not None:
        if not isinstance(to, Array):
            raise TypeError(f"to_device: to= must be a device array, not {type(to).__name__}")
        to.copy_to_device(obj, stream=stream)
        return to
    if not isinstance(stream, Stream) and isinstance(getattr(obj, "base", None), _native.PinnedMemory):
        return Array(obj.base.upload(list(obj.shape)))
    a = asarray(obj)
    if isinstance(stream, Stream):
        return Array(stream._s.to_device(a._a))
    return a.eval()._to_device()


def auto_device(obj, stream=0, copy=True, user_explicit=False):
    """Numba's ``auto_device``: ``(device array, converted)``. A device
    array is returned as it is (``converted`` False); anything else
    (a NumPy array, a number, a sequence) is made a NumPy array, checked
    to be one contiguous region (``ValueError`` otherwise), and copied to
    the device (``copy=False``: a zeroed device array of its shape)."""
    if is_cuda_ndarray(obj):
        return (obj if isinstance(obj, (Array, RecordDeviceArray)) else asarray(obj)), False
    ary = np.asarray(obj)
    sentry_contiguous(ary)
    if not copy:
        return from_array_like(ary, stream=stream), True
    return to_device(ary, stream=stream), True
