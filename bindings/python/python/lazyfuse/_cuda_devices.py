"""Numba's device queries (``cuda.gpus``, ``get_current_device()``,
``current_context()``, ``list_devices()``): programs and tests read them
at import time. With a GPU they describe it as lazyfuse's ``cuda`` backend
sees it; without one, the device is the current lazyfuse context, which
runs ``target="cuda"`` code, and reports what Numba's simulator reports
(compute capability 5.2, unbounded memory)."""

import collections

from . import _array_api
from .errors import ArgumentError

#: What Numba's simulator reports as the compute capability of its device.
_STAND_IN_CAPABILITY = (5, 2)

MemoryInfo = collections.namedtuple("MemoryInfo", "free,total")


class Device:
    """A device: ``id``, ``name``, ``compute_capability``, ``uuid``."""

    def __init__(self, device_id):
        self.id = device_id
        self.uuid = "GPU-00000000-0000-0000-0000-000000000000"

    @property
    def name(self):
        if _array_api.cuda_usable():
            return b"lazyfuse cuda"
        return b"lazyfuse (no GPU: the current context runs CUDA code)"

    @property
    def compute_capability(self):
        return _STAND_IN_CAPABILITY

    def reset(self):
        """Numba's ``device.reset()``: lazyfuse frees memory as arrays die."""

    def __repr__(self):
        return f"<lazyfuse device {self.id}: {self.name.decode()}>"


class DeviceContext:
    """Numba's ``cuda.current_context()`` and ``cuda.gpus[i]``: the device,
    its memory, and ``with cuda.gpus[0]:``."""

    def __init__(self, device_id):
        self.id = device_id
        self.device = Device(device_id)

    @property
    def compute_capability(self):
        return self.device.compute_capability

    def get_memory_info(self):
        """Free and total bytes (unbounded where the device is host memory)."""
        return MemoryInfo(float("inf"), float("inf"))

    def reset(self):
        """Numba's ``context.reset()``."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __repr__(self):
        return f"<Managed Device {self.id}>"


class DeviceList:
    """``cuda.gpus``: the one device lazyfuse runs CUDA code on."""

    def __init__(self):
        self._devices = (DeviceContext(0),)

    def __getitem__(self, index):
        return self._devices[index]

    def __iter__(self):
        return iter(self._devices)

    def __len__(self):
        return len(self._devices)

    @property
    def current(self):
        return self._devices[0]


gpus = DeviceList()


def get_current_device():
    """The device ``target="cuda"`` code runs on."""
    return gpus.current.device


def current_context(devnum=None):
    """The device's context (memory information, ``synchronize``)."""
    return gpus[devnum or 0]


def get_context(devnum=None):
    """The same as ``current_context``."""
    return current_context(devnum)


def list_devices():
    """The devices, as ``cuda.gpus``."""
    return list(gpus)


def select_device(device_id):
    """Numba's ``cuda.select_device``: device 0 is the only one."""
    if device_id != 0:
        raise ArgumentError(f"select_device: device {device_id} does not exist (expected 0)")
    return gpus[0]


def close():
    """Numba's ``cuda.close()``: nothing to release until arrays die."""


def runtime_version():
    """The CUDA runtime's version as Numba's ``cuda.runtime.get_version()``."""
    return (12, 0) if _array_api.cuda_usable() else (0, 0)
