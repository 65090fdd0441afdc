"""``lazyfuse.fft``: NumPy's ``np.fft`` on lazy arrays (and through
``__array_function__``, ``np.fft.fft(x)`` of a lazyfuse array stays lazy).

Each transform is one launch per transformed axis: on the CPU, rustfft's
planned transforms with rows spread over the worker threads; on ``sim``
and ``cuda`` a direct transform (O(n²): for checking and small sizes until
CUDA calls cuFFT). The work before a transform fuses into the kernel that
writes its input, and ``norm``'s scaling into whatever reads its output.
Dtypes are NumPy 2's: ``float32`` and ``complex64`` transform in single
precision, everything else in double.

    >>> import numpy as np, lazyfuse as lf
    >>> x = lf.asarray(np.array([1.0, 2.0, 3.0, 4.0]))
    >>> np.asarray(lf.fft.fft(x))
    array([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
"""

import numpy as np

from . import _arrangements, _native
from ._array import Array, where
from ._complex import ComplexArray, _wrap
from ._creation import arange, asarray
from ._registry import FFT_FUNCTIONS, register
from .errors import DTypeError

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _lazy(a):
    if isinstance(a, (Array, ComplexArray)):
        return a
    return asarray(a)


def _parts(a, what, real=False):
    """``a``'s parts for the native transforms: ``(re, im)``, ``im`` None
    for a real array. ``real``: the transform takes real input only."""
    a = _lazy(a)
    if isinstance(a, ComplexArray):
        if real:
            raise DTypeError(f"{what}: complex input (expected real values, as NumPy's)")
        return a._re, a._im
    return a._a, None


def _norm(norm):
    return "backward" if norm is None else norm


def _finish(result, out):
    result = _wrap(result)
    if out is None:
        return result
    out[...] = np.asarray(result)
    return out


def _one_axis(kind, real_input=False):
    def transform(a, n=None, axis=-1, norm=None, out=None):
        re, im = _parts(a, kind, real_input)
        return _finish(_native.fft1(kind, re, im, n, axis, _norm(norm)), out)

    transform.__name__ = transform.__qualname__ = kind
    transform.__doc__ = f"NumPy's ``np.fft.{kind}``, lazily."
    return transform


fft = _one_axis("fft")
ifft = _one_axis("ifft")
rfft = _one_axis("rfft", real_input=True)
irfft = _one_axis("irfft")
hfft = _one_axis("hfft")
ihfft = _one_axis("ihfft", real_input=True)


def _axes_form(kind, real_input=False, default_axes=None):
    def transform(a, s=None, axes=None, norm=None, out=None):
        re, im = _parts(a, kind, real_input)
        if axes is None and default_axes is not None:
            axes = default_axes
        s = None if s is None else [int(n) for n in s]
        axes = None if axes is None else [int(x) for x in axes]
        native = kind.rstrip("2") + ("n" if kind.endswith("2") else "")
        return _finish(_native.fftn(native, re, im, s, axes, _norm(norm)), out)

    transform.__name__ = transform.__qualname__ = kind
    transform.__doc__ = f"NumPy's ``np.fft.{kind}``, lazily."
    return transform


fftn = _axes_form("fftn")
ifftn = _axes_form("ifftn")
rfftn = _axes_form("rfftn", real_input=True)
irfftn = _axes_form("irfftn")
fft2 = _axes_form("fft2", default_axes=(-2, -1))
ifft2 = _axes_form("ifft2", default_axes=(-2, -1))
rfft2 = _axes_form("rfft2", real_input=True, default_axes=(-2, -1))
irfft2 = _axes_form("irfft2", default_axes=(-2, -1))


def fftfreq(n, d=1.0, device=None, *, dtype=None):
    """NumPy's ``fftfreq``: the frequencies of an ``n``-point transform
    with sample spacing ``d`` (0, 1, …, then the negative ones), lazily;
    ``dtype`` (the array API's) a real floating dtype, float64 by default."""
    k = arange(n, dtype=np.int64, device=device)
    return _as(where(k <= (n - 1) // 2, k, k - n) / (n * d), dtype)


def rfftfreq(n, d=1.0, device=None, *, dtype=None):
    """NumPy's ``rfftfreq``: the ``n // 2 + 1`` non-negative frequencies."""
    return _as(arange(n // 2 + 1, dtype=np.int64, device=device) / (n * d), dtype)


def _as(x, dtype):
    return x if dtype is None else x.astype(dtype)


def _shifted(x, axes, sign):
    x = _lazy(x)
    axes = tuple(range(x.ndim)) if axes is None else axes
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    shifts = [sign * (x.shape[a] // 2) for a in axes]
    if isinstance(x, ComplexArray):
        return x._views(lambda p: _arrangements.roll(p, shifts, axes))
    return _arrangements.roll(x, shifts, axes)


def fftshift(x, axes=None):
    """NumPy's ``fftshift``: the zero frequency moved to the middle."""
    return _shifted(x, axes, 1)


def ifftshift(x, axes=None):
    """NumPy's ``ifftshift``: the inverse of ``fftshift``."""
    return _shifted(x, axes, -1)


# NumPy's `np.fft.f(lazy)` comes here (`Array.__array_function__`).
register(FFT_FUNCTIONS, **{name: globals()[name] for name in __all__})
