"""What CUDA C's names mean in lazyfuse's kernel dialect — its limits and
constants, math functions, atomics and intrinsics — and C's types: the
usual arithmetic conversions, integer promotion, NumPy's names."""

import math

import numpy as np

FLOATS = ("float16", "float32", "float64")
RANK = {"bool": 0, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 3, "uint32": 3,
         "int64": 4, "uint64": 4}

#: Names C code reads as constants: (Python text, type).
CONSTANTS = {
    "INFINITY": ("math.inf", "float32"), "HUGE_VALF": ("math.inf", "float32"),
    "HUGE_VAL": ("math.inf", "float64"), "NAN": ("math.nan", "float32"),
    "CUDART_INF_F": ("math.inf", "float32"), "CUDART_NAN_F": ("math.nan", "float32"),
    "CUDART_INF": ("math.inf", "float64"), "CUDART_NAN": ("math.nan", "float64"),
    "FLT_MAX": ("3.4028234663852886e+38", "float32"), "FLT_MIN": ("1.1754943508222875e-38", "float32"),
    "FLT_EPSILON": ("1.1920928955078125e-07", "float32"),
    "DBL_MAX": ("1.7976931348623157e+308", "float64"), "DBL_MIN": ("2.2250738585072014e-308", "float64"),
    "DBL_EPSILON": ("2.220446049250313e-16", "float64"),
    "M_PI": ("math.pi", "float64"), "M_E": ("math.e", "float64"),
    "M_PI_2": (repr(math.pi / 2), "float64"), "M_SQRT2": (repr(math.sqrt(2)), "float64"),
    "M_LN2": (repr(math.log(2)), "float64"), "M_1_PI": (repr(1 / math.pi), "float64"),
    "M_SQRT1_2": (repr(math.sqrt(0.5)), "float64"),
    "CUDART_PI_F": (repr(float(np.float32(math.pi))), "float32"),
    "INT_MAX": ("2147483647", "int32"), "INT_MIN": ("(-2147483648)", "int32"),
    "UINT_MAX": ("4294967295", "uint32"), "LLONG_MAX": ("9223372036854775807", "int64"),
    "warpSize": ("cuda.warpsize", "int32"),
}

#: C's math functions: name -> (base name, how the call is written, its
#: float type: "float32" for the f-suffixed ones and the intrinsics, None
#: for the overloaded ones, whose type is their arguments').
MATH = {}
for _name, _call in [
        ("sqrt", "np.sqrt"), ("exp", "np.exp"), ("exp2", "np.exp2"), ("expm1", "np.expm1"),
        ("log", "np.log"), ("log2", "np.log2"), ("log10", "np.log10"), ("log1p", "np.log1p"),
        ("sin", "np.sin"), ("cos", "np.cos"), ("tan", "np.tan"), ("asin", "np.arcsin"),
        ("acos", "np.arccos"), ("atan", "np.arctan"), ("atan2", "np.arctan2"),
        ("sinh", "np.sinh"), ("cosh", "np.cosh"), ("tanh", "np.tanh"), ("asinh", "np.arcsinh"),
        ("acosh", "np.arccosh"), ("atanh", "np.arctanh"), ("pow", "np.power"),
        ("fabs", "abs"), ("floor", "np.floor"), ("ceil", "np.ceil"), ("trunc", "np.trunc"),
        ("rint", "np.rint"), ("nearbyint", "np.rint"), ("fmin", "fmin"), ("fmax", "fmax"),
        ("fmod", "np.fmod"), ("hypot", "np.hypot"), ("copysign", "np.copysign"),
        ("cbrt", "np.cbrt"), ("erf", "math.erf"), ("erfc", "math.erfc"),
        ("tgamma", "math.gamma"), ("lgamma", "math.lgamma"), ("nextafter", "np.nextafter"),
        ("remainder", "math.remainder"), ("ldexp", "math.ldexp"), ("fdim", "fdim"),
        ("round", "round"), ("rsqrt", "rsqrt"), ("exp10", "exp10"), ("fma", "cuda.fma"),
        ("isnan", "np.isnan"), ("isinf", "np.isinf"), ("isfinite", "np.isfinite"),
        ("signbit", "np.signbit")]:
    MATH[_name] = (_name, _call, None)
    MATH[_name + "f"] = (_name, _call, "float32")
    MATH["__" + _name + "f"] = (_name, _call, "float32")  # the fast intrinsics: __expf...
