"""``numba.cuda.np.numpy_support``: dtype to Numba type and NumPy's version."""

import numpy as np

from lazyfuse.cuda import from_dtype  # noqa: F401
from lazyfuse._numba import as_dtype  # noqa: F401

numpy_version = tuple(int(p) for p in np.__version__.split(".")[:2])

from .._absent import Absent  # noqa: E402

#: Arrays over raw pointers: not lazyfuse's.
carray = farray = Absent("carray/farray (arrays over raw pointers)")
