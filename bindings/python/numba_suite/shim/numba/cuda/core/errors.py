"""Numba's error classes, named for lazyfuse's: a kernel that cannot be
compiled raises ``lazyfuse.errors.CompileError`` (Numba's ``TypingError``)."""

from lazyfuse.errors import CompileError as TypingError  # noqa: F401
from lazyfuse.errors import CompileError as LoweringError  # noqa: F401
from lazyfuse.errors import CompileError as NumbaError  # noqa: F401
from lazyfuse.errors import CompileError as NumbaTypeError  # noqa: F401

from .._absent import AbsentError as UnsupportedError  # noqa: F401


class NumbaWarning(Warning):
    """Numba's warning category (lazyfuse gives none of the subclasses)."""


NumbaPerformanceWarning = NumbaDebugInfoWarning = NumbaInvalidConfigWarning = NumbaWarning
NumbaDeprecationWarning = NumbaPendingDeprecationWarning = NumbaWarning
