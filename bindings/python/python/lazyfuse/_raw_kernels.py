"""CuPy's kernel interfaces over lazyfuse: ``RawKernel`` and ``RawModule``
(CUDA C source), ``ElementwiseKernel`` and ``ReductionKernel`` (C
snippets). The C is translated (``_c_translate``) into lazyfuse's kernel
dialect, so each runs on every backend — the CPU and the simulator as
well as a GPU — and an ``ElementwiseKernel`` that reads elements only
becomes a lazy ufunc, fused with the element-wise work around it.

Arrays are lazyfuse arrays (a kernel's writes re-bind them, as a Numba
kernel's do) or NumPy arrays (copied in and, where written, back). A
pointer parameter receives its array flattened, as CuPy passes a raw
pointer to the first element; its dtype must be the pointer's."""

import re

import numpy as np

from . import _c_combine, _c_lex, _c_parse, _c_translate, _c_tree, _native, _rounds
from ._array import Array, _store
from ._c_tree import Pointer
from ._contexts import current_context
from ._creation import asarray, full, zeros
from ._joins import concatenate
from ._kernel_args import In
from ._registry import FUNCTIONS
from .errors import ArgumentError, CompileError


def _defines(options):
    """The ``-D NAME[=VALUE]`` of compiler options; the others (``-std=…``,
    ``--use_fast_math``…) change nothing lazyfuse does."""
    defines, options = {}, list(options or ())
    for k, option in enumerate(options):
        text = option[2:] if option.startswith("-D") else None
        if option == "-D" and k + 1 < len(options):
            text = options[k + 1]
        if text:
            name, _, value = text.partition("=")
            defines[name.strip()] = value.strip() or "1"
    return defines


class RawModule:
    """CuPy's ``RawModule``: ``RawModule(code=source).get_function(name)``
    gives a ``RawKernel`` of each ``__global__`` function."""

    def __init__(self, code=None, *, path=None, options=(), backend="nvrtc",
                 translate_cucomplex=False, enable_cooperative_groups=False,
                 name_expressions=None, jitify=False):
        if (code is None) == (path is None):
            raise TypeError("RawModule: give one of code= and path=")
        if path is not None:
            with open(path, encoding="utf-8") as f:
                code = f.read()
        self.code, self.options = code, tuple(options or ())
        self.name_expressions = list(name_expressions or ())
        self._kernels = {}
        self._translate()

    def _translate(self):
        """Reads the source (with the template instances named so far).
        Outside the subset lazyfuse translates, the source runs as written
        on the cuda backend only (NVRTC), and elsewhere a launch raises the
        translation's error, which names the construct and line."""
        try:
            self._unit = _c_translate.Unit(self.code, defines=_defines(self.options),
                                           expressions=self.name_expressions)
            self._untranslated = None
        except CompileError as error:
            self._unit, self._untranslated = None, error
        self._env = None

    def _namespace(self):
        if self._env is None:
            self._env = self._unit.namespace()
        return self._env

    def get_function(self, name):
        """The kernel ``name``: a ``__global__`` function of the source, or
        an instance of a template (``"f<float, 4>"``, as in CuPy's
        ``name_expressions``; one not named there is read now)."""
        if self._unit is not None and "<" in name and name not in self._unit.instances:
            # Read with the new instance; the module stays as it was when
            # the expression names no instance this source can make.
            unit = _c_translate.Unit(self.code, defines=_defines(self.options),
                                     expressions=self.name_expressions + [name])
            self.name_expressions.append(name)
            self._unit, self._env = unit, None
        if self._unit is None:
            if name not in self._kernels:
                self._kernels[name] = SourceKernel(self, name)
            return self._kernels[name]
        function = self._unit.functions.get(self._unit.instances.get(name, name))
        if function is None or function.kind != "__global__":
            kernels = sorted(n for n, f in self._unit.functions.items() if f.kind == "__global__")
            raise AttributeError(f"RawModule: no __global__ function '{name}' "
                                 f"(the source has {', '.join(kernels) or 'none'})")
        if name not in self._kernels:
            self._kernels[name] = RawKernel._of(self, function)
        return self._kernels[name]

    def get_global(self, name):
        raise NotImplementedError(
            "RawModule.get_global: lazyfuse reads __constant__ arrays with their values "
            "from the source; pass data that changes as kernel arguments")


