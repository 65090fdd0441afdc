"""NumPy's ufuncs called on lazy arrays (``Array.__array_ufunc__``'s
``__call__``): lazyfuse's own operations where it has them, compositions
of them for the rest it computes lazily (``fabs``, ``signbit``, ``fmax``,
``modf``…), and NumPy on computed values for the few it lacks."""

import numpy as np

from . import _array, _native
from ._registry import OPERATIONS, register
from .errors import ArgumentError, DTypeError

# NumPy ufunc name -> lazyfuse operation name, where they differ.
_UFUNC_NAMES = {
    "true_divide": "divide", "absolute": "abs", "degrees": "rad2deg",
    "radians": "deg2rad",
}

# lazyfuse's binary operations and their aliases (the core's table).
_BINARY = frozenset(_native.binary_operation_names())


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


def method(ufunc, method, inputs, out, kwargs):
    """``ufunc.outer(a, b)`` lazily (the call of ``a`` with axes added for
    ``b``'s); the methods lazyfuse has no kernel for (``reduceat``, ``at``,
    the other ufuncs' ``reduce``/``accumulate``) in NumPy on computed values,
    as NumPy's other functions run: ``at`` writes its lazy first operand."""
    Array = _array.Array
    if method == "outer" and len(inputs) == 2 and not kwargs:
        a, b = inputs
        first = a if isinstance(a, Array) else b
        a = a if isinstance(a, Array) else first._like(a)
        b_ndim = b.ndim if hasattr(b, "ndim") else np.ndim(b)
        return call(ufunc, (a.reshape(a.shape + (1,) * b_ndim), b), out)
    values = [x.numpy() if isinstance(x, Array) else x for x in inputs]
    if method == "at":
        target = inputs[0]
        getattr(ufunc, method)(*values, **kwargs)
        if isinstance(target, Array):
            target._rebind(target._like(values[0])._a)
        return None
    if out is not None:
        kwargs["out"] = tuple(o.numpy() if isinstance(o, Array) else o for o in out)
    result = getattr(ufunc, method)(*values, **kwargs)
    if out is not None:
        for given, written in zip(out, kwargs["out"]):
            if isinstance(given, Array):
                given._rebind(given._like(written)._a)
        return out[0] if len(out) == 1 else out
    first = next(x for x in inputs if isinstance(x, Array))
    return first._like(result) if isinstance(result, np.ndarray) else result


# The keyword arguments of a ufunc call ``call`` takes besides ``out``.
_CALL_OPTIONS = frozenset({"dtype", "signature", "casting", "where", "order", "subok"})


def options(ufunc):
    """The keyword arguments besides ``out`` that ``call`` takes for
    ``ufunc``: NumPy's ``dtype``, ``signature``, ``casting``, ``where``,
    ``order``, ``subok``, and ``vecdot``'s ``axis``."""
    return _CALL_OPTIONS | {"axis"} if ufunc.__name__ == "vecdot" else _CALL_OPTIONS


# IEEE formats by the float dtype ldexp and frexp compute in: exponent
# bias, mantissa bits, the integer dtype of the same width.
_FORMATS = {np.dtype(np.float32): (127, 23, np.int32), np.dtype(np.float64): (1023, 52, np.int64)}


def _probe(value):
    """A stand-in of ``value`` for asking NumPy which loop it takes."""
    if isinstance(value, _array.Array):
        return np.zeros(0, np.float32 if value.dtype == "bfloat16" else value.dtype)
    return np.zeros(0, value.dtype) if isinstance(value, np.ndarray) else value


