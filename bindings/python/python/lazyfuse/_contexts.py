"""Where arrays live and compute: ``Context`` (a backend), the current one
(``use``: ``with lazyfuse.use("sim"): …``), and the array API's
``Device``, naming a backend, with the context arrays for it go to."""

import contextlib
import os
import threading

from . import _native
from .errors import ArgumentError

BACKENDS = ("cpu", "sim", "cuda")


class Context:
    """A backend: ``"cpu"``, ``"sim"`` (a simulated GPU), ``"cuda"``,
    ``"reference"``, ``"auto"`` (CUDA if usable, else the CPU) or
    ``"default"`` (what ``LAZYFUSE_BACKEND`` names, else ``"auto"``).

    ``device_memory_limit`` caps the device memory demands use (on
    ``"sim"``, the simulated device's size); ``pipeline_threshold`` is how
    many bytes a demand moves before it runs as a pipeline of chunks
    (default 64 MiB). A demand too large for the device runs in chunks when
    it can (``explain()`` shows the pipeline)."""

    __slots__ = ("_cx",)

    def __init__(self, backend="default", *, device_memory_limit=None, pipeline_threshold=None):
        if backend == "default":
            backend = os.environ.get("LAZYFUSE_BACKEND", "default") or "default"
            if backend == "default" and (device_memory_limit, pipeline_threshold) != (None, None):
                backend = "auto"
        self._cx = _native.Context(backend, device_memory_limit, pipeline_threshold)

    @property
    def backend(self):
        """The backend's name."""
        return self._cx.backend

    def stats(self):
        """What ran and moved: a dict of counters."""
        return self._cx.stats()

    def release_memory(self):
        """Frees the memory kept for reuse once arrays died — the device's
        pool on ``cuda`` and, on every backend, the few large host buffers
        kept for the next results of their size (as CuPy's
        ``free_all_blocks``); returns the bytes freed."""
        return self._cx.release_memory()

    def __enter__(self):
        _stack().append(self)
        return self

    def __exit__(self, *exc):
        _stack().pop()
        return False

    def __repr__(self):
        return f"lazyfuse.Context({self.backend!r})"


_local = threading.local()
_default = []


def _stack():
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


def current_context():
    """The context new arrays go to: the innermost ``with lazyfuse.use(…)``,
    else the default one."""
    stack = _stack()
    if stack:
        return stack[-1]
    if not _default:
        _default.append(Context("default"))
    return _default[0]


@contextlib.contextmanager
def use(backend):
    """``with lazyfuse.use("sim"): ...``: arrays made inside go to that backend."""
    context = backend if isinstance(backend, Context) else Context(backend)
    with context:
        yield context


class Device:
    """A lazyfuse device, the array API's device object: the backend that
    holds an array and computes it (``"cpu"``, ``"sim"``, ``"cuda"``).
    Devices are equal when their backends are."""

    __slots__ = ("backend",)

    def __init__(self, backend):
        if backend not in BACKENDS:
            raise ArgumentError(f"Device: no backend {backend!r} (expected one of {', '.join(BACKENDS)})")
        self.backend = backend

    def __eq__(self, other):
        return isinstance(other, Device) and other.backend == self.backend

    def __hash__(self):
        return hash(("lazyfuse.Device", self.backend))

    def __repr__(self):
        return f"lazyfuse.Device({self.backend!r})"


_contexts = {}


def context_of(device):
    """The context arrays for ``device`` go to: the current one when its
    backend is the device's, else one context per backend, made once.
    ``device`` may be a `Device`, a ``Context``, a backend name or None
    (the current context)."""
    if device is None:
        return current_context()
    if isinstance(device, Context):
        return device
    backend = device.backend if isinstance(device, Device) else Device(device).backend
    current = current_context()
    if current.backend == backend:
        return current
    if backend not in _contexts:
        _contexts[backend] = Context(backend)
    return _contexts[backend]


def stats(context=None):
    """What the context ran and moved (kernel launches, copies, bytes)."""
    return (context or current_context()).stats()


def cuda_source(*arrays):
    """The CUDA C lazyfuse would run to compute ``arrays``."""
    return _native.cuda_source([a._a for a in arrays])
