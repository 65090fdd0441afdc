"""``numba.cuda.simulator.vector_types``: CUDA's vector types by name
(lazyfuse's ``cuda.vector_types``)."""

from lazyfuse.cuda import vector_types  # noqa: F401
