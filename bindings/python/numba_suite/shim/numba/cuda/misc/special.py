"""``numba.cuda.misc.special``: ``literal_unroll`` (not in lazyfuse's kernels)."""

from .._absent import Absent

literal_unroll = Absent("literal_unroll")
