"""NumPy's ufuncs called on lazy arrays (``Array.__array_ufunc__``'s
``__call__``): lazyfuse's own operations where it has them, compositions
of them for the rest it computes lazily (``fabs``, ``signbit``, ``fmax``,
``modf``…), and NumPy on computed values for the few it lacks."""

import numpy as np

from . import _array, _native

# NumPy ufunc name -> lazyfuse operation name, where they differ.
_UFUNC_NAMES = {
    "true_divide": "divide", "absolute": "abs", "degrees": "rad2deg",
    "radians": "deg2rad",
}

_BINARY = {
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder",
    "mod", "power", "maximum", "minimum", "less", "less_equal", "greater", "greater_equal",
    "equal", "not_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and",
    "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "arctan2", "hypot",
    "copysign", "fmod", "logaddexp", "logaddexp2", "heaviside", "nextafter", "gcd", "lcm",
}

def _positive(x):
    if x.dtype == np.bool_:
        raise TypeError("ufunc 'positive' did not contain a loop for bool (NumPy refuses it too)")
    return _array.Array(x._a.astype(x._a.dtype_name))


def _float_loop(ufunc, x):
    """`x` in the float dtype NumPy's `ufunc` computes it in (integers and
    bool: the smallest float holding them)."""
    if x.dtype == "bfloat16" or x.dtype.kind == "f":
        return x
    return _array.Array(x._a.astype(ufunc.resolve_dtypes((x.dtype, None))[0].name))


def _fabs(x):
    return _array.Array(_float_loop(np.fabs, x)._a.unary("abs"))


def _signbit(x):
    if x.dtype == np.bool_:
        return x < False
    if x.dtype != "bfloat16" and x.dtype.kind in "iu":
        return x < 0
    return _array.Array(x._a.binary("copysign", 1.0, True)) < 0  # the sign of NaN and -0.0 too


def _conjugate(x):
    """A real array's conjugate: itself (lazyfuse has no complex dtype)."""
    return _array.Array(x._a.astype(x._a.dtype_name))


def _spacing(x):
    """``spacing``: as NumPy's, the smallest subnormal at ±0 and NaN at
    ±inf; elsewhere, for floats, the signed distance to the next float away
    from zero; for float16, the positive distance to the next one up from
    a positive value and toward zero from a negative one (NumPy's
    ``npy_half_spacing``)."""
    x = _float_loop(np.spacing, x)
    if x.dtype == np.float16:
        magnitude = np.absolute(x)
        below = magnitude - np.nextafter(magnitude, 0)
        steps = _array.where(np.signbit(x), below, np.nextafter(x, np.inf) - x)
        steps = _array.where(np.isinf(x), np.nan, steps)
    else:
        steps = np.nextafter(x, np.copysign(np.inf, x)) - x
    tiny = 2.0 ** -133 if x.dtype == "bfloat16" else np.finfo(x.dtype).smallest_subnormal
    return _array.where(x == 0, float(tiny), steps)


# Masks of the bit counting below, for 64-bit words.
_M1, _M2, _M4, _H01 = 0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F, 0x0101010101010101


def _bitwise_count(x):
    """``bitwise_count``: the 1 bits of ``|x|`` as uint8 (NumPy's
    ``bitwise_count``), counted in parallel in a 64-bit word (fused: no
    popcount operation needed)."""
    if x.dtype == "bfloat16" or x.dtype.kind == "f":
        raise TypeError(f"ufunc 'bitwise_count' not supported for the input type {x.dtype} "
                        "(expected integers or bool)")
    if x.dtype.kind == "i":
        # |MIN| wraps to MIN, whose bits as the unsigned type are 2^(w-1): one.
        x = np.absolute(x).astype(f"u{x.dtype.itemsize}")
    w = x.astype(np.uint64)
    w = w - ((w >> 1) & _M1)
    w = (w & _M2) + ((w >> 2) & _M2)
    w = (w + (w >> 4)) & _M4
    return ((w * _H01) >> 56).astype(np.uint8)


_UNARY_SPECIAL = {"positive": _positive, "fabs": _fabs, "signbit": _signbit,
                  "conjugate": _conjugate, "spacing": _spacing, "bitwise_count": _bitwise_count}