def _ldexp(first, x, n):
    """``ldexp``: ``x * 2**n`` exactly, as C's ``ldexp`` (musl's ``scalbn``):
    at most two scalings by powers of two that stay normal, then one by
    ``2**n`` built from its bits, so the result rounds once. In NumPy's
    result dtype (float16 computes in float32, exactly, and rounds once)."""
    out = np.ldexp(_probe(x), _probe(n)).dtype  # NumPy's loop, and its refusals
    if isinstance(x, _array.Array) and x.dtype == "bfloat16":
        out = "bfloat16"
    work = np.dtype(np.float64) if out == np.float64 else np.dtype(np.float32)
    bias, mantissa, bits = _FORMATS[work]
    x = (x if isinstance(x, _array.Array) else first._like(x)).astype(work)
    n = (n if isinstance(n, _array.Array) else first._like(n)).astype(np.int64)
    n = np.clip(n, -4 * bias, 4 * bias)  # beyond, the result is 0 or inf all the same
    down = 2.0 ** (1 - bias + mantissa + 1)  # the smallest normal times 2**(mantissa+1)
    for _ in range(2):
        x = _array.where(n > bias, x * 2.0 ** bias, x)
        n = _array.where(n > bias, n - bias, n)
        x = _array.where(n < 1 - bias, x * down, x)
        n = _array.where(n < 1 - bias, n + (bias - 1 - mantissa - 1), n)
    power = ((np.clip(n, 1 - bias, bias) + bias).astype(bits) << mantissa).view(work)
    return (x * power).astype(out)


def _frexp(x):
    """``frexp``: the mantissa in [0.5, 1) with ``x``'s sign and the int32
    exponent, from the bits (subnormals scaled up first); ``(x, 0)`` for
    zeros, infinities and NaN, as NumPy gives."""
    out = np.frexp(_probe(x))[0].dtype
    if x.dtype == "bfloat16":
        out = "bfloat16"
    work = np.dtype(np.float64) if out == np.float64 else np.dtype(np.float32)
    bias, mantissa, bits = _FORMATS[work]
    value = x.astype(work)
    subnormal = np.absolute(value) < float(np.finfo(work).tiny)
    scaled = _array.where(subnormal, value * 2.0 ** (mantissa + 2), value)
    word = scaled.view(bits)
    field = (word >> mantissa) & (2 * bias + 1)
    special = (value == 0) | ~np.isfinite(value)
    exponent = _array.where(special, 0, field - (bias - 1) - _array.where(subnormal, mantissa + 2, 0))
    half = (word & ~((2 * bias + 1) << mantissa)) | ((bias - 1) << mantissa)
    fraction = _array.where(special, value, half.view(work))
    return fraction.astype(out), exponent.astype(np.int32)


def direct(ufunc):
    """The plain call of ``ufunc`` on lazy arrays (and Python numbers), as
    ``_apply`` makes it, for ufuncs that are one native operation; ``None``
    for the others. ``lf.exp(x)`` then skips NumPy's dispatch and the
    general path (a few microseconds of the Python boundary)."""
    name = _UFUNC_NAMES.get(ufunc.__name__, ufunc.__name__)
    Array = _array.Array
    if ufunc.nin == 1 and name not in _UNARY_SPECIAL and _native.has_unary_operation(name):
        return lambda a: Array(a._a.unary(name)) if isinstance(a, Array) else None
    if ufunc.nin == 2 and name in _BINARY and name not in ("fmax", "fmin"):
        def binary(a, b):
            if isinstance(a, Array):
                return a._binary(name, b) if isinstance(b, (Array, float, int)) else None
            if isinstance(b, Array) and isinstance(a, (float, int)):
                return b._binary(name, a, True)
            return None
        return binary
    return None


