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
         "tanh", "floor", "ceil", "trunc", "round", "logical_not", "isnan", "isinf", "isfinite",
         "exp2", "log2", "log10", "expm1", "log1p", "arctan", "sinh", "cosh", "cbrt", "reciprocal",
         "deg2rad", "rad2deg", "invert"]
INEXACT = {"exp", "log", "sin", "cos", "tan", "tanh", "power", "exp2", "log2", "log10", "expm1",
           "log1p", "arctan", "sinh", "cosh", "mean", "arctan2", "hypot", "cbrt"}


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

with open("numpy_cases.json", "w") as f:
    json.dump({"numpy": np.__version__, "cases": cases}, f, indent=0)
print(len(cases), "cases")
