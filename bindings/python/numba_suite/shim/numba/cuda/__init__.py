"""The test suite's ``numba.cuda``: ``lazyfuse.cuda``'s names.

Numba's CUDA simulator is what lazyfuse's ``cpu`` and ``sim`` backends are
to Numba's tests (no PTX, no driver), so ``config.ENABLE_CUDASIM`` is true
and the tests Numba marks ``skip_on_cudasim`` (its compiler's internals)
skip here as they do under Numba's own simulator.
"""

from lazyfuse.cuda import *  # noqa: F401,F403

from . import config, types  # noqa: F401

#: Whether the upstream ``numba`` package is installed: tests that compare
#: against it skip.
HAS_NUMBA = False

from .types import double  # noqa: E402,F401
from ._absent import Absent as _Absent  # noqa: E402

# Numba's PTX compiler: not lazyfuse's (its tests skip under the simulator).
compile_ptx = compile_ptx_for_current_device = compile = _Absent("PTX compiler")

# More of Numba's APIs that lazyfuse does not have: cache-hinted loads and
# stores, the launch configuration context (see _absent.py). libdevice and
# its table are lazyfuse's (`libdevice.py`, `libdevicefuncs.py` here).
ldca = ldcg = ldcs = ldlu = ldcv = stcg = stcs = stwb = stwt = _Absent("cache-hinted loads and stores")
from . import launchconfig, libdevice  # noqa: E402,F401