class RawKernel:
    """CuPy's ``RawKernel(code, name)``: ``kernel(grid, block, args,
    shared_mem=0)`` launches the ``__global__`` function ``name`` of the
    CUDA C ``code`` on the current context's backend."""

    def __new__(cls, code, name, options=(), backend="nvrtc", *, translate_cucomplex=False,
                enable_cooperative_groups=False, jitify=False):
        # The module's kernel: translated, or (outside the subset) a
        # SourceKernel, which runs the source as written on cuda.
        return RawModule(code=code, options=options).get_function(name)

    @classmethod
    def _of(cls, module, function):
        kernel = object.__new__(cls)
        kernel.name, kernel.code, kernel.options = function.name, module.code, module.options
        kernel._module, kernel._function, kernel._dispatcher = module, function, None
        return kernel

    @property
    def attributes(self):
        """CuPy's kernel attributes that have a meaning here."""
        return {"max_threads_per_block": 1024, "num_regs": 0, "shared_size_bytes": 0}

    def _kernel(self):
        if self._dispatcher is None:
            from . import cuda
            env = self._module._namespace()
            self._dispatcher = cuda.jit(_c_translate.signature(self._function))(env[self.name])
        return self._dispatcher

    def __call__(self, grid, block, args, *, shared_mem=0, stream=None,
                 enable_cooperative_groups=False):
        if not isinstance(args, (tuple, list)):
            raise TypeError(f"RawKernel '{self.name}': args must be a tuple of arguments")
        launch(self.name, self._function, self._kernel(), grid, block, list(args), shared_mem)


class SourceKernel:
    """A ``__global__`` function of CUDA C outside the subset lazyfuse
    translates: launched as written (compiled by NVRTC) on the ``cuda``
    backend; elsewhere a launch raises the translation's ``CompileError``.
    Called as a ``RawKernel`` is."""

    def __init__(self, module, name):
        self.name, self.code, self.options = name, module.code, module.options
        self._error = module._untranslated
        params = _c_parse.kernel_parameters(module.code, name, defines=_defines(module.options))
        if params is None:
            raise AttributeError(f"RawModule: no __global__ function '{name}' in the source")
        self._params = params
        spec = [(t.element, not t.const) if isinstance(t, Pointer) else (t, None) for t, _ in params]
        self._source = _native.raw_source(name, module.code, spec)

    def compile(self, arch="sm_80"):
        """Compiles the source with NVRTC for ``arch`` (no GPU needed)."""
        self._source.compile(arch)

    def __call__(self, grid, block, args, *, shared_mem=0, stream=None,
                 enable_cooperative_groups=False):
        from ._kernel_args import _launch_dims
        lazy = next((a for a in args if isinstance(a, Array)), None)
        backend = lazy._a.backend if lazy is not None else current_context().backend
        if backend != "cuda":
            raise CompileError(f"{self._error} — outside the CUDA C lazyfuse translates, kernel "
                               f"'{self.name}' runs as written on the cuda backend only, not on "
                               f"'{backend}'")
        if shared_mem:
            raise ArgumentError(f"kernel '{self.name}': dynamic shared memory for CUDA C outside "
                                "the subset lazyfuse translates is not supported yet")
        if len(args) != len(self._params):
            raise TypeError(f"kernel '{self.name}' takes {len(self._params)} arguments, got {len(args)}")
        values, written = [], []
        for (ctype, param), arg in zip(self._params, args):
            if not isinstance(ctype, Pointer):
                values.append(np.asarray(arg).astype(ctype).item())
                continue
            original = arg.value if isinstance(arg, In) else arg
            if hasattr(original, "as_array"):  # PyCUDA's memory, typed by the parameter
                original = original.as_array(ctype.element, f"kernel '{self.name}': '{param}'")
            if np.dtype(original.dtype) != np.dtype(ctype.element):
                raise ArgumentError(f"kernel '{self.name}': '{param}' is a {ctype.element}*, got "
                                    f"an array of {np.dtype(original.dtype).name}")
            flat = original.reshape(-1)
            values.append((flat if isinstance(flat, Array) else asarray(flat))._a)
            if not ctype.const:  # one result per pointer not to const, in order
                read_only = isinstance(arg, In) and not arg.copy_back
                written.append(None if read_only else flat)
        results = self._source.launch(_launch_dims("griddim", grid), _launch_dims("blockdim", block),
                                      values)
        for flat, result in zip(written, results):
            if flat is None:
                continue
            if isinstance(flat, Array):
                flat._rebind(result)
            else:
                Array(result).copy_to_host(flat)


