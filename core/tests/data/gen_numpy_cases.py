"""Generates numpy_cases.json: expected results of lazyfuse operations, computed by NumPy 2.x.

Run from this folder with NumPy 2 installed:  python gen_numpy_cases.py
The Rust test core/tests/numpy_semantics.rs replays every case.
Values are strings (NaN and infinities are not JSON numbers); floats are
written with repr(), which round-trips exactly.
"""
import json
import numpy as np

assert np.__version__.startswith("2."), np.__version__

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"]
SAMPLES = {
    "bool": [True, False, True, True, False, False, True, False],
    "int8": [0, 1, -1, 127, -128, 7, -7, 3],
    "int16": [0, 1, -1, 32767, -32768, 300, -300, 5],
    "int32": [0, 1, -1, 2**31 - 1, -2**31, 100000, -7, 3],
    "int64": [0, 1, -1, 2**63 - 1, -2**63, 10**12, -7, 3],
    "uint8": [0, 1, 2, 255, 128, 7, 3, 100],
    "uint16": [0, 1, 2, 65535, 300, 7, 3, 1000],
    "uint32": [0, 1, 2, 2**32 - 1, 70000, 7, 3, 5],
    "uint64": [0, 1, 2, 2**64 - 1, 2**40, 7, 3, 5],
    "float16": [0.0, -0.0, 1.5, -2.5, float("nan"), float("inf"), 0.1, -7.0],
    "float32": [0.0, -0.0, 1.5, -2.5, float("nan"), float("-inf"), 0.1, 1e30],
    "float64": [0.0, -0.0, 2.5, -1.5, float("nan"), float("inf"), 0.1, -1e300],
}
# A second operand per dtype, so binary cases pair different values (zeros included).
SAMPLES_B = {
    "bool": [False, False, True, True, True, False, False, True],
    "int8": [3, -2, 0, 2, -1, 7, 2, -3],
    "int16": [3, -2, 0, 2, -1, 7, 2, -3],
    "int32": [3, -2, 0, 2, -1, 7, 2, -3],
    "int64": [3, -2, 0, 2, -1, 7, 2, -3],
    "uint8": [3, 2, 0, 2, 1, 7, 2, 3],
    "uint16": [3, 2, 0, 2, 1, 7, 2, 3],
    "uint32": [3, 2, 0, 2, 1, 7, 2, 3],
    "uint64": [3, 2, 0, 2, 1, 7, 2, 3],
    "float16": [0.0, 0.0, -0.5, 2.0, 1.0, float("nan"), 3.0, -0.0],
    "float32": [-0.0, 0.0, -0.5, 2.0, 1.0, float("nan"), 3.0, 0.0],
    "float64": [0.0, -0.0, -0.5, 2.0, 1.0, float("nan"), 3.0, -0.0],
}
POW_EXPONENTS = [0, 1, 2, 3, 0, 5, 1, 2]