def call(ufunc, inputs, out, where=True, dtype=None, signature=None, casting="same_kind",
         order="K", subok=True, **options):
    """``ufunc(*inputs, out=out, …)``, at least one input lazy: a lazy
    result (a tuple for several outputs), or ``out`` written. ``dtype=`` and
    ``signature=`` choose NumPy's loop (its dtypes and casting checks,
    ``ufunc.resolve_dtypes``): the inputs are cast to it. ``where=`` keeps
    ``out``'s values where it is false (0 there without ``out``: NumPy's
    are uninitialised)."""
    if order not in ("K", "A", "C", "F"):
        raise ArgumentError(f"ufunc '{ufunc.__name__}': order {order!r} (expected 'K', 'A', 'C' "
                            "or 'F')")
    if dtype is None and signature is None and where is True:
        return _apply(ufunc, inputs, out, casting, **options)
    first = next(x for x in inputs if isinstance(x, _array.Array))
    results_dtypes = None
    if dtype is not None or signature is not None:
        inputs, results_dtypes = _loop_inputs(ufunc, first, inputs, dtype, signature, casting)
    results = _apply(ufunc, inputs, None, casting, **options)
    results = results if isinstance(results, tuple) else (results,)
    if results_dtypes is not None:
        results = tuple(r if r.dtype == d else r.astype(d) for r, d in zip(results, results_dtypes))
    if where is not True:
        mask = where if isinstance(where, _array.Array) else first._like(where)
        kept = out or (0,) * len(results)
        results = tuple(_array.where(mask, r, k if isinstance(k, (_array.Array, int)) else
                                     first._like(k)) for r, k in zip(results, kept))
    if out is None:
        return results if len(results) > 1 else results[0]
    stored = tuple(_array._store(r, o, f"ufunc '{ufunc.__name__}'", casting)
                   for r, o in zip(results, out))
    return stored if len(stored) > 1 else stored[0]


def _loop_inputs(ufunc, first, inputs, dtype, signature, casting):
    """The inputs cast to the dtypes of NumPy's loop for ``dtype=`` (every
    output's) or ``signature=``, and the loop's output dtypes; NumPy's
    errors where it has no such loop or a cast breaks ``casting``."""
    if signature is None:
        signature = (None,) * ufunc.nin + (np.dtype(dtype),) * ufunc.nout
    elif dtype is not None:
        raise TypeError(f"ufunc '{ufunc.__name__}': cannot specify both 'signature' and 'dtype'")
    if any(isinstance(x, _array.Array) and x.dtype == "bfloat16" for x in inputs):
        raise DTypeError(f"ufunc '{ufunc.__name__}': dtype= or signature= with a bfloat16 operand "
                         "(NumPy has no bfloat16 loops; cast it first)")
    given = tuple(x.dtype if isinstance(x, (_array.Array, np.ndarray, np.generic)) else
                  (np.dtype(bool) if isinstance(x, bool) else type(x)) for x in inputs)
    loop = ufunc.resolve_dtypes(given + (None,) * ufunc.nout, signature=signature,
                                casting=casting)
    cast = [x.astype(d) if isinstance(x, _array.Array) else first._like(np.asarray(x, d))
            for x, d in zip(inputs, loop)]
    return cast, loop[ufunc.nin:]


def _apply(ufunc, inputs, out, casting="same_kind", **options):
    """``call`` without ``where``, ``dtype`` and ``signature``."""
    Array = _array.Array

    def _store(result, target, what):
        return _array._store(result, target, what, casting)

    name = _UFUNC_NAMES.get(ufunc.__name__, ufunc.__name__)
    first = next(x for x in inputs if isinstance(x, Array))
    if name in ("vecdot", "matvec", "vecmat"):
        result = OPERATIONS[name](*inputs, **options)  # `_contractions`'s
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
    if name == "ldexp":
        result = _ldexp(first, *inputs)
    elif ufunc.nin == 1 and name in _UNARY_SPECIAL:
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
        special = {"modf": _modf, "frexp": _frexp}.get(name)
        results = special(first) if special else tuple(
            first._like(r) for r in _computed(ufunc, inputs))
        if out is None:
            return results
        return tuple(_store(r, o, f"ufunc '{ufunc.__name__}'") for r, o in zip(results, out))
    if out is not None:
        (target,) = out
        return _store(result, target, f"ufunc '{ufunc.__name__}'")
    return result


register(OPERATIONS, ufunc_direct=direct, ufunc_call=call, ufunc_method=method, ufunc_options=options)
