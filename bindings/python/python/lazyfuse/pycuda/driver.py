"""PyCUDA's driver interface over lazyfuse: ``In``/``Out``/``InOut``,
``mem_alloc`` with ``memcpy_htod``/``memcpy_dtoh``, ``Device`` and
``Context``. Device memory is a lazyfuse array on the current context."""

import numpy as np

from .._kernel_args import In, InOut, Out  # noqa: F401  (PyCUDA's names)
from ..errors import ArgumentError


def init(flags=0):
    """PyCUDA's ``cuda.init()``: nothing to do."""


class Device:
    """A device: the current lazyfuse context's."""

    def __init__(self, number=0):
        self.number = number

    @staticmethod
    def count():
        return 1

    def name(self):
        from .._contexts import current_context
        return f"lazyfuse {current_context().backend}"

    def compute_capability(self):
        return (9, 0)

    def total_memory(self):
        import os
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")

    def make_context(self, flags=0):
        return Context(self)


class Context:
    """PyCUDA's context: lazyfuse's current one."""

    def __init__(self, device=None):
        self.device = device or Device(0)

    def push(self):
        pass

    def pop(self):
        pass

    def detach(self):
        pass

    @staticmethod
    def synchronize():
        from .. import cuda
        cuda.synchronize()

    @staticmethod
    def get_device():
        return Device(0)


class DeviceAllocation:
    """Memory from ``mem_alloc``: ``nbytes`` held as a lazyfuse array, of the
    dtype last copied in (bytes, all zero, before)."""

    def __init__(self, nbytes):
        from .._creation import zeros
        self.nbytes = int(nbytes)
        self.array = zeros(self.nbytes, dtype=np.uint8)
        self._fresh = True

    def __int__(self):
        return id(self)

    def free(self):
        self.array = None

    def typed(self, dtype, what):
        """The memory as an array of ``dtype`` (the kernel's pointer type)."""
        from .._creation import zeros
        dtype = np.dtype(dtype)
        if self.array is None:
            raise ArgumentError(f"{what}: the allocation was freed")
        if self._fresh:
            return zeros(self.nbytes // dtype.itemsize, dtype=dtype)
        have = np.dtype(self.array.dtype)
        if have == dtype:
            return self.array
        if have.itemsize == dtype.itemsize:
            return self.array.view(dtype)
        raise ArgumentError(f"{what}: the memory holds {have.name} (copied in by memcpy_htod), "
                            f"the kernel reads {dtype.name}")


def mem_alloc(nbytes):
    """``nbytes`` of device memory."""
    return DeviceAllocation(nbytes)


def mem_alloc_like(ary):
    return DeviceAllocation(np.asarray(ary).nbytes)


def memcpy_htod(dest, src, stream=None):
    """Copies the NumPy array ``src`` into ``dest`` (a ``mem_alloc``)."""
    from .._creation import asarray
    src = np.ascontiguousarray(src)
    if src.nbytes > dest.nbytes:
        raise ArgumentError(f"memcpy_htod: {src.nbytes} bytes into an allocation of {dest.nbytes}")
    dest.array, dest._fresh = asarray(src.reshape(-1)), False


memcpy_htod_async = memcpy_htod


def memcpy_dtoh(dest, src, stream=None):
    """Copies ``src`` (a ``mem_alloc``) into the NumPy array ``dest``."""
    if src.array is None:
        raise ArgumentError("memcpy_dtoh: the allocation was freed")
    value = np.asarray(src.array)
    flat = dest.reshape(-1).view(np.uint8)
    data = value.reshape(-1).view(np.uint8)[:flat.size]
    flat[:data.size] = data


memcpy_dtoh_async = memcpy_dtoh


def to_device(ary):
    """A ``mem_alloc`` holding a copy of ``ary``."""
    allocation = mem_alloc_like(ary)
    memcpy_htod(allocation, ary)
    return allocation


def from_device(allocation, shape, dtype, order="C"):
    out = np.empty(shape, dtype)
    memcpy_dtoh(out, allocation)
    return out


def _launch_args(args):
    """Arguments for ``_raw_kernels.launch``: allocations as their typed
    arrays (a placeholder here: typed at the launch by ``_Typed``)."""
    out, allocations = [], []
    for a in args:
        if isinstance(a, DeviceAllocation):
            typed = _Typed(a)
            allocations.append(typed)
            out.append(typed)
        else:
            out.append(a)
    return out, allocations


class _Typed:
    """An allocation passed to a kernel: typed by the pointer parameter it
    meets (``_raw_kernels.launch`` calls ``as_array``)."""

    def __init__(self, allocation):
        self.allocation, self.array = allocation, None

    def as_array(self, dtype, what):
        self.array = self.allocation.typed(dtype, what)
        self.before = self.array._a
        return self.array


def _written_back(typed):
    """Allocations the kernel wrote take the new values."""
    for t in typed:
        if t.array is not None and t.array._a is not t.before:
            t.allocation.array, t.allocation._fresh = t.array, False
