"""Calls in translated kernels (see ``_jit``): the launch geometry
(``cuda.grid``, ``gridsize``, ``syncthreads``), shared and local arrays,
atomics, ``math.*``, Python's and Numba's builtins (``abs``, ``min``/``max``,
``len``, ``round``, ``float``/``int``/``bool``, ``cuda.selp``), conversions
by Numba's or NumPy's type objects (``float32(x)``, ``np.int64(x)``), and
device functions (inlined by ``_jit``)."""

import ast

from ._trace import _MATH
from .errors import CompileError

#: CUDA's geometry registers (``cuda.threadIdx.x`` …).
SPECIAL = {"threadIdx", "blockIdx", "blockDim", "gridDim"}

#: Numba's atomic operations by the native kernel builder's names.
_ATOMICS = {
    "add": "add", "sub": "sub", "max": "max", "min": "min", "nanmax": "nanmax",
    "nanmin": "nanmin", "and_": "and", "or_": "or", "xor": "xor", "inc": "inc", "dec": "dec",
    "exch": "exchange", "compare_and_swap": "cas", "cas": "cas",
}
_NUMPY_DTYPES = {
    "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "bool_", "float_", "int_",
}


#: ``cuda.fp16.h*`` intrinsics: the operation of that name on float16
#: values (computed in float32 and rounded once, as every float16
#: operation of lazyfuse; ``hfma`` rounds the product and the sum).
_FP16 = {
    "hadd": "add", "hsub": "subtract", "hmul": "multiply", "hdiv": "divide",
    "hneg": "negative", "habs": "absolute", "hmax": "maximum", "hmin": "minimum",
    "heq": "equal", "hne": "not_equal", "hlt": "less", "hle": "less_equal", "hgt": "greater",
    "hge": "greater_equal", "hsin": "sin", "hcos": "cos", "hlog": "log", "hlog2": "log2",
    "hlog10": "log10", "hexp": "exp", "hexp2": "exp2", "hsqrt": "sqrt", "hceil": "ceil",
    "hfloor": "floor", "htrunc": "trunc", "hrint": "rint", "hrcp": "reciprocal",
}

#: Numba's warp functions: the native operation and the number of arguments.
_WARP = {
    "cuda.shfl_sync": ("shfl", 3), "cuda.shfl_up_sync": ("shfl_up", 3),
    "cuda.shfl_down_sync": ("shfl_down", 3), "cuda.shfl_xor_sync": ("shfl_xor", 3),
    "cuda.ballot_sync": ("ballot", 2), "cuda.all_sync": ("all", 2), "cuda.any_sync": ("any", 2),
    "cuda.activemask": ("activemask", 0),
}

#: ``math`` functions written in the kernel dialect (``_kernel_math``).
_LIBRARY_MATH = {"modf", "frexp", "ldexp", "remainder"}


def _is_ufunc(name):
    """Whether ``np.<name>`` is one of NumPy's ufuncs (called on a kernel's
    numbers, it is the element-wise operation of that name)."""
    import numpy as np
    return isinstance(getattr(np, name, None), np.ufunc)


