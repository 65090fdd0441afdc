"""Dask arrays of lazyfuse chunks.

Importing this module (or naming the ``"lazyfuse"`` array backend, which
imports it through the ``dask.array.backends`` entry point) makes
``lazyfuse.Array`` a Dask chunk type:

    >>> import dask, dask.array as da, numpy as np
    >>> import lazyfuse.dask
    >>> with dask.config.set({"array.backend": "lazyfuse"}):
    ...     x = da.ones((1000, 100), chunks=(250, 100), dtype=np.float32)
    >>> isinstance(x._meta, lazyfuse.Array)
    True
    >>> float((np.exp(x * 0.0) * 2 + 1).sum().compute())
    300000.0

What Dask calls on a chunk (ufuncs, NumPy's functions through
``__array_function__``, reductions with ``keepdims``, slicing, ``astype``)
only builds lazyfuse graphs, so the operations Dask's blockwise
optimisation puts into one task run as one fused lazyfuse program per
chunk. Each task's result is computed when the task ends (`optimize`
wraps every task of an array graph in `computed`): a chunk that leaves
its task holds its value, not the graph of the data it came from, so
Dask's memory management and out-of-core runs work as with NumPy chunks.

Across processes (``dask.distributed``) a chunk travels as its value and
becomes an array of the receiving worker's default context
(``LAZYFUSE_BACKEND``). `LocalCluster` starts one worker per visible GPU
(its ``CUDA_VISIBLE_DEVICES`` set to that GPU, as dask-cuda does), or CPU
workers where there is none.
"""

import os
import shutil
import subprocess

import dask
import dask.array as da
import numpy as np
from dask.array import dispatch
from dask.array.backends import ArrayBackendEntrypoint, percentile
from dask.sizeof import sizeof

from . import _native
from ._array import Array
from ._complex import ComplexArray
from ._creation import asarray, empty

__all__ = [
    "LazyfuseBackendEntrypoint", "LocalCluster", "computed", "from_array", "optimize",
    "register", "to_lazyfuse_dispatch",
]

to_lazyfuse_dispatch = dispatch.Dispatch("to_lazyfuse_dispatch")
"""Moves a chunk to lazyfuse (``Array.to_backend("lazyfuse")``)."""

_registered = []


def register():
    """Makes ``lazyfuse.Array`` a Dask chunk type, with its dispatch
    functions, ``sizeof``, its serialisation for ``dask.distributed`` (when
    installed) and `optimize` as the array graph optimisation (unless the
    user set ``array_optimize`` already). Idempotent; importing this module
    calls it."""
    if _registered:
        return
    _registered.append(True)
    # Complex chunks are lazyfuse's complex arrays (two real planes).
    for chunk in (Array, ComplexArray):
        da.register_chunk_type(chunk)
        dispatch.concatenate_lookup.register(chunk, np.concatenate)
        dispatch.take_lookup.register(chunk, np.take)
        dispatch.tensordot_lookup.register(chunk, np.tensordot)
        dispatch.einsum_lookup.register(chunk, np.einsum)
        dispatch.empty_lookup.register(chunk, _empty)
        dispatch.percentile_lookup.register(chunk, percentile)
        dispatch.to_numpy_dispatch.register(chunk, lambda data, **kwargs: np.asarray(data))
        to_lazyfuse_dispatch.register(chunk, lambda data, **kwargs: data)
        sizeof.register(chunk, lambda x: int(x.nbytes))
    to_lazyfuse_dispatch.register(np.ndarray, lambda data, **kwargs: asarray(data))
    _register_serialisation()
    if dask.config.get("array_optimize", None) is None:
        dask.config.set(array_optimize=optimize)
    # Without the installed entry point too (a source checkout on the path).
    from dask.array.backends import array_creation_dispatch
    array_creation_dispatch.register_backend("lazyfuse", LazyfuseBackendEntrypoint())


def _empty(shape, dtype=float, **kwargs):
    return empty(shape, dtype=dtype)


def _register_serialisation():
    """Chunks cross processes as their values' NumPy frames (no pickle of
    the data), and are rebuilt in the receiving worker's default context."""
    try:
        from distributed.protocol import dask_deserialize, dask_serialize
        from distributed.protocol.serialize import serialize, deserialize
    except ImportError:
        return

    @dask_serialize.register((Array, ComplexArray))
    def _serialise(x):
        header, frames = serialize(np.asarray(x), serializers=("dask", "pickle"))
        return {"sub": header}, frames

    @dask_deserialize.register((Array, ComplexArray))
    def _deserialise(header, frames):
        return asarray(deserialize(header["sub"], frames))


# ---------------------------------------------------------------- tasks

def computed(value):
    """``value`` with the lazyfuse arrays in it computed and kept, also
    inside the tuples, lists and dicts Dask's reductions pass between tasks
    (a variance's ``{"total", "n", "M2"}``): all of them in one program, so
    work they share runs once. Anything else is returned as it is."""
    if isinstance(value, (Array, ComplexArray)):
        return value.eval()
    arrays = []
    pending = [value]
    while pending:  # iterative: nesting depth is the user's
        item = pending.pop()
        if isinstance(item, Array):
            arrays.append(item._a)
        elif isinstance(item, ComplexArray):
            arrays.extend(item._demanded())
        elif isinstance(item, (tuple, list)):
            pending.extend(item)
        elif isinstance(item, dict):
            pending.extend(item.values())
    if arrays:
        _native.eval_all(arrays)
    return value


