"""A small ctypes binding of lazyfuse's C API (see bindings/include/lazyfuse.h).

NumPy arrays go in by pointer (lazyfuse copies them once, as
lf_array_from_data documents) and results come back straight into a NumPy
array's buffer (lf_array_read writes into it: no intermediate copy).
"""
import ctypes
import os

import numpy as np

_DTYPES = {
    np.dtype("float16"): 0, np.dtype("float32"): 2, np.dtype("float64"): 3,
    np.dtype("int8"): 4, np.dtype("int16"): 5, np.dtype("int32"): 6, np.dtype("int64"): 7,
    np.dtype("uint8"): 8, np.dtype("uint16"): 9, np.dtype("uint32"): 10, np.dtype("uint64"): 11,
    np.dtype("bool"): 12,
}
_CODES = {code: dtype for dtype, code in _DTYPES.items()}

_lib = ctypes.CDLL(os.environ.get("LAZYFUSE_LIB", "target/debug/liblazyfuse_ffi.so"))
_P = ctypes.c_void_p
_lib.lf_last_error_message.restype = ctypes.c_char_p
for name, args in {
    "lf_context_new": [ctypes.c_char_p, ctypes.POINTER(_P)],
    "lf_array_from_data": [_P, ctypes.c_uint32, ctypes.POINTER(ctypes.c_size_t), ctypes.c_size_t, _P, ctypes.POINTER(_P)],
    "lf_apply": [ctypes.c_char_p, ctypes.POINTER(_P), ctypes.c_size_t, ctypes.POINTER(_P)],
    "lf_apply_scalar": [ctypes.c_char_p, _P, ctypes.c_double, ctypes.POINTER(_P)],
    "lf_ufunc_from_expr": [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t, ctypes.POINTER(_P)],
    "lf_ufunc_call": [_P, ctypes.POINTER(_P), ctypes.c_size_t, ctypes.POINTER(_P)],
    "lf_reduce": [ctypes.c_char_p, _P, ctypes.c_int, ctypes.c_bool, ctypes.POINTER(_P)],
    "lf_array_ndim": [_P, ctypes.POINTER(ctypes.c_size_t)],
    "lf_array_shape": [_P, ctypes.POINTER(ctypes.c_size_t), ctypes.c_size_t],
    "lf_array_dtype": [_P, ctypes.POINTER(ctypes.c_uint32)],
    "lf_array_read": [_P, _P, ctypes.c_size_t],
}.items():
    getattr(_lib, name).argtypes = args
    getattr(_lib, name).restype = ctypes.c_int32
for name in ["lf_context_free", "lf_array_free", "lf_ufunc_free"]:
    getattr(_lib, name).argtypes = [_P]
    getattr(_lib, name).restype = None


class LazyfuseError(RuntimeError):
    """A failed lazyfuse call: the status and lf_last_error_message()."""


def _check(status):
    if status != 0:
        raise LazyfuseError(f"status {status}: {_lib.lf_last_error_message().decode()}")


class Context:
    def __init__(self, backend=None):
        self._ptr = _P()
        _check(_lib.lf_context_new(backend.encode() if backend else None, ctypes.byref(self._ptr)))

    def __del__(self):
        _lib.lf_context_free(self._ptr)

    def array(self, values):
        values = np.ascontiguousarray(values)
        if values.dtype not in _DTYPES:
            raise TypeError(f"unsupported dtype {values.dtype}")
        shape = (ctypes.c_size_t * values.ndim)(*values.shape)
        out = _P()
        _check(_lib.lf_array_from_data(self._ptr, _DTYPES[values.dtype], shape, values.ndim,
                                       values.ctypes.data_as(_P), ctypes.byref(out)))
        return Array(out)


class Array:
    def __init__(self, ptr):
        self._ptr = ptr

    def __del__(self):
        _lib.lf_array_free(self._ptr)

    @staticmethod
    def _wrap(fn, *args):
        out = _P()
        _check(fn(*args, ctypes.byref(out)))
        return Array(out)

    def apply(self, op, *others):
        ptrs = (_P * (1 + len(others)))(self._ptr, *[o._ptr for o in others])
        return Array._wrap(_lib.lf_apply, op.encode(), ptrs, len(ptrs))

    def scalar(self, op, value):
        return Array._wrap(_lib.lf_apply_scalar, op.encode(), self._ptr, float(value))

    def reduce(self, op, axis=None):
        return Array._wrap(_lib.lf_reduce, op.encode(), self._ptr, 0 if axis is None else axis, axis is None)

    @property
    def shape(self):
        ndim = ctypes.c_size_t()
        _check(_lib.lf_array_ndim(self._ptr, ctypes.byref(ndim)))
        dims = (ctypes.c_size_t * max(ndim.value, 1))()
        _check(_lib.lf_array_shape(self._ptr, dims, ndim.value))
        return tuple(dims[i] for i in range(ndim.value))

    @property
    def dtype(self):
        code = ctypes.c_uint32()
        _check(_lib.lf_array_dtype(self._ptr, ctypes.byref(code)))
        return _CODES[code.value]

    def numpy(self):
        out = np.empty(self.shape, dtype=self.dtype)
        _check(_lib.lf_array_read(self._ptr, out.ctypes.data_as(_P), out.nbytes))
        return out


class Ufunc:
    def __init__(self, expr, names):
        arr = (ctypes.c_char_p * len(names))(*[n.encode() for n in names])
        self._ptr = _P()
        _check(_lib.lf_ufunc_from_expr(expr.encode(), arr, len(names), ctypes.byref(self._ptr)))

    def __del__(self):
        _lib.lf_ufunc_free(self._ptr)

    def __call__(self, *arrays):
        ptrs = (_P * len(arrays))(*[a._ptr for a in arrays])
        return Array._wrap(_lib.lf_ufunc_call, self._ptr, ptrs, len(arrays))