def _computed(ufunc, inputs):
    """``ufunc`` applied by NumPy to the inputs' computed values."""
    values = [x.numpy() if isinstance(x, _array.Array) else x for x in inputs]
    with np.errstate(all="ignore"):
        return ufunc(*values)


def _modf(x):
    """``modf``: the fractional and the integral part, each with ``x``'s
    sign (``(±0, ±inf)`` for an infinity), in NumPy's float type for
    ``x``'s dtype; lazily."""
    if x.dtype.kind not in "fc":
        x = x.astype(np.result_type(x.dtype, np.float16))
    whole = np.trunc(x)
    return np.copysign(_array.where(np.isinf(x), 0, x - whole), x), whole


def _fmax_fmin(name, a, b):
    """``fmax``/``fmin``: as ``maximum``/``minimum``, but a NaN loses to a
    number (NaN only where both are)."""
    first = a if isinstance(a, _array.Array) else b
    a, b = (x if isinstance(x, (_array.Array, bool, int, float)) else first._like(x) for x in (a, b))
    extreme = np.maximum(a, b) if name == "fmax" else np.minimum(a, b)
    a_nan, b_nan = (np.isnan(x) if isinstance(x, _array.Array) else first._like(x != x) for x in (a, b))
    return _array.where(b_nan, _array.where(a_nan, extreme, a), _array.where(a_nan, b, extreme))


def options(ufunc):
    """The keyword arguments besides ``out`` that ``call`` takes for
    ``ufunc``: ``vecdot``'s ``axis``."""
    return {"axis"} if ufunc.__name__ == "vecdot" else set()


def call(ufunc, inputs, out, **options):
    """``ufunc(*inputs, out=out, **options)``, at least one input lazy: a
    lazy result (a tuple for several outputs), or ``out`` written."""
    Array, _store = _array.Array, _array._store
    name = _UFUNC_NAMES.get(ufunc.__name__, ufunc.__name__)
    first = next(x for x in inputs if isinstance(x, Array))
    if name in ("vecdot", "matvec", "vecmat"):
        from . import _contractions
        result = getattr(_contractions, name)(*inputs, **options)
        return result if out is None else _store(result, out[0], f"ufunc '{name}'")
    if name in ("matmul", "divmod"):
        a, b = inputs  # Python numbers stay weak (NEP 50) in divmod
        if name == "matmul":
            a, b = (x if isinstance(x, Array) else first._like(x) for x in inputs)
        result = a @ b if name == "matmul" else divmod(a, b)
        if out is None:
            return result
        if name == "divmod":
            return tuple(_store(r, o, "ufunc 'divmod'") for r, o in zip(result, out))
        return _store(result, out[0], "ufunc 'matmul'")
    if ufunc.nin == 1 and name in _UNARY_SPECIAL:
        result = _UNARY_SPECIAL[name](first)
    elif ufunc.nin == 1 and _native.has_unary_operation(name):
        result = Array(first._a.unary(name))
    elif ufunc.nin == 2 and name in ("fmax", "fmin"):
        result = _fmax_fmin(name, *inputs)
    elif name == "float_power":
        a, b = (x.astype(np.float64) if isinstance(x, Array) else np.float64(x)
                for x in inputs)
        result = a ** b
    elif ufunc.nin == 2 and name in _BINARY:
        a, b = inputs
        if isinstance(a, Array):
            result = a._binary(name, b)
        else:
            result = b._binary(name, a, True)
    elif ufunc.nout == 1:
        # A ufunc lazyfuse lacks: NumPy computes it on the computed
        # values (as for other NumPy functions), and the chain goes on.
        result = first._like(_computed(ufunc, inputs))
    else:
        results = _modf(first) if name == "modf" else tuple(
            first._like(r) for r in _computed(ufunc, inputs))
        if out is None:
            return results
        return tuple(_store(r, o, f"ufunc '{ufunc.__name__}'") for r, o in zip(results, out))
    if out is not None:
        (target,) = out
        return _store(result, target, f"ufunc '{ufunc.__name__}'")
    return result
