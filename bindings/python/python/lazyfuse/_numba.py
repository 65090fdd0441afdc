"""Numba's vocabulary over lazyfuse: type objects and ``@vectorize``.

``@vectorize(["float32(float32, float32)"], target="cuda")`` traces the
function once into a lazy, fused ufunc (``lazyfuse._trace``). Calls return
lazy arrays (``np.asarray`` computes them); NumPy inputs are copied into the
target's context; ``out=`` re-binds a lazyfuse array or fills a NumPy one.
``target="cuda"`` uses a GPU when there is one and otherwise the default
context, so the tutorials run anywhere.
"""

import numpy as np

from . import _native, _trace


class _Type:
    """A dtype as Numba names it; calling it makes a signature:
    ``float32(float32, float32)``."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __call__(self, *args):
        return f"{self.name}({', '.join(a.name for a in args)})"

    def __repr__(self):
        return self.name


float16, float32, float64 = _Type("float16"), _Type("float32"), _Type("float64")
int8, int16, int32, int64 = _Type("int8"), _Type("int16"), _Type("int32"), _Type("int64")
uint8, uint16, uint32, uint64 = _Type("uint8"), _Type("uint16"), _Type("uint32"), _Type("uint64")
bool_ = _Type("bool")

_TARGETS = ("cpu", "parallel", "cuda", "sim", "reference")


def _context_for(target):
    from . import Context, current_context
    if target == "cuda":
        try:
            return Context("cuda")
        except RuntimeError:
            return current_context()
    if target in ("cpu", "parallel"):
        return current_context() if current_context().backend == "cpu" else Context("cpu")
    if target in ("sim", "reference"):
        return Context(target)
    raise ValueError(f"vectorize: unknown target {target!r} (expected one of {', '.join(_TARGETS)})")


class Vectorized:
    """A ufunc made by ``@vectorize``: call it on arrays (lazy)."""

    def __init__(self, function, signatures, target):
        self.__name__ = function.__name__
        self.__doc__ = function.__doc__
        expr, names = _trace.expression(function, f"vectorize '{function.__name__}'")
        self.expression = expr
        self._target = target
        self._context = None
        self._ufunc = _native.Ufunc(function.__name__, expr, names, [str(s) for s in signatures])

    def _cx(self):
        if self._context is None:
            self._context = _context_for(self._target)
        return self._context

    def __call__(self, *args, out=None):
        from . import Array, asarray
        arrays = [a if isinstance(a, Array) else asarray(a, context=self._cx()) for a in args]
        if out is None:
            return Array(self._ufunc.call([a._a for a in arrays]))
        if isinstance(out, Array):
            self._ufunc.call_into([a._a for a in arrays], out._a)
            return out
        np.copyto(out, self._ufunc.call([a._a for a in arrays]).numpy())
        return out


def vectorize(signatures=None, target="cpu", **options):
    """Numba's ``@vectorize``: with signatures (``"float32(float32)"`` or
    ``float32(float32)``), or none (typed by NumPy's promotion at each
    call); ``target`` is ``"cpu"``, ``"parallel"``, ``"cuda"`` or ``"sim"``."""
    if callable(signatures) and not isinstance(signatures, (_Type, str)):
        return Vectorized(signatures, [], target)
    if isinstance(signatures, str):
        signatures = [signatures]
    signatures = list(signatures or [])
    if target not in _TARGETS:
        raise ValueError(f"vectorize: unknown target {target!r} (expected one of {', '.join(_TARGETS)})")
    return lambda function: Vectorized(function, signatures, target)
