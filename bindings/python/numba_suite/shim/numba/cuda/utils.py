"""``numba.cuda.utils.PYVERSION``."""

import sys

PYVERSION = sys.version_info[:2]
