"""PyCUDA's ``gpuarray``: lazyfuse arrays (``.get()`` gives NumPy's)."""

import numpy as np


def to_gpu(ary, allocator=None):
    from .._creation import asarray
    return asarray(np.asarray(ary))


def empty(shape, dtype, allocator=None, order="C"):
    from .._creation import zeros
    return zeros(shape, dtype=dtype)


zeros = empty


def empty_like(other):
    from .._creation import zeros
    return zeros(other.shape, dtype=other.dtype)


zeros_like = empty_like
