"""``numba.cuda.random``: ``lazyfuse.cuda.random``'s names."""

from lazyfuse.cuda.random import *  # noqa: F401,F403
