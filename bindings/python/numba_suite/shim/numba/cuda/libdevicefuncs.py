"""``numba.cuda.libdevicefuncs``: lazyfuse's libdevice table
(``lazyfuse.cuda.libdevicefuncs``)."""

import sys

import lazyfuse.cuda

sys.modules[__name__] = lazyfuse.cuda.libdevicefuncs