def optimize(dsk, keys, **kwargs):
    """Dask's array optimisation, then every task's result computed when the
    task ends (`computed`): a task is one lazyfuse program, and what it
    hands on is a value, never a growing graph of earlier tasks' data."""
    from dask._task_spec import Task
    from dask.array.optimization import optimize as dask_optimize

    graph = dask_optimize(dsk, keys, **kwargs)
    return {
        key: Task(key, computed, node) if isinstance(node, Task) else node
        for key, node in dict(graph).items()
    }


# ---------------------------------------------------------------- backend

def from_array(x, chunks="auto", **kwargs):
    """``dask.array.from_array`` with lazyfuse chunks: each chunk is read
    from ``x`` and copied into lazyfuse by its task (complex chunks are
    ``lazyfuse.ComplexArray``)."""
    return da.from_array(x, chunks=chunks, asarray=False, meta=empty((0,) * np.ndim(x), np.dtype(x.dtype)),
                         **kwargs).map_blocks(asarray, dtype=x.dtype)


def _with_lazyfuse_meta(name, *args, meta=None, **kwargs):
    """Dask's NumPy-backed creation function ``name`` with a lazyfuse
    ``meta``: Dask then makes each chunk with NumPy's function dispatched
    to lazyfuse (``like=``)."""
    meta = empty(()) if meta is None else meta
    with dask.config.set({"array.backend": "numpy"}):
        return getattr(da, name)(*args, meta=meta, **kwargs)


class LazyfuseBackendEntrypoint(ArrayBackendEntrypoint):
    """The ``"lazyfuse"`` Dask array backend (``dask.config.set({"array.backend":
    "lazyfuse"})``): ``da.ones``, ``da.zeros``, ``da.empty``, ``da.full``,
    ``da.arange`` and ``da.random`` make lazyfuse chunks, and
    ``x.to_backend("lazyfuse")`` moves an array's chunks to lazyfuse."""

    def __init__(self):
        register()

    @classmethod
    def to_backend_dispatch(cls):
        return to_lazyfuse_dispatch

    @classmethod
    def to_backend(cls, data, **kwargs):
        if isinstance(data._meta, Array):
            return data
        return data.map_blocks(to_lazyfuse_dispatch, **kwargs)

    @property
    def RandomState(self):
        from . import random
        return random.RandomState

    @property
    def default_bit_generator(self):
        from . import random
        return random.Philox

    @staticmethod
    def ones(*args, **kwargs):
        return _with_lazyfuse_meta("ones", *args, **kwargs)

    @staticmethod
    def zeros(*args, **kwargs):
        return _with_lazyfuse_meta("zeros", *args, **kwargs)

    @staticmethod
    def empty(*args, **kwargs):
        return _with_lazyfuse_meta("empty", *args, **kwargs)

    @staticmethod
    def full(*args, **kwargs):
        return _with_lazyfuse_meta("full", *args, **kwargs)

    @staticmethod
    def arange(*args, like=None, **kwargs):
        like = empty(()) if like is None else like
        with dask.config.set({"array.backend": "numpy"}):
            return da.arange(*args, like=like, **kwargs)


# ---------------------------------------------------------------- clusters

def visible_gpus():
    """The GPUs this process may use, as ``CUDA_VISIBLE_DEVICES`` entries:
    that variable's list when set, else one per GPU ``nvidia-smi -L``
    lists (none without it)."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        return [d.strip() for d in listed.split(",") if d.strip() and d.strip() != "-1"]
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        lines = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True,
                               timeout=30, check=True).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return []
    return [str(i) for i, line in enumerate(l for l in lines if l.startswith("GPU "))]


def LocalCluster(n_workers=None, backend=None, threads_per_worker=None, lazyfuse_threads=None,
                 **kwargs):
    """A ``distributed`` cluster on this machine with lazyfuse workers, as
    dask-cuda's ``LocalCUDACluster``: one worker process per visible GPU,
    each seeing only its own (``CUDA_VISIBLE_DEVICES``) with the ``cuda``
    backend; without a GPU (or with ``backend="cpu"``/``"sim"``),
    ``n_workers`` worker processes (default 1) of that backend. Every
    worker makes its chunks in its own default context, runs
    ``threads_per_worker`` tasks at once (default 1: lazyfuse spreads each
    task over the worker's cores) and ``lazyfuse_threads`` threads for
    lazyfuse's work (``LAZYFUSE_THREADS``; default an equal share of the
    machine's cores). Other keywords go
    to ``distributed.SpecCluster`` (e.g. ``dashboard_address=None``)."""
    from distributed import Nanny, Scheduler, SpecCluster

    gpus = visible_gpus() if backend in (None, "cuda") else []
    if backend == "cuda" and not gpus:
        raise RuntimeError("lazyfuse.dask.LocalCluster: backend='cuda' but no GPU is visible")
    if gpus:
        envs = [{"CUDA_VISIBLE_DEVICES": gpu, "LAZYFUSE_BACKEND": "cuda"} for gpu in gpus]
    else:
        envs = [{"LAZYFUSE_BACKEND": backend or "cpu"} for _ in range(n_workers or 1)]
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    cores = lazyfuse_threads or max(usable // len(envs), 1)
    for env in envs:
        env.setdefault("LAZYFUSE_THREADS", str(cores))
    threads = threads_per_worker or 1
    workers = {
        i: {"cls": Nanny, "options": {"nthreads": threads, "env": env,
                                       "preload": ["lazyfuse.dask"]}}
        for i, env in enumerate(envs)
    }
    scheduler = {"cls": Scheduler, "options": {"dashboard_address": kwargs.pop("dashboard_address", ":0")}}
    return SpecCluster(workers=workers, scheduler=scheduler, **kwargs)


register()