MATH.update({"__fdividef": ("divide", "divide", "float32"),
              "__saturatef": ("saturate", "saturate", "float32"),
              "__frcp_rn": ("reciprocal", "reciprocal", "float32"),
              "__fsqrt_rn": ("sqrt", "np.sqrt", "float32"),
              "__fmul_rn": ("multiply", "multiply", "float32"),
              "__fadd_rn": ("add", "add", "float32"),
              "__dmul_rn": ("multiply", "multiply", "float64"),
              "__dadd_rn": ("add", "add", "float64")})
BOOLEAN_MATH = {"isnan", "isinf", "isfinite", "signbit"}

MIN_MAX_ABS = {"min": "min", "umin": "min", "llmin": "min", "ullmin": "min",
                "max": "max", "umax": "max", "llmax": "max", "ullmax": "max",
                "abs": "abs", "labs": "abs", "llabs": "abs"}
ATOMICS = {"atomicAdd": "add", "atomicSub": "sub", "atomicMax": "max", "atomicMin": "min",
            "atomicExch": "exch", "atomicCAS": "cas", "atomicAnd": "and_", "atomicOr": "or_",
            "atomicXor": "xor", "atomicInc": "inc", "atomicDec": "dec"}
INTRINSICS = {  # name -> (Python text, arity, result type or None for the first argument's)
    "__syncthreads": ("cuda.syncthreads", 0, "void"),
    "__syncthreads_count": ("cuda.syncthreads_count", 1, "int32"),
    "__syncthreads_and": ("cuda.syncthreads_and", 1, "int32"),
    "__syncthreads_or": ("cuda.syncthreads_or", 1, "int32"),
    "__threadfence": ("cuda.threadfence", 0, "void"),
    "__threadfence_block": ("cuda.threadfence_block", 0, "void"),
    "__threadfence_system": ("cuda.threadfence_system", 0, "void"),
    "__syncwarp": ("cuda.syncwarp", None, "void"),
    "__shfl_sync": ("cuda.shfl_sync", 3, None), "__shfl_up_sync": ("cuda.shfl_up_sync", 3, None),
    "__shfl_down_sync": ("cuda.shfl_down_sync", 3, None),
    "__shfl_xor_sync": ("cuda.shfl_xor_sync", 3, None),
    "__ballot_sync": ("cuda.ballot_sync", 2, "uint32"), "__all_sync": ("cuda.all_sync", 2, "int32"),
    "__any_sync": ("cuda.any_sync", 2, "int32"), "__activemask": ("cuda.activemask", 0, "uint32"),
    "__popc": ("cuda.popc", 1, "int32"), "__popcll": ("cuda.popc", 1, "int32"),
    "__clz": ("cuda.clz", 1, "int32"), "__clzll": ("cuda.clz", 1, "int32"),
    "__ffs": ("cuda.ffs", 1, "int32"), "__ffsll": ("cuda.ffs", 1, "int32"),
    "__brev": ("cuda.brev", 1, None), "__brevll": ("cuda.brev", 1, None),
}


def common_type(a, b):
    """C's usual arithmetic conversions of two scalar types."""
    if a in FLOATS or b in FLOATS:
        floats = [t for t in (a, b) if t in FLOATS]
        widest = max(floats, key=FLOATS.index)
        return "float32" if widest == "float16" else widest
    a, b = promoted(a), promoted(b)
    if a == b:
        return a
    if RANK[a] == RANK[b]:
        return a if a.startswith("u") else b
    wide, narrow = (a, b) if RANK[a] > RANK[b] else (b, a)
    if wide.startswith("u") or not narrow.startswith("u"):
        return wide
    return wide  # a wider signed type holds every value of the narrower unsigned one


def promoted(t):
    """Integer promotion: anything narrower than int is an int."""
    return "int32" if RANK.get(t, 3) < 3 else t


def is_int(t):
    return isinstance(t, str) and t in RANK and t != "bool"


def is_unsigned(t):
    return isinstance(t, str) and t.startswith("u")


def np_type(t):
    return f"np.{'bool_' if t == 'bool' else t}"


class LocalArray:
    """A local or shared array: its element type and dimensions."""

    def __init__(self, element, ndim):
        self.element, self.ndim = element, ndim


PY_RESERVED = {"and", "or", "not", "is", "in", "lambda", "pass", "def", "class", "from", "with",
                "yield", "global", "nonlocal", "del", "assert", "async", "await", "try",
                "except", "finally", "raise", "import", "as", "elif", "None", "True", "False",
                "np", "math", "cuda", "range", "abs", "min", "max", "len", "print"}
