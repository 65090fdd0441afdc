"""``numba.cuda.simulator.vector_types``: CUDA's vector types, not
lazyfuse's."""

from .._absent import Absent

vector_types = Absent("CUDA vector types")
