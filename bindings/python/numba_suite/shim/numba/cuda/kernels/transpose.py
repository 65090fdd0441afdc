"""``numba.cuda.kernels.transpose``: not lazyfuse's (``a.T`` is)."""

from .._absent import Absent

transpose = Absent("numba.cuda.kernels.transpose")