BINARY = ["add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "power",
          "minimum", "maximum", "equal", "not_equal", "less", "less_equal", "greater",
          "greater_equal", "logical_and", "logical_or", "logical_xor", "arctan2", "hypot", "copysign",
          "fmod", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"]
UNARY = ["negative", "absolute", "sign", "square", "sqrt", "exp", "log", "sin", "cos", "tan",
         "tanh", "floor", "ceil", "trunc", "round", "rint", "logical_not", "isnan", "isinf", "isfinite",
         "exp2", "log2", "log10", "expm1", "log1p", "arctan", "sinh", "cosh", "cbrt", "reciprocal",
         "deg2rad", "rad2deg", "invert"]
INEXACT = {"exp", "log", "sin", "cos", "tan", "tanh", "power", "exp2", "log2", "log10", "expm1",
           "log1p", "arctan", "sinh", "cosh", "mean", "arctan2", "hypot", "cbrt", "var", "std",
           "nanmean", "mean_axes"}


def enc(x):
    if isinstance(x, (bool, np.bool_)):
        return "1" if x else "0"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    return repr(float(x))


def arr(values, dtype, shape=None):
    a = np.array(values, dtype=dtype)
    return a if shape is None else a.reshape(shape)


def desc(a):
    return {"dtype": str(a.dtype), "shape": list(a.shape), "values": [enc(v) for v in a.ravel()]}


def scalar_desc(s):
    kind = "bool" if isinstance(s, bool) else "int" if isinstance(s, int) else "float"
    return {"scalar": kind, "value": enc(s)}


def run(fn):
    with np.errstate(all="ignore"):
        try:
            out = np.asarray(fn())
        except Exception as e:  # noqa: BLE001 - recording NumPy's refusal is the point
            return {"error": type(e).__name__}
    return desc(out)


def np_fn(name):
    return np.round if name == "round" else getattr(np, name)


cases = []


def add(kind, op, args, fn):
    cases.append({"kind": kind, "op": op, "args": args, "out": run(fn),
                  "exact": op not in INEXACT})


pairs = [(d, d) for d in DTYPES] + [
    ("int8", "uint8"), ("int64", "uint64"), ("uint32", "int32"), ("int16", "float16"),
    ("int8", "float16"), ("int32", "float32"), ("uint64", "float16"), ("bool", "int8"),
    ("bool", "float32"), ("float16", "float32"), ("float32", "float64"), ("uint8", "int64"),
]
for op in BINARY:
    for da, db in pairs:
        a = arr(SAMPLES[da], da)
        # Integer powers with negative exponents raise in NumPy; lazyfuse documents its own rule.
        bvals = POW_EXPONENTS if (op == "power" and np.dtype(db).kind in "iu") else SAMPLES_B[db]
        b = arr(bvals, db)
        if op == "power" and np.dtype(da).kind in "iu" and np.dtype(db).kind in "iu":
            a = arr([v % 5 for v in SAMPLES[da]], da)
        add("binary", op, [desc(a), desc(b)], lambda a=a, b=b, op=op: getattr(np, op)(a, b))

# Weak scalars (NEP 50), both sides, including out-of-range Python ints.
for op in ["add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "maximum", "less",
           "fmod", "arctan2", "bitwise_and", "left_shift"]:
    for d in DTYPES:
        for s in [2, -3, 2.5, True, 300, -1]:
            a = arr(SAMPLES[d], d)
            add("binary", op, [desc(a), scalar_desc(s)], lambda a=a, s=s, op=op: getattr(np, op)(a, s))
        a = arr(SAMPLES[d], d)
        add("binary", op, [scalar_desc(2), desc(a)], lambda a=a, op=op: getattr(np, op)(2, a))

# Broadcasting, including size-1 and 0-size dimensions.
for sa, sb in [((2, 1), (3,)), ((2, 3), (1, 3)), ((0, 3), (1, 3)), ((2, 1, 2), (3, 1)), ((), (4,)), ((0,), (1,))]:
    na, nb = int(np.prod(sa)), int(np.prod(sb))
    a = np.arange(na, dtype=np.float32).reshape(sa) + 1
    b = (np.arange(nb, dtype=np.int16) - 1).reshape(sb)
    add("binary", "add", [desc(a), desc(b)], lambda a=a, b=b: a + b)
    add("binary", "multiply", [desc(b), desc(a)], lambda a=a, b=b: b * a)

for op in UNARY:
    for d in DTYPES:
        vals = SAMPLES[d]
        if op == "reciprocal" and np.dtype(d).kind in "iu":
            # 1/0 of integers is platform-dependent in NumPy (0 or the minimum,
            # by width); lazyfuse defines it as 0 and tests it separately.
            vals = [v if v != 0 else 2 for v in vals]
        a = arr(vals, d)
        add("unary", op, [desc(a)], lambda a=a, op=op: np_fn(op)(a))

def in_range(values, source, target):
    """Float to integer casts of NaN, infinities and out-of-range values are
    undefined in C and platform-dependent in NumPy; lazyfuse defines them
    (saturating, NaN to 0) and tests them separately, so they are left out here."""
    if np.dtype(source).kind != "f" or np.dtype(target).kind not in "iu":
        return values
    info = np.iinfo(target)
    return [v if (v == v and info.min <= v <= info.max) else 0.0 for v in values]


for d in DTYPES:
    for target in DTYPES:
        a = arr(in_range(SAMPLES[d], d, target), d)
        add("astype", target, [desc(a)], lambda a=a, target=target: a.astype(target))

for d in ["int8", "uint8", "float32", "float64", "float16", "bool", "int64"]:
    a = arr(SAMPLES[d], d)
    b = arr(SAMPLES_B[d], d)
    c = arr(SAMPLES["bool"], "bool")
    add("where", "where", [desc(c), desc(a), desc(b)], lambda a=a, b=b, c=c: np.where(c, a, b))
    add("where", "where", [desc(c), desc(a), scalar_desc(1)], lambda a=a, c=c: np.where(c, a, 1))

REDUCTIONS = ["sum", "prod", "min", "max", "mean"]
for op in REDUCTIONS:
    for d in DTYPES:
        vals = SAMPLES[d][:6]
        if d.startswith("float"):
            vals = [v for v in vals if v == v and abs(v) != float("inf")] + [0.25, 4.0]
        if op == "mean":
            # Means of huge integers are ill-conditioned sums: any summation order differs.
            vals = [v for v in vals if abs(v) < 2**53] + [4, 5, 6]
        a = arr(vals[:6], d, (2, 3))
        for axis in [None, 0, 1, -1]:
            add("reduce", op, [desc(a), {"axis": axis}],
                lambda a=a, op=op, axis=axis: getattr(np, op)(a, axis=axis))
    nan = arr([1.0, float("nan"), 3.0, 4.0], "float32", (2, 2))
    add("reduce", op, [desc(nan), {"axis": None}], lambda a=nan, op=op: getattr(np, op)(a))
    add("reduce", op, [desc(nan), {"axis": 0}], lambda a=nan, op=op: getattr(np, op)(a, axis=0))
    empty = arr([], "float64", (0, 3))
    add("reduce", op, [desc(empty), {"axis": 0}], lambda a=empty, op=op: getattr(np, op)(a, axis=0))
    add("reduce", op, [desc(empty), {"axis": 1}], lambda a=empty, op=op: getattr(np, op)(a, axis=1))

# Arg-reductions: ties (the first wins), NaN (the first NaN wins), negative axes.
for op in ["argmax", "argmin"]:
    for d in DTYPES:
        a = arr(SAMPLES[d], d, (2, 4))
        for axis in [None, 0, 1, -1]:
            add("reduce", op, [desc(a), {"axis": axis}],
                lambda a=a, op=op, axis=axis: getattr(np, op)(a, axis=axis))
    ties = arr([3.0, 1.0, 3.0, float("nan"), 1.0, float("nan")], "float64", (2, 3))
    for axis in [None, 0, 1]:
        add("reduce", op, [desc(ties), {"axis": axis}],
            lambda a=ties, op=op, axis=axis: getattr(np, op)(a, axis=axis))

# Truth reductions, including empty and 0-d inputs.
for op in ["any", "all"]:
    for d in DTYPES:
        a = arr(SAMPLES[d], d, (2, 4))
        for axis in [None, 0, -1]:
            add("reduce", op, [desc(a), {"axis": axis}],
                lambda a=a, op=op, axis=axis: getattr(np, op)(a, axis=axis))
    empty = arr([], "float32", (0, 3))
    for axis in [None, 0]:
        add("reduce", op, [desc(empty), {"axis": axis}],
            lambda a=empty, op=op, axis=axis: getattr(np, op)(a, axis=axis))
    zero_d = arr(0.0, "float64")
    add("reduce", op, [desc(zero_d), {"axis": None}], lambda a=zero_d, op=op: getattr(np, op)(a))
for d in DTYPES:
    a = arr(SAMPLES[d], d, (2, 4))
    add("reduce", "count_nonzero", [desc(a), {"axis": None}], lambda a=a: np.count_nonzero(a))

# Variance and standard deviation (finite data).
for op in ["var", "std"]:
    for d in ["float32", "float64", "int32", "uint8", "bool"]:
        vals = [v for v in SAMPLES[d] if v == v and abs(v) != float("inf") and abs(v) < 1e20] * 2
        a = arr(vals[:6], d, (2, 3))
        for axis in [None, 0, 1, -1]:
            for ddof in [0, 1]:
                add("reduce", op, [desc(a), {"axis": axis, "ddof": ddof}],
                    lambda a=a, op=op, axis=axis, ddof=ddof: getattr(np, op)(a, axis=axis, ddof=ddof))
    one = arr([2.5], "float64")
    add("reduce", op, [desc(one), {"axis": None, "ddof": 1}], lambda a=one, op=op: getattr(np, op)(a, ddof=1))
    # f16: lazyfuse computes in f32 and rounds the result to f16 (the issue's
    # rule); the expectation is NumPy's f32 statistic, rounded to f16.
    vals = [v for v in SAMPLES["float16"] if v == v and abs(v) != float("inf")] * 2
    a = arr(vals[:6], "float16", (2, 3))
    for axis in [None, 1]:
        add("reduce", op, [desc(a), {"axis": axis, "ddof": 0}],
            lambda a=a, op=op, axis=axis: getattr(np, op)(a.astype("float32"), axis=axis).astype("float16"))

# The NaN-ignoring reductions, with all-NaN inputs.
for op in ["nansum", "nanmean", "nanmin", "nanmax"]:
    for d in ["float32", "float64", "int32"] + ([] if op == "nanmean" else ["float16"]):
        a = arr(SAMPLES[d], d, (2, 4))
        add("reduce", op, [desc(a), {"axis": None}], lambda a=a, op=op: getattr(np, op)(a))
    all_nan = arr([float("nan")] * 3, "float32")
    add("reduce", op, [desc(all_nan), {"axis": None}], lambda a=all_nan, op=op: getattr(np, op)(a))

# Several axes at once, with and without keepdims.
for op in ["sum", "prod", "min", "max", "mean", "any", "all"]:
    for d in ["float64", "int32", "bool"]:
        a = arr(list(range(12)), d, (2, 3, 2)) if d != "bool" else arr([v % 3 == 0 for v in range(12)], d, (2, 3, 2))
        for axes in [(0, 2), (-1, 0), (1,), ()]:
            for keepdims in [False, True]:
                add("reduce", op + "_axes", [desc(a), {"axes": list(axes), "keepdims": keepdims}],
                    lambda a=a, op=op, axes=axes, keepdims=keepdims:
                        getattr(np, op)(a, axis=axes, keepdims=keepdims))

# Element-wise functions with parameters.
for d in ["float32", "float64", "float16", "int32", "uint8"]:
    a = arr(SAMPLES[d], d)
    b = arr(SAMPLES_B[d], d)
    for lo, hi in [(0, 2), (-1.5, 1e3), (2, 1)]:
        add("clip", "clip", [desc(a), scalar_desc(lo), scalar_desc(hi)], lambda a=a, lo=lo, hi=hi: np.clip(a, lo, hi))
    # NumPy's clip returns an array bound on a tie of signed zeros but keeps
    # x with a scalar bound; lazyfuse always keeps x. No zero bounds here.
    lows = arr([v if v != 0 else 1 for v in SAMPLES_B[d]], d)
    add("clip", "clip", [desc(a), desc(lows), scalar_desc(5)], lambda a=a, b=lows: np.clip(a, b, 5))
    for rtol, atol in [(1e-5, 1e-8), (0.5, 0.0)]:
        add("isclose", "isclose", [desc(a), desc(b), {"rtol": repr(rtol), "atol": repr(atol)}],
            lambda a=a, b=b, rtol=rtol, atol=atol: np.isclose(a, b, rtol=rtol, atol=atol))
        add("isclose", "isclose", [desc(a), scalar_desc(1.5), {"rtol": repr(rtol), "atol": repr(atol)}],
            lambda a=a, rtol=rtol, atol=atol: np.isclose(a, 1.5, rtol=rtol, atol=atol))
    add("unary", "nan_to_num", [desc(a)], lambda a=a: np.nan_to_num(a))

# Scans.
for op in ["cumsum", "cumprod"]:
    for d in ["bool", "int8", "int32", "int64", "uint8", "float32", "float64"]:
        vals = [v for v in SAMPLES[d] if v == v]
        vals = (vals * 2)[:8]
        a = arr(vals, d, (2, 4))
        for axis in [0, 1, -1]:
            add("reduce", op, [desc(a), {"axis": axis}],
                lambda a=a, op=op, axis=axis: getattr(np, op)(a, axis=axis))
    empty = arr([], "float64", (0, 3))
    for axis in [0, 1]:
        add("reduce", op, [desc(empty), {"axis": axis}],
            lambda a=empty, op=op, axis=axis: getattr(np, op)(a, axis=axis))
    # f16 accumulates in f32 (the rule): NumPy's f32 scan, rounded.
    vals = ([v for v in SAMPLES["float16"] if v == v] * 2)[:8]
    a = arr(vals, "float16", (2, 4))
    for axis in [0, -1]:
        add("reduce", op, [desc(a), {"axis": axis}],
            lambda a=a, op=op, axis=axis: getattr(np, op)(a.astype("float32"), axis=axis).astype("float16"))

# Creation.
for start, stop, num in [(0.0, 1.0, 5), (-2.5, 7.25, 13), (1.0, 1.0, 4), (3.0, -3.0, 7), (2.0, 5.0, 1),
                         (0.0, 1.0, 0), (0.1, 0.7, 30)]:
    for d in ["float64", "float32", "int32", "float16"]:
        add("create", "linspace", [{"start": repr(start), "stop": repr(stop), "num": num, "dtype": d}],
            lambda start=start, stop=stop, num=num, d=d: np.linspace(start, stop, num, dtype=d))
for n in [0, 1, 4]:
    for d in ["float32", "int8", "bool"]:
        add("create", "eye", [{"n": n, "dtype": d}], lambda n=n, d=d: np.eye(n, dtype=d))

with open("numpy_cases.json", "w") as f:
    json.dump({"numpy": np.__version__, "cases": cases}, f, indent=0)
print(len(cases), "cases")
