"""``numba.cuda.typing.typeof``: Numba's type of a value (not lazyfuse's)."""

from lazyfuse._numba import typeof  # noqa: F401
