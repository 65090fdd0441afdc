"""Numba's streams and events over lazyfuse: ``cuda.stream()``,
``synchronize()``, ``event()``. Re-exported by ``lazyfuse.cuda``."""

import contextlib
import time
import weakref
from ._contexts import current_context
from .errors import ArgumentError


class Stream:
    """Numba's ``cuda.stream()``: an ordered queue of asynchronous work.
    ``s.eval(*arrays)`` queues their demand and returns a pending outcome
    (``.wait()``); ``to_device(a, stream=s)`` queues a copy;
    ``s.synchronize()`` waits for everything queued."""

    def __init__(self, native):
        self._s = native

    def eval(self, *arrays):
        return self._s.eval([a._a for a in arrays])

    def synchronize(self):
        self._s.synchronize()

    @contextlib.contextmanager
    def auto_synchronize(self):
        """``with stream.auto_synchronize():`` synchronizes on leaving."""
        try:
            yield self
        finally:
            self.synchronize()

#: The streams ``stream()`` made that are still in use: what
#: ``synchronize()`` waits for.
_STREAMS = weakref.WeakSet()

def stream():
    """A new stream on the current context."""
    made = Stream(current_context()._cx.stream())
    _STREAMS.add(made)
    return made

def default_stream():
    """Numba's default stream: work queued on it runs in order with the
    current context's other work (lazyfuse orders work by its data)."""
    return stream()

legacy_default_stream = per_thread_default_stream = default_stream

def external_stream(ptr):
    """Numba's stream made from a CUDA stream handle: lazyfuse queues its
    work on its own streams, so a handle from elsewhere is refused."""
    raise ArgumentError(
        f"external_stream: lazyfuse cannot queue work on a CUDA stream it did not make "
        f"(got the handle {ptr!r}; expected cuda.stream())")

def synchronize():
    """Numba's ``cuda.synchronize()``: waits for the work queued on every
    stream in use. (Work is queued only by ``stream.eval`` and
    ``to_device(..., stream=s)``; a lazy array nobody demanded has none.)"""
    for queued in list(_STREAMS):
        queued.synchronize()

class Event:
    """Numba's ``cuda.event()``, for timing: ``record(stream)`` waits for
    the work ``stream`` has queued (or for every stream, as
    ``synchronize()``), then notes the host's clock; ``elapsed_time`` is
    the time between two records, in milliseconds. Lazy work not demanded
    in between is not in it."""

    def __init__(self, timing=True):
        self.timing = timing
        self._recorded = None

    def record(self, stream=0):
        if isinstance(stream, Stream):
            stream.synchronize()
        else:
            synchronize()
        self._recorded = time.perf_counter()

    def synchronize(self):
        """Waits for the recorded work (done when recorded)."""

    def wait(self, stream=0):
        """Makes ``stream`` wait for the event (it is complete when recorded)."""

    def query(self):
        """Whether the event has been recorded."""
        return self._recorded is not None

    def elapsed_time(self, evtend):
        """Milliseconds from this event to ``evtend``."""
        return event_elapsed_time(self, evtend)

def event(timing=True):
    """A new ``Event``."""
    return Event(timing)

def event_elapsed_time(evtstart, evtend):
    """Milliseconds between two recorded events, as Numba's."""
    if not (evtstart.timing and evtend.timing):
        raise ArgumentError("event_elapsed_time: events made with timing=False have no time")
    if evtstart._recorded is None or evtend._recorded is None:
        raise ArgumentError("event_elapsed_time: both events must be recorded first")
    return (evtend._recorded - evtstart._recorded) * 1e3