def launch(name, function, dispatcher, grid, block, args, shared_mem=0):
    """Launches a translated ``__global__`` function with CuPy's (and
    PyCUDA's) arguments: arrays for its pointers, flattened (a lazyfuse
    array through a view, which its writes re-bind; a NumPy array through
    a view, into which they are copied), numbers for its scalars."""
    if len(args) != len(function.params):
        raise TypeError(f"kernel '{name}' takes {len(function.params)} arguments, got {len(args)}")
    passed = []
    for (ctype, param), arg in zip(function.params, args):
        if not isinstance(ctype, Pointer):
            if isinstance(arg, (Array, np.ndarray)) and np.ndim(arg) != 0:
                raise ArgumentError(f"kernel '{name}': '{param}' is a {ctype}, got an array")
            passed.append(np.asarray(arg).item() if isinstance(arg, np.ndarray) else arg)
            continue
        wrapper = type(arg) if isinstance(arg, In) else None
        value = arg.value if wrapper else arg
        if hasattr(value, "as_array"):  # PyCUDA's memory, typed by the parameter
            value = value.as_array(ctype.element, f"kernel '{name}': '{param}'")
        if not isinstance(value, (Array, np.ndarray)):
            raise ArgumentError(f"kernel '{name}': '{param}' is a {ctype.element}*, "
                                f"got {type(value).__name__} (expected an array)")
        if np.dtype(value.dtype) != np.dtype(ctype.element):
            raise ArgumentError(
                f"kernel '{name}': '{param}' is a {ctype.element}*, got an array of "
                f"{np.dtype(value.dtype).name} (its elements would be read as another type)")
        if isinstance(value, np.ndarray) and not value.flags.c_contiguous:
            raise ArgumentError(f"kernel '{name}': '{param}' is not C-contiguous "
                                "(a pointer reads elements one after another)")
        flat = value if value.ndim == 1 else value.reshape(-1)
        passed.append(wrapper(flat) if wrapper else flat)
    shared = [] if not shared_mem else [0, int(shared_mem)]
    dispatcher[(grid, block, *shared)](*passed)


# ------------------------------------------------------------ C snippets

_PARAM = re.compile(r"^\s*(raw\s+)?([A-Za-z_]\w*(?:\s+[A-Za-z_]\w*)*?)\s*\b([A-Za-z_]\w*)\s*$")


def _params(text, what):
    """CuPy's parameter list ``"raw T x, float32 y"``: ``[(raw, type, name)]``."""
    params = []
    for part in (p for p in text.split(",") if p.strip()):
        m = _PARAM.match(part)
        if m is None:
            raise CompileError(f"{what}: cannot read the parameter {part.strip()!r} "
                               "(expected 'type name' or 'raw type name')")
        params.append((bool(m.group(1)), m.group(2).strip(), m.group(3)))
    return params


def _is_placeholder(type_name):
    return type_name not in _c_tree.SCALARS


def _bind(params, args, what):
    """The dtype of each type placeholder (``T``) from the arguments."""
    types = {}
    for (_, type_name, name), arg in zip(params, args):
        if not _is_placeholder(type_name) or arg is None:
            continue
        dtype = _dtype_of(arg)
        if types.setdefault(type_name, dtype) != dtype:
            raise TypeError(f"{what}: '{name}' makes {type_name} {dtype}, but an earlier "
                            f"argument made it {types[type_name]}")
    return types


def _dtype_of(arg):
    if hasattr(arg, "dtype"):
        return np.dtype(arg.dtype).name
    if isinstance(arg, bool):
        return "bool"
    return "int64" if isinstance(arg, int) else "float64"


def _resolve(type_name, types, what):
    if not _is_placeholder(type_name):
        return _c_tree.SCALARS[type_name]
    if type_name not in types:
        raise TypeError(f"{what}: the type {type_name} is not given by any argument")
    return types[type_name]


def _mentions(code, *names):
    return any(t.kind == "id" and t.text in names for t in _c_lex.tokens(code))


