"""``numba.cuda.core.config``: the same module as ``numba.cuda.config``."""

import sys

from .. import config

sys.modules[__name__] = config
