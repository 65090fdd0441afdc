"""``numba.cuda.typing.typeof``: Numba's type of a value (not lazyfuse's)."""

from .._absent import Absent

typeof = Absent("typeof")
