"""``numba.cuda.compiler``: Numba's PTX compiler, which lazyfuse does not have."""

from ._absent import Absent

compile_ptx = compile_ptx_for_current_device = compile = Absent("PTX compiler")
