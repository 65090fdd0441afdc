"""``numba.cuda.libdevice``: lazyfuse's (``lazyfuse.cuda.libdevice``)."""

import sys

import lazyfuse.cuda

sys.modules[__name__] = lazyfuse.cuda.libdevice
