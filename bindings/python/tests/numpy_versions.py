"""NumPy's functions as the tests compare lazyfuse with them, on every
NumPy 2.x: what NumPy 2.5 removed after deprecating it in 2.0 (and lazyfuse
keeps, with 2.0's warning) is computed the way NumPy 2.4 computes it."""

import numpy as np


def _cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """NumPy 2.4's ``cross``, 2-element vectors included."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = np.moveaxis(np.asarray(a), axisa, -1), np.moveaxis(np.asarray(b), axisb, -1)
    if a.shape[-1] == 3 and b.shape[-1] == 3:
        return np.cross(a, b, axisc=axisc)

    def three(v):  # a 2-element vector's z is 0
        return np.concatenate([v, np.zeros(v.shape[:-1] + (3 - v.shape[-1],), v.dtype)], -1)
    c = np.cross(three(a), three(b))
    return c[..., 2] if a.shape[-1] == 2 and b.shape[-1] == 2 else np.moveaxis(c, -1, axisc)


_REMOVED_IN_2_5 = {"row_stack": np.vstack, "cross": _cross}


def numpy_function(name):
    """``np.<name>``, or NumPy 2.4's for what NumPy 2.5 no longer offers."""
    if name in _REMOVED_IN_2_5 and np.lib.NumpyVersion(np.__version__) >= "2.5.0":
        return _REMOVED_IN_2_5[name]
    return getattr(np, name)
