"""``numba.cuda.launchconfig``: Numba's launch configuration context,
which lazyfuse does not have (see ``_absent.py``)."""

from ._absent import Absent

current_launch_config = ensure_current_launch_config = Absent("launchconfig")