def _dtype_name(node, env):
    """A dtype written in the source: ``numba.float32``, ``np.float64``, ``float32``, ``'f4'``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        import numpy as np
        return np.dtype(node.value).name
    if isinstance(node, ast.Attribute) and node.attr in _NUMPY_DTYPES:
        import numpy as np
        return np.dtype(getattr(np, node.attr)).name
    if isinstance(node, ast.Name):
        value = env.get(node.id)
        name = getattr(value, "name", None) or getattr(value, "__name__", None)
        if name:
            import numpy as np
            return np.dtype(name).name
    raise CompileError(f"line {node.lineno}: cannot read a dtype from {ast.unparse(node)!r}")

#: NumPy's ufuncs the kernel builder knows by another of NumPy's names.
_UFUNC_ALIASES = {"degrees": "rad2deg", "radians": "deg2rad"}


def _ufunc_on_arrays(e, is_array):
    """``np.<ufunc>`` of ``e`` when it is NumPy's ufunc called on arrays
    with its outputs given (``np.sin(a, out)``), else None."""
    if not (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute)
            and isinstance(e.func.value, ast.Name) and e.func.value.id in ("np", "numpy")
            and _is_ufunc(e.func.attr) and not e.keywords):
        return None
    import numpy as np
    ufunc = getattr(np, e.func.attr)
    if len(e.args) != ufunc.nin + ufunc.nout or not all(
            is_array(a) for a in e.args[ufunc.nin:]):
        return None
    return ufunc


class Calls:
    """The call half of the translator. Expects ``expr``, ``fail``, ``env``,
    ``arrays``, ``written``, ``inlines`` (whether a called value is a device
    function) and ``inline_call``."""

    def array_keywords(self, e, path, kw):
        """Refuses what ``cuda.shared.array``/``cuda.local.array`` cannot
        honour: an ``alignment=`` (the kernel builder places these arrays
        itself, as Numba's simulator does, which refuses it too) and
        keywords Numba does not have."""
        unknown = sorted(set(kw) - {"shape", "dtype", "alignment"})
        if unknown:
            self.fail(e, f"{path} with the keyword {unknown[0]}= (it takes shape, dtype, alignment)")
        alignment = kw.get("alignment")
        if alignment is not None and not (isinstance(alignment, ast.Constant) and alignment.value is None) \
                and self.static_value(alignment) != (True, None):
            self.fail(e, f"{path}(alignment=…): an alignment is not supported in cudasim (Numba's "
                         "simulator) nor by lazyfuse, whose kernel builder places shared and local "
                         "arrays itself")

    def call(self, e):
        callee = self.env.get(e.func.id) if isinstance(e.func, ast.Name) else None
        if e.keywords and not (isinstance(e.func, ast.Attribute) and e.func.attr == "array") \
                and not self.inlines(callee):
            self.fail(e, "keyword arguments")
        func = e.func
        path = self.intrinsic_path(func) or ast.unparse(func)
        value = self.resolved_value(func)
        # A function that translates its calls (`_libdevice`); looked up on
        # the class, which no `__getattr__` answers for.
        if getattr(type(value), "_lf_translate", None) is not None:
            return value._lf_translate(self, e)
        tail = path.split(".")
        args = e.args
        if tail[-1] in ("grid", "gridsize") and len(tail) >= 2:
            n = args[0].value if args and isinstance(args[0], ast.Constant) else None
            if n not in (1, 2, 3):
                self.fail(e, f"{path} of other than a constant 1, 2 or 3")
            return (tail[-1], n)
        if tail[-1] == "syncthreads":
            return ("sync",)
        if path == "cuda.cg.grid_sync":  # g.sync() of g = cuda.cg.this_grid() (`_grid_groups`)
            return self.grid_sync()
        if path in _WARP and len(args) == _WARP[path][1]:
            return self.warp_call(_WARP[path][0], [self.expr(a) for a in args])
        if path == "cuda.syncwarp" and len(args) <= 1:
            return ("fence", "warp")
        if path == "cuda.lanemask_lt" and not args:
            lane = ("cast", "uint32", self.lane_id())
            return ("cast", "uint32", ("bin", "subtract", ("bin", "left_shift", ("cast", "uint32", ("const", 1)),
                                                          lane), ("cast", "uint32", ("const", 1))))
        if path in ("cuda.threadfence", "cuda.threadfence_block", "cuda.threadfence_system"):
            return ("fence", {"threadfence_block": "block", "threadfence_system": "system"}.get(
                tail[-1], "device"))
        if path in ("cuda.syncthreads_count", "cuda.syncthreads_and", "cuda.syncthreads_or"):
            if len(args) != 1:
                self.fail(e, f"{path} with other than one predicate")
            return self.block_vote(tail[-1], self.expr(args[0]))
        if len(tail) >= 2 and tail[-2] in ("shared", "local") and tail[-1] == "array":
            kw = {k.arg: k.value for k in e.keywords}
            self.array_keywords(e, path, kw)
            shape = kw.get("shape", args[0] if args else None)
            dtype = kw.get("dtype", args[1] if len(args) > 1 else None)
            if shape is None or dtype is None:
                self.fail(e, f"{path} without a shape and a dtype")
            known, value = self.static_value(shape)
            dims = value if known and isinstance(value, tuple) else [value]
            sizes = []
            for value in dims:
                if not known or isinstance(value, bool) or not isinstance(
                        value, (int, __import__("numpy").integer)):
                    self.fail(e, "an array shape that is not made of constants")
                sizes.append(int(value))
            dtype = _dtype_name(dtype, self.env)
            if sizes == [0] and tail[-2] == "shared":
                sizes = [self.dynamic_shared_elements(e, dtype)]
            return (f"{tail[-2]}_array", dtype, sizes)
        if len(tail) >= 2 and tail[-2] == "atomic" and tail[-1] in _ATOMICS:
            if tail[-1] == "compare_and_swap" and len(args) == 3:
                # Numba's compare_and_swap(ary, old, val) works on ary[0]
                # (of `res[i:]`, on res[i]).
                first, start = args[0], ast.Constant(0, lineno=e.lineno, col_offset=0)
                if (isinstance(first, ast.Subscript) and isinstance(first.slice, ast.Slice)
                        and first.slice.upper is None and first.slice.step is None):
                    first, start = first.value, first.slice.lower or start
                args = [first, start] + list(args[1:])
            arity = 4 if _ATOMICS[tail[-1]] == "cas" else 3
            if len(args) != arity or not isinstance(args[0], ast.Name):
                self.fail(e, f"{path} with these arguments (expected {arity}: array, index, "
                             f"{'old, value' if arity == 4 else 'value'})")
            array, index = self.through_view(args[0].id, self.index_items(args[1]), e)
            if array in self.arrays:
                self.written.add(array)
            return ("atomic", _ATOMICS[tail[-1]], array, index, [self.expr(a) for a in args[2:]])
        if len(tail) == 2 and tail[0] == "math" and tail[1] in _MATH:
            return ("call", _MATH[tail[1]], [self.expr(a) for a in args])
        if path == "abs" and len(args) == 1:
            return ("unary", "abs", self.expr(args[0]))
        if path in ("min", "max") and len(args) >= 2:
            op = "minimum" if path == "min" else "maximum"
            value = self.expr(args[0])
            for arg in args[1:]:  # Python's order: the first of equal values
                value = ("bin", op, value, self.expr(arg))
            return value
        if path == "round" and len(args) == 1:  # Python's: half to even, an int
            return ("cast", "int64", ("unary", "round", self.expr(args[0])))
        if len(tail) == 3 and tail[:2] == ["cuda", "fp16"]:
            return self.half_call(e, tail[2], [("cast", "float16", self.expr(a)) for a in args])
        if path == "lazyfuse.raise":
            return self.raised(args[0].value)
        if path == "cuda.fma" and len(args) == 3:
            return ("fma", *[self.expr(a) for a in args])
        if path == "pow" and len(args) == 2:
            return ("bin", "power", self.expr(args[0]), self.expr(args[1]))
        if path == "round" and len(args) == 2:
            return self.library_call("round_ndigits", e)
        if len(tail) == 2 and tail[0] == "math" and tail[1] in _LIBRARY_MATH:
            return self.library_call(tail[1], e)
        if path in ("cuda.cbrt", "cuda.exp2", "cuda.popc", "cuda.clz", "cuda.ffs", "cuda.brev"):
            return ("call", tail[1], [self.expr(a) for a in args])
        if tail[-1] == "bit_count" and len(tail) == 2 and not args:
            # Python's int.bit_count: the set bits of |x|.
            return ("call", "popc", [("unary", "absolute", self.expr(func.value))])
        if len(tail) == 2 and tail[0] in ("np", "numpy") and _is_ufunc(tail[1]):
            values = [self.expr(a) for a in args]
            if tail[1].startswith("logical_"):  # of numbers' truth, as NumPy's
                values = [("cast", "bool", v) for v in values]
            if tail[1] in ("fmax", "fmin") and len(values) == 2:
                # The larger (smaller) of the two, a NaN losing: b != b is a NaN.
                a, b = values
                order = "greater_equal" if tail[1] == "fmax" else "less_equal"
                keep_a = ("bin", "logical_or", ("bin", "not_equal", b, b), ("bin", order, a, b))
                return ("select", keep_a, a, b)
            return ("call", _UFUNC_ALIASES.get(tail[1], tail[1]), values)
        if path == "cuda.selp" and len(args) == 3:
            return ("select", self.expr(args[0]), self.expr(args[1]), self.expr(args[2]))
        if path == "len" and len(args) == 1 and self.is_sliced(args[0]):
            view = self.fresh("slice")
            return ("let", self.make_view(view, args[0]), self.dim_length(view, 0, e))
        if path == "len" and len(args) == 1:
            parts = self.tuple_parts(args[0])
            if parts is not None:
                return ("const", len(parts))
            element = self.tuple_element(args[0])
            name = element[1] if element and element[0] == "array" else getattr(args[0], "id", None)
            if name is not None:
                return self.dim_length(name, 0, e)
        if path in ("float", "int", "bool") and len(args) == 1:
            dtype = {"float": "float64", "int": "int64", "bool": "bool"}[path]
            return ("cast", dtype, self.expr(args[0]))
        target = self.env.get(path) if isinstance(func, ast.Name) else None
        if self.inlines(target):
            return self.inline_call(target, e)
        dtype = self.cast_dtype(func)
        if dtype is not None and len(args) == 1:
            return ("cast", dtype, self.expr(args[0]))
        self.fail(e, f"a call of '{path}'")

    def ufunc_loop(self, e, ufunc):
        """NumPy's ufunc on arrays in a kernel, written into its output
        arrays (Numba's array expressions): a loop nest over the first
        output's axes, each element the ufunc of the inputs' elements (an
        input array of fewer axes is indexed by the last ones, a number is
        used as it is)."""
        outputs = [a.id for a in e.args[ufunc.nin:]]
        shaped = self.complex_arrays[outputs[0]][0] if outputs[0] in self.complex_arrays else outputs[0]
        ndim = self.ndim_of(shaped)
        indices = [self.fresh("i") for _ in range(ndim)]
        self.bound |= set(indices)

        def element(arg):
            if not self.is_array_name(arg):
                return arg
            dims = self.ndim_of(self.complex_arrays.get(arg.id, (arg.id,))[0])
            items = [ast.Name(i, ast.Load()) for i in indices[ndim - dims:]]
            return ast.Subscript(arg, ast.Tuple(items, ast.Load()) if dims != 1 else items[0],
                                 ast.Load())

        call = ast.Call(e.func, [element(a) for a in e.args[:ufunc.nin]], [])
        targets = [element(a) for a in e.args[ufunc.nin:]]
        for target in targets:
            target.ctx = ast.Store()
        body = [ast.Assign([targets[0] if len(targets) == 1 else ast.Tuple(targets, ast.Store())],
                           call)]
        for d in reversed(range(ndim)):
            length = ast.Subscript(ast.Attribute(ast.Name(shaped, ast.Load()), "shape", ast.Load()),
                                   ast.Constant(d), ast.Load())
            body = [ast.For(ast.Name(indices[d], ast.Store()),
                            ast.Call(ast.Name("range", ast.Load()), [length], []), body, [])]
        loop = body[0]
        ast.copy_location(loop, e)
        ast.fix_missing_locations(loop)
        return self.stmt(loop)

    def is_array_name(self, node):
        return isinstance(node, ast.Name) and (node.id in self.arrays or node.id in self.complex_arrays)

    def warp_call(self, op, args):
        """``("warp", op, mask, value, lane)`` of a warp function's arguments."""
        zero = ("const", 0)
        if op == "activemask":
            return ("warp", op, ("const", 0xFFFFFFFF), zero, zero)
        if op in ("ballot", "all", "any"):
            return ("warp", op, args[0], ("cast", "bool", args[1]), zero)
        return ("warp", op, args[0], args[1], args[2])

    def lane_id(self):
        """The thread's lane: its linear index in the block, modulo 32."""
        index = lambda d: ("cast", "int64", ("special", "threadIdx", d))
        extent = lambda d: ("cast", "int64", ("special", "blockDim", d))
        linear = ("bin", "add", ("bin", "multiply", ("bin", "add", ("bin", "multiply", index("z"),
                  extent("y")), index("y")), extent("x")), index("x"))
        return ("cast", "int32", ("bin", "remainder", linear, ("const", 32)))

    def half_call(self, e, name, args):
        """``cuda.fp16.<name>(args)`` on float16 values."""
        if name in _FP16:
            return ("call", _FP16[name], args)
        if name == "hfma" and len(args) == 3:
            return ("bin", "add", ("bin", "multiply", args[0], args[1]), args[2])
        if name == "hrsqrt" and len(args) == 1:
            return ("call", "reciprocal", [("call", "sqrt", args)])
        if name == "hexp10" and len(args) == 1:
            return ("call", "power", [("cast", "float16", ("const", 10.0)), args[0]])
        self.fail(e, f"cuda.fp16.{name}")

    def dynamic_shared_elements(self, e, dtype):
        """The elements of ``cuda.shared.array(0, dtype)``: the launch's
        dynamic shared memory (``kernel[blocks, threads, stream, bytes]``)
        in ``dtype``. One such array per kernel: Numba's share one memory,
        which separate arrays would not."""
        import numpy as np
        if self.dynamic_shared is None:
            self.fail(e, "cuda.shared.array(0, …) without the launch's dynamic shared memory "
                         "(launch as kernel[blocks, threads, stream, bytes])")
        if self.dynamic_arrays:
            self.fail(e, "a second dynamic shared array (Numba's share one memory; use one array)")
        self.dynamic_arrays.append(dtype)
        return self.dynamic_shared // np.dtype(dtype).itemsize

    def block_vote(self, kind, predicate):
        """``cuda.syncthreads_count/and/or(p)``: a barrier that also counts
        the block's threads whose ``p`` holds, in a shared counter of the
        call site's own (reset by the block's first thread, a barrier,
        atomic increments, a barrier, every thread reads it, a barrier so
        that no later reset overtakes a read)."""
        counter, value = self.fresh("votes"), self.fresh("vote")
        thread = lambda d: ("special", "threadIdx", d)
        first = ("bin", "logical_and", ("bin", "equal", thread("x"), ("const", 0)),
                 ("bin", "logical_and", ("bin", "equal", thread("y"), ("const", 0)),
                  ("bin", "equal", thread("z"), ("const", 0))))
        zero = ("const", 0)
        statements = [
            ("declare_array", counter, ("shared_array", "int32", [1])),
            ("if", first, [("store", counter, [zero], zero)], []),
            ("expr", ("sync",)),
            ("if", ("cast", "bool", predicate),
             [("expr", ("atomic", "add", counter, [zero], [("const", 1)]))], []),
            ("expr", ("sync",)),
            ("assign", value, ("load", counter, [zero])),
            ("expr", ("sync",)),
        ]
        count = ("var", value)
        if kind == "syncthreads_and":
            size = ("bin", "multiply", ("special", "blockDim", "x"),
                    ("bin", "multiply", ("special", "blockDim", "y"), ("special", "blockDim", "z")))
            count = ("cast", "int32", ("bin", "equal", count, ("cast", "int32", size)))
        elif kind == "syncthreads_or":
            count = ("cast", "int32", ("bin", "greater", count, zero))
        return ("let", statements, count)

    def cast_dtype(self, func):
        """The dtype a call of ``func`` converts to: a Numba type
        (``float32(x)``) or NumPy's (``np.int64(x)``); None for other calls."""
        import numpy as np
        if isinstance(func, ast.Name):
            value = self.env.get(func.id)
            is_type = getattr(value, "dtype", None) is not None and hasattr(value, "name")
            if not (is_type or (isinstance(value, type) and issubclass(value, np.generic))):
                return None
        elif not (isinstance(func, ast.Attribute) and func.attr in _NUMPY_DTYPES):
            return None
        try:
            return _dtype_name(func, self.env)
        except (CompileError, TypeError):
            return None
