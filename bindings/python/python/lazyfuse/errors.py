"""lazyfuse's exceptions. Every error lazyfuse raises for its own checks is
a ``LazyfuseError``; each kind is also the built-in exception NumPy would
raise for it, so ``except ValueError`` keeps working:

- ``ShapeError`` (``ValueError``): shapes that do not broadcast or fit;
- ``ArgumentError`` (``ValueError``): a bad argument (an axis, a size);
- ``AxisError`` (``ArgumentError``, ``IndexError``): an axis out of range,
  as NumPy's ``AxisError``;
- ``DTypeError`` (``TypeError``): dtypes an operation cannot take;
- ``CompileError`` (``RuntimeError``): code that could not be compiled, or
  Python outside the subset lazyfuse translates (the message names the
  line and the construct);
- ``BackendError`` (``RuntimeError``): a backend that cannot be used;
- ``DeviceError`` (``RuntimeError``): the device failed (out of memory…);
- ``InternalError`` (``RuntimeError``): a bug in lazyfuse (please report).

The message is lazyfuse's: it names the operation, the shapes or dtypes,
and what was expected.
"""

__all__ = [
    "LazyfuseError", "ShapeError", "ArgumentError", "AxisError", "DTypeError", "CompileError",
    "BackendError", "DeviceError", "InternalError",
]


class LazyfuseError(Exception):
    """The base of every lazyfuse error."""


class ShapeError(LazyfuseError, ValueError):
    """Shapes that do not broadcast, or do not fit where they go."""


class ArgumentError(LazyfuseError, ValueError):
    """An argument lazyfuse cannot take (an axis, a size, a setting)."""


class AxisError(ArgumentError, IndexError):
    """An axis out of range (NumPy's ``AxisError`` is also both)."""


class DTypeError(LazyfuseError, TypeError):
    """A dtype an operation cannot take."""


class CompileError(LazyfuseError, RuntimeError):
    """Code that could not be compiled: a kernel, or Python outside the
    subset lazyfuse translates."""


class BackendError(LazyfuseError, RuntimeError):
    """A backend that cannot be used here."""


class DeviceError(LazyfuseError, RuntimeError):
    """The device failed: out of memory, a failed launch or copy."""


class InternalError(LazyfuseError, RuntimeError):
    """A bug in lazyfuse (please report it with the message)."""