class ElementwiseKernel:
    """CuPy's ``ElementwiseKernel(in_params, out_params, operation, name)``:
    ``operation`` (C statements) runs once per element of the broadcast
    inputs, writing the outputs. Type placeholders (``T x``) take the
    arguments' dtypes; ``raw`` parameters are whole arrays indexed by the
    element's index ``i`` (``_ind.size()`` is the number of elements).

    Without ``raw`` parameters and ``i``, a single-output kernel is a lazy
    ufunc: its calls fuse with the element-wise work around them.
    Otherwise each call launches a kernel over the elements."""

    def __init__(self, in_params, out_params, operation, name="kernel", reduce_dims=True,
                 preamble="", no_return=False, return_tuple=False, loop_prep="",
                 after_loop="", options=()):
        self.name, self.operation, self.preamble = name, operation, preamble
        self.in_params = _params(in_params, f"ElementwiseKernel '{name}'")
        self.out_params = _params(out_params, f"ElementwiseKernel '{name}'")
        if not self.out_params:
            raise CompileError(f"ElementwiseKernel '{name}': no output parameter")
        self.no_return, self.return_tuple = no_return, return_tuple
        self._options = tuple(options or ())
        self._made = {}
        self.nin, self.nout = len(self.in_params), len(self.out_params)
        self.nargs = self.nin + self.nout

    def _fusable(self):
        return (self.nout == 1 and not any(raw for raw, _, _ in self.in_params + self.out_params)
                and not _mentions(self.operation, "i", "_ind"))

    def __call__(self, *args, size=None, stream=None, block_size=None):
        what = f"ElementwiseKernel '{self.name}'"
        if len(args) not in (self.nin, self.nargs):
            raise TypeError(f"{what} takes {self.nin} inputs (and optionally {self.nout} "
                            f"outputs), got {len(args)} arguments")
        outs = list(args[self.nin:]) or [None] * self.nout
        ins = list(args[:self.nin])
        types = _bind(self.in_params + self.out_params, ins + outs, what)
        in_types = [_resolve(t, types, what) for _, t, _ in self.in_params]
        out_types = [_resolve(t, types, what) for _, t, _ in self.out_params]
        arrays = [a for a, (raw, _, _) in zip(ins + outs, self.in_params + self.out_params)
                  if a is not None and not raw and isinstance(a, (Array, np.ndarray))]
        shape = np.broadcast_shapes(*(a.shape for a in arrays)) if arrays else ()
        if size is not None and not arrays:
            shape = (int(size),)
        if self._fusable():
            results = [self._fused(in_types, out_types, ins, outs[0], types)]
        else:
            results = self._launched(in_types, out_types, ins, outs, shape, types)
        if self.no_return:
            return None
        return tuple(results) if (self.nout > 1 or self.return_tuple) else results[0]

    def _fused(self, in_types, out_types, ins, out, types):
        from . import _numba
        (_, _, out_name), out_type = self.out_params[0], out_types[0]
        key = ("fused", tuple(in_types), out_type)
        if key not in self._made:
            params = ", ".join(f"{t} {n}" for t, (_, _, n) in zip(in_types, self.in_params))
            source = (f"{self.preamble}\n__device__ {out_type} _lf_element({params}) {{\n"
                      f"{out_type} {out_name} = 0;\n{self.operation};\nreturn {out_name};\n}}\n")
            env = _c_translate.Unit(source, types, _defines(self._options)).namespace()
            signature = f"{out_type}({', '.join(in_types)})"
            function = env["_lf_element"].function
            function.__name__ = self.name
            self._made[key] = _numba.vectorize([signature])(function)
        return self._made[key](*ins, out=out) if out is not None else self._made[key](*ins)

    def _launched(self, in_types, out_types, ins, outs, shape, types):
        """Launches the operation as a kernel over the elements (one thread
        each, in a grid-stride loop); returns the outputs."""
        scalars = tuple(_is_scalar(a) for a in ins)
        key = ("kernel", tuple(in_types), tuple(out_types), scalars)
        params = self.in_params + self.out_params
        if key not in self._made:
            self._made[key] = self._kernel_source(in_types + out_types, ins, types)
        function, dispatcher = self._made[key]
        n = int(np.prod(shape)) if shape else 1
        outs = [zeros(shape, dtype=t) if o is None else o for o, t in zip(outs, out_types)]
        values = []
        for (raw, _, name), arg, t in zip(params, ins + outs, in_types + out_types):
            if raw or _is_scalar(arg):
                values.append(arg)
                continue
            whole = arg if tuple(arg.shape) == tuple(shape) else _broadcast(arg, shape)
            values.append(whole)
        threads = 128
        launch(self.name, function, dispatcher, max(1, -(-n // threads)), threads, values + [n])
        return outs

    def _kernel_source(self, param_types, ins, types):
        from . import cuda
        params = self.in_params + self.out_params
        heads, loads, stores = [], [], []
        for (raw, _, name), t, k in zip(params, param_types, range(len(params))):
            is_input_scalar = k < self.nin and not raw and _is_scalar(ins[k])
            if raw:
                heads.append(f"{t}* {name}")
            elif is_input_scalar:
                heads.append(f"{t} {name}")
            else:
                heads.append(f"{t}* _lf_p{k}")
                loads.append(f"{t} {name} = _lf_p{k}[i];")
                if k >= self.nin:
                    stores.append(f"_lf_p{k}[i] = {name};")
        operation = re.sub(r"\b_ind\s*\.\s*size\s*\(\s*\)", "_lf_n", self.operation)
        source = (f"{self.preamble}\n__global__ void {self.name}({', '.join(heads)}, long long _lf_n) {{\n"
                  "for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < _lf_n;"
                  " i += (long long)blockDim.x * gridDim.x) {\n"
                  + "\n".join(loads) + f"\n{{ {operation}; }}\n" + "\n".join(stores) + "\n}\n}\n")
        unit = _c_translate.Unit(source, types, _defines(self._options))
        env = unit.namespace()
        function = unit.functions[self.name]
        return function, cuda.jit(_c_translate.signature(function))(env[self.name])


def _is_scalar(arg):
    """A number (a NumPy scalar or 0-d NumPy array too), passed by value."""
    return not isinstance(arg, Array) and np.ndim(arg) == 0


def _broadcast(arg, shape):
    if isinstance(arg, np.ndarray):
        return np.ascontiguousarray(np.broadcast_to(arg, shape))
    return FUNCTIONS["broadcast_to"](arg, shape)  # (complex arrays too: the namespace's)


# ------------------------------------------------------------- reductions

_REDUCTIONS = [
    ({"a+b", "b+a"}, "sum"), ({"a*b", "b*a"}, "prod"),
    ({"max(a,b)", "max(b,a)", "fmax(a,b)", "fmaxf(a,b)", "a>b?a:b", "(a>b)?a:b", "a<b?b:a",
      "(a<b)?b:a", "a>=b?a:b", "(a>=b)?a:b"}, "max"),
    ({"min(a,b)", "min(b,a)", "fmin(a,b)", "fminf(a,b)", "a<b?a:b", "(a<b)?a:b", "a>b?b:a",
      "(a>b)?b:a", "a<=b?a:b", "(a<=b)?a:b"}, "min"),
    ({"a||b", "b||a"}, "any"), ({"a&&b", "b&&a"}, "all"),
]


def _reduction(expr):
    """lazyfuse's own reduction that ``expr`` (of ``a`` and ``b``) is, or
    None for another expression (a ``_CustomReduction``)."""
    text = re.sub(r"\s+", "", expr)
    for forms, kind in _REDUCTIONS:
        if text in forms:
            return kind
    return None


class _CustomReduction:
    """A reduce expression other than lazyfuse's own reductions, for one
    reduce type: where the expression language says what its C does in
    that type (``_c_combine``) and a neutral element is found to pad
    with, one native custom reduction of it per call, as ``cuda.reduce``
    runs its function (one launch over any axes); else ``log2 n`` rounds of pairs combined by it as a lazy ufunc.
    Either way the identity joins the elements once, after them, unless
    it is itself the neutral element."""

    def __init__(self, kernel, dtype, types, identity):
        self.dtype = dtype
        with np.errstate(all="ignore"):  # converted as C converts it
            self.identity = np.array(identity).astype(dtype)[()]
        self.reducer, self.join = self._native(kernel, types)
        if self.reducer is None:
            self.combine = ElementwiseKernel(
                f"{dtype} a, {dtype} b", f"{dtype} _lf_c", f"_lf_c = ({kernel.reduce_expr})",
                kernel.name, preamble=_typedefs(types) + kernel.preamble, options=kernel.options)

    def _native(self, kernel, types):
        """``(reducer, join)``: the native reducer of the expression, and
        the expression as a ufunc where the identity must join its result
        (being no neutral element; else None); ``(None, None)`` where it
        cannot run as one."""
        source = (f"{kernel.preamble}\n__device__ {self.dtype} _lf_combine({self.dtype} a, "
                  f"{self.dtype} b) {{ return ({kernel.reduce_expr}); }}\n")
        try:
            env = _c_translate.Unit(source, types, _defines(kernel.options)).namespace()
        except CompileError:  # the rounds translate it again, and report what fails
            return None, None
        expr = _c_combine.expression(env, "_lf_combine", self.dtype)
        if expr is None:
            return None, None
        from . import cuda
        # The reduction pads with a neutral element, which C's semantics
        # (the translated function on NumPy scalars) must keep.
        pad = cuda._neutral_element(env["_lf_combine"], self.dtype, first=[self.identity])
        if pad is None:
            return None, None
        pad = np.dtype(self.dtype).type(pad).item()
        if float(pad) != pad:  # the native reducer takes it as a double
            return None, None
        reducer = _native.Reducer(kernel.name, expr, "a", "b", float(pad))
        if pad == self.identity.item():
            return reducer, None
        signature = f"{self.dtype}({self.dtype}, {self.dtype})"
        return reducer, _native.Ufunc(kernel.name, expr, ["a", "b"], [signature])

    def __call__(self, x, axes, keepdims):
        """``x`` reduced over ``axes`` (distinct, non-negative), the
        identity joined."""
        if self.reducer is None:
            reduced = _pairwise(self.combine, x, axes, keepdims)
            return self.combine(full(reduced.shape, self.identity, dtype=self.dtype), reduced)
        reduced = Array(self.reducer.reduce(x._a, tuple(axes)))
        if keepdims:
            reduced = reduced.reshape(tuple(1 if a in axes else n for a, n in enumerate(x.shape)))
        if self.join is None:
            return reduced
        identity = full(reduced.shape, self.identity, dtype=self.dtype)
        return Array(self.join.call([identity._a, reduced._a]))


def _pairwise(combine, x, axes, keepdims):
    """``x`` reduced over ``axes`` by ``combine`` (an associative function of
    two arrays): the even and odd elements along the axis combined, in
    ``log2 n`` rounds, lazily (the rounds fuse where the combine is a lazy
    ufunc)."""
    for axis in sorted(axes, reverse=True):
        (x,) = _rounds.pairwise((FUNCTIONS["moveaxis"](x, axis, -1),), lambda a, b: (combine(a[0], b[0]),),
                                lambda arrays: concatenate(arrays, axis=-1))
        if keepdims:
            x = FUNCTIONS["expand_dims"](x, axis)
    return x


class ReductionKernel:
    """CuPy's ``ReductionKernel(in_params, out_params, map_expr,
    reduce_expr, post_map_expr, identity, name)``: ``map_expr`` per
    element (a lazy ufunc), the reduction ``reduce_expr`` of ``a`` and
    ``b`` over ``axis`` (all axes by default) started from ``identity``,
    then ``post_map_expr`` of the result ``a``.

    A sum, product, maximum, minimum, ``||`` or ``&&`` is lazyfuse's own
    reduction. Any other associative (and commutative) expression —
    ``a * b + a + b``, ``fabsf(a) > fabsf(b) ? a : b``, a ``__device__``
    function of the preamble — runs as one native custom reduction of it
    (as ``cuda.reduce``'s functions do) where lazyfuse's expression
    language computes what its C computes in the reduce type and one of
    the identity, 0, 1 and the type's extremes is its neutral element:
    one launch over any axes, into which map and post-map expressions that are lazy
    ufuncs fuse. Otherwise — a conversion to another type inside it
    (``a + b + 0.5`` of floats computes in double), a function the
    language lacks, no neutral element — it runs as ``log2 n`` rounds of
    pairs combined by it as a lazy ufunc."""

    def __init__(self, in_params, out_params, map_expr, reduce_expr, post_map_expr, identity,
                 name="reduce_kernel", reduce_type=None, reduce_dims=True, preamble="",
                 options=()):
        self.name, self.identity = name, identity
        self.in_params = _params(in_params, f"ReductionKernel '{name}'")
        self.out_params = _params(out_params, f"ReductionKernel '{name}'")
        if len(self.out_params) != 1:
            raise CompileError(f"ReductionKernel '{name}': one output parameter is read")
        self.kind, self.reduce_expr = _reduction(reduce_expr), reduce_expr
        self.reduce_type = reduce_type or self.out_params[0][1]
        self.map_expr, self.post_map_expr = map_expr, post_map_expr
        self.preamble, self.options = preamble, tuple(options or ())
        self._made = {}

    def __call__(self, *args, out=None, axis=None, keepdims=False, stream=None):
        what = f"ReductionKernel '{self.name}'"
        if len(args) != len(self.in_params):
            raise TypeError(f"{what} takes {len(self.in_params)} inputs, got {len(args)}")
        types = _bind(self.in_params + [self.out_params[0]], list(args) + [out], what)
        reduce_type = _resolve(self.reduce_type, types, what)
        key = tuple(types.items())
        if key not in self._made:
            mapping = ElementwiseKernel(
                ", ".join(f"{'raw ' if r else ''}{t} {n}" for r, t, n in self.in_params),
                f"{reduce_type} _lf_a", f"_lf_a = ({self.map_expr})", self.name,
                preamble=self.preamble, options=self.options)
            out_type = _resolve(self.out_params[0][1], types, what)
            post = ElementwiseKernel(f"{reduce_type} a", f"{out_type} {self.out_params[0][2]}",
                                     self.post_map_expr, self.name,
                                     preamble=_typedefs(types) + self.preamble, options=self.options)
            identity = _identity_value(self.identity, reduce_type, types)
            custom = None if self.kind else _CustomReduction(self, reduce_type, types, identity)
            self._made[key] = (mapping, post, custom, identity)
        mapping, post, custom, identity = self._made[key]
        args = [a if isinstance(a, Array) or not isinstance(a, np.ndarray) else asarray(a) for a in args]
        mapped = mapping(*args)
        if not isinstance(mapped, Array):
            mapped = asarray(mapped)
        axes = tuple(range(mapped.ndim)) if axis is None else (
            (axis,) if isinstance(axis, int) else tuple(axis))
        axes = tuple(a % max(mapped.ndim, 1) for a in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{what}: duplicate value in 'axis'")
        if any(mapped.shape[a] == 0 for a in axes):
            shape = tuple(1 if a in axes else n for a, n in enumerate(mapped.shape)
                          if keepdims or a not in axes)
            reduced = full(shape, identity, dtype=reduce_type)
        elif custom is not None:
            reduced = custom(mapped.astype(reduce_type), axes, keepdims)
        else:
            reduced = getattr(mapped, self.kind)(axis=axes, keepdims=keepdims)
            reduced = _with_identity(self.kind, reduced, identity, reduce_type)
        result = post(reduced.astype(reduce_type)) if self.post_map_expr else reduced
        if out is None:
            return result
        return _store(result, out, what)


def _typedefs(types):
    """C typedefs of the type placeholders (``T``), which CuPy declares
    ahead of a reduction's preamble: for the kernels whose own parameters
    do not bind them (the post-map, the combine of the rounds)."""
    return "".join(f"typedef {dtype} {name};\n" for name, dtype in types.items())


def _identity_value(text, dtype, types):
    """The number an identity's C text (``"0"``, ``"-INFINITY"``) is."""
    if text is None or str(text).strip() == "":
        return 0
    unit = _c_translate.Unit(f"__device__ {dtype} _lf_identity() {{ return {text}; }}",
                             types=types)
    line = unit.text.splitlines()[1].strip()
    import math
    return eval(line[len("return "):], {"np": np, "math": math})  # our own translated text


def _with_identity(kind, reduced, identity, dtype):
    """``reduce_expr(identity, reduced)``: the identity joins the elements."""
    natural = {"sum": 0, "prod": 1, "any": False, "all": True}
    if kind in natural and identity == natural[kind]:
        return reduced
    if kind == "sum":
        return reduced + np.asarray(identity, dtype)
    if kind == "prod":
        return reduced * np.asarray(identity, dtype)
    if kind == "max":
        return FUNCTIONS["maximum"](reduced, np.asarray(identity, dtype)) if not _lowest(identity, dtype) else reduced
    if kind == "min":
        return FUNCTIONS["minimum"](reduced, np.asarray(identity, dtype)) if not _highest(identity, dtype) else reduced
    if kind == "any":
        return reduced | bool(identity)
    return reduced & bool(identity)


def _lowest(value, dtype):
    dtype = np.dtype(dtype)
    return value == (-np.inf if dtype.kind == "f" else np.iinfo(dtype).min if dtype.kind in "iu" else False)


def _highest(value, dtype):
    dtype = np.dtype(dtype)
    return value == (np.inf if dtype.kind == "f" else np.iinfo(dtype).max if dtype.kind in "iu" else True)
