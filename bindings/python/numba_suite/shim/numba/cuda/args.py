"""``numba.cuda.args``: the argument wrappers ``In``, ``Out``, ``InOut``
and ``wrap_arg``."""

from lazyfuse.cuda import In, InOut, Out, wrap_arg  # noqa: F401
