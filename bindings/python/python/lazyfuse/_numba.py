"""Numba's vocabulary over lazyfuse: type objects, ``@vectorize``,
``@guvectorize`` and ``@jit``/``@njit`` for scalar functions.

``@vectorize(["float32(float32, float32)"], target="cuda")`` traces the
function once into a lazy, fused ufunc (``lazyfuse._trace``). Calls return
lazy arrays (``np.asarray`` computes them); NumPy inputs are copied into the
target's context; ``out=`` re-binds a lazyfuse array or fills a NumPy one.
``target="cuda"`` uses a GPU when there is one and otherwise the default
context, so the tutorials run anywhere.
"""

import numbers

import numpy as np

from . import _complex, _complex_calls, _native, _registry, _sources, _trace
from ._array import Array, _store
from ._contexts import Context, current_context
from ._creation import asarray
from ._signatures import _signature_text
from .errors import CompileError


class _Type:
    """A dtype as Numba names it; calling it makes a signature:
    ``float32(float32, float32)``."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __call__(self, *args):
        # A number converts, as Numba's types do in Python (`int16(x)`);
        # types make a signature (`float32(float32, float32)`).
        if len(args) == 1 and isinstance(args[0], (bool, int, float, np.generic)):
            return np.dtype(self.name).type(args[0])
        return Signature(self, args)

    def __repr__(self):
        return self.name

    def __eq__(self, other):
        # Anything else (a NumPy dtype) compares by its own rules: NumPy's
        # dtype equals lazyfuse.float64 through its `dtype` attribute.
        if type(other) is not type(self):
            return NotImplemented
        return other.name == self.name

    def __hash__(self):
        return hash(self.name)

    @property
    def underlying_float(self):
        """The real type of a complex one's parts (Numba's attribute)."""
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    @property
    def dtype(self):
        """NumPy's dtype of the name: what makes ``np.dtype(lf.float32)``,
        ``lf.zeros(3, dtype=lf.float32)`` and ``np.finfo(lf.float32)`` work
        (NumPy reads a ``dtype`` attribute)."""
        return np.dtype(self.name)


class Record(_Type):
    """Numba's type of a record of a structured dtype (``from_dtype`` of
    it): named as Numba names it, its ``dtype`` the structured dtype."""

    __slots__ = ("_dtype",)

    def __init__(self, dtype):
        self._dtype = np.dtype(dtype)
        fields = ";".join(f"{n}[type={self._dtype.fields[n][0]};offset={self._dtype.fields[n][1]}]"
                          for n in self._dtype.names)
        super().__init__(f"Record({fields};{self._dtype.itemsize};{self._dtype.isalignedstruct})")

    @property
    def dtype(self):
        """The structured dtype."""
        return self._dtype


float16, float32, float64 = _Type("float16"), _Type("float32"), _Type("float64")
int8, int16, int32, int64 = _Type("int8"), _Type("int16"), _Type("int32"), _Type("int64")
uint8, uint16, uint32, uint64 = _Type("uint8"), _Type("uint16"), _Type("uint32"), _Type("uint64")
complex64, complex128 = _Type("complex64"), _Type("complex128")
bool_ = boolean = _Type("bool")
intp, uintp = _Type("intp"), _Type("uintp")
longlong, ulonglong = int64, uint64
#: Numba's sets of number types.
signed_domain = frozenset({int8, int16, int32, int64})
unsigned_domain = frozenset({uint8, uint16, uint32, uint64})
real_domain = frozenset({float32, float64})
complex_domain = frozenset({complex64, complex128})
#: The result type of kernels and gufuncs: ``void(float32[:], intp[:])``.
void = _Type("void")
# Numba's short names.
b1, f2, f4, f8, c8, c16 = bool_, float16, float32, float64, complex64, complex128
i1, i2, i4, i8, u1, u2, u4, u8 = int8, int16, int32, int64, uint8, uint16, uint32, uint64

_TARGETS = ("cpu", "parallel", "cuda", "sim", "reference")

#: The package's names the hot calls use, once the package has imported
#: this module (an import statement in each call cost about 1 µs).
_PACKAGE_NAMES = None


def _package_names():
    """``Array``, ``_store``, ``asarray`` and ``ComplexArray`` of the package."""
    global _PACKAGE_NAMES
    if _PACKAGE_NAMES is None:
        from ._complex import ComplexArray
        _PACKAGE_NAMES = (Array, _store, asarray, ComplexArray)
    return _PACKAGE_NAMES


def _context_for(target):
    if target == "cuda":
        try:
            return Context("cuda")
        except RuntimeError:
            return current_context()
    if target in ("cpu", "parallel"):
        return current_context() if current_context().backend == "cpu" else Context("cpu")
    if target in ("sim", "reference"):
        return Context(target)
    raise ValueError(f"vectorize: unknown target {target!r} (expected one of {', '.join(_TARGETS)})")


class Vectorized:
    """A ufunc made by ``@vectorize``: call it on arrays (lazy)."""

    def __init__(self, function, signatures, target):
        self.__name__ = function.__name__
        self.__doc__ = function.__doc__
        self._target = target
        self._context = None
        what = f"vectorize '{function.__name__}'"
        # Complex arguments: the function called on lazy arrays, or (with
        # signatures, when that cannot follow it) compiled from its source.
        self._complex = _complex_calls.ComplexCalls(function, signatures, what)
        self._function, self._signatures, self._complex_kernel = function, signatures, None
        try:
            expr, names = _trace.expression(function, what)
        except CompileError as untraceable:
            if "complex" in str(untraceable) or _complex_calls.mentions_complex(signatures):
                self.expression = self._ufunc = None
                return
            if not signatures:
                raise CompileError(f"{untraceable} (with signatures, @vectorize compiles such a "
                                   "function from its source instead: loops and statements too)"
                                   ) from None
            # Statements tracing cannot follow (loops...): the source,
            # translated as a kernel, one element per thread.
            self.expression = None
            self._ufunc = _ElementKernel(function, signatures)
            return
        self.expression = expr
        self._ufunc = _native.Ufunc(function.__name__, expr, names, [str(s) for s in signatures])

    def _cx(self):
        if self._context is None:
            self._context = _context_for(self._target)
        return self._context

    def __call__(self, *args, out=None):
        """Applies the ufunc (lazy). NumPy inputs join the context of the
        lazyfuse inputs (or of a lazyfuse ``out=``) when there are any, else
        the target's; ``out=`` (a lazyfuse or NumPy array) takes the result
        as NumPy's does."""
        Array, _store, asarray, ComplexArray = _PACKAGE_NAMES or _package_names()
        lazy = next((a for a in args + (out,) if isinstance(a, Array)), None)
        if self._ufunc is None:
            return self._call_complex(args, out, lazy)
        arrays = [a if isinstance(a, Array) else (
            lazy._like(a) if lazy is not None else asarray(a, context=self._cx())) for a in args]
        for a in arrays:
            if type(a) is ComplexArray:
                return self._call_complex(arrays, out, lazy)
        if (type(out) is Array  # a view writes its array: below, through _store
                and out.shape == np.broadcast_shapes(*(a.shape for a in arrays))):
            self._ufunc.call_into([a._a for a in arrays], out._a)
            return out
        result = Array(self._ufunc.call([a._a for a in arrays]))
        return result if out is None else _store(result, out, f"ufunc '{self.__name__}'")

    def _call_complex(self, args, out, lazy):
        """The call with complex values (see ``_complex_calls``)."""
        Array, _, asarray, ComplexArray = _PACKAGE_NAMES or _package_names()
        anchor = lazy if lazy is not None else next(
            (Array(a._re) for a in args + (out,) if isinstance(a, ComplexArray)), None)

        def lazy_of(value):
            if isinstance(value, (Array, ComplexArray)):
                return value
            return anchor._like(value) if anchor is not None else asarray(value, context=self._cx())

        try:
            result = self._complex.call(args, lazy_of)
        except _complex_calls.Untraceable:
            if not self._signatures:
                raise
            if self._complex_kernel is None:
                self._complex_kernel = _complex_element_kernel(
                    self._function, self._signatures, self._target)
            result = self._complex_kernel(*(lazy_of(a) for a in args))
        return result if out is None else _complex._store(
            result, out, f"ufunc '{self.__name__}'", "same_kind")


def _complex_element_kernel(function, signatures, target):
    """``function`` (a ``@vectorize`` body with complex values that
    tracing cannot follow: a ``while`` loop on them, a branch) as a
    ``@guvectorize`` over ``()`` cores — one element per thread, the body
    inlined as a device function, complex parameters as their parts
    (``_complex_gufuncs``)."""
    import inspect
    from ._functions import DeviceFunction
    count = len(inspect.signature(function).parameters)
    inputs = ", ".join(f"_lf_in{i}" for i in range(count))
    source = f"def _lf_element({inputs}, _lf_out):\n    _lf_out[0] = _lf_f({inputs})\n"
    env = _sources.define(source, f"<lazyfuse vectorize {function.__name__} {id(function):x}>",
                          {"_lf_f": DeviceFunction(function)})
    texts = []
    for signature in signatures:
        result, arguments = _complex_calls._parse(signature, f"vectorize '{function.__name__}'")
        texts.append(f"void({', '.join(str(a) for a in arguments)}, {result}[:])")
    layout = ",".join(["()"] * count) + "->()"
    kernel = GUVectorized(env["_lf_element"], texts, layout, target)
    kernel.__name__ = function.__name__
    return kernel


class _ElementKernel:
    """A ``@vectorize`` function with statements tracing cannot express
    (loops, ``while``…), translated from its source as a gufunc over
    ``()`` cores: one element per thread, with a traced ufunc's ``call``
    and ``call_into``."""

    def __init__(self, function, signatures):
        from . import _jit
        import re
        translator = _jit.Translator(function, [], gufunc=True)
        inputs = [f"_lf_in{i}" for i in range(len(translator.params))]
        body = translator.element_function(inputs, "_lf_out")
        layout = ",".join(["()"] * len(inputs)) + "->()"
        gufunc_signatures = []
        for signature in signatures:
            parts = re.fullmatch(r"\s*(\w+)\s*\((.*)\)\s*", str(signature))
            if parts is None:
                raise CompileError(f"vectorize '{function.__name__}': signature {signature!r} "
                                   "(expected 'result(argument, ...)', as float64(float64, int64))")
            result, arguments = parts.groups()
            gufunc_signatures.append(_signature_text(f"void({arguments}, {result})"))
        self._g = _native.build_gufunc(function.__name__, layout, gufunc_signatures,
                                       inputs + ["_lf_out"], body)

    def call(self, arrays):
        return self._g.call(arrays)[0]

    def call_into(self, arrays, out):
        self._g.call_into(arrays, [out])


def vectorize(signatures=None, target="cpu", **options):
    """Numba's ``@vectorize``: with signatures (``"float32(float32)"`` or
    ``float32(float32)``), or none (typed by NumPy's promotion at each
    call); ``target`` is ``"cpu"``, ``"parallel"``, ``"cuda"`` or ``"sim"``.
    The function is traced into a fused ufunc; with signatures, one that
    tracing cannot express (``while``, loops of data-dependent length) is
    compiled from its source instead, one element per thread."""
    if callable(signatures) and not isinstance(signatures, (_Type, str)):
        return Vectorized(signatures, [], target)
    if isinstance(signatures, str):
        signatures = [signatures]
    signatures = list(signatures or [])
    if target not in _TARGETS:
        raise ValueError(f"vectorize: unknown target {target!r} (expected one of {', '.join(_TARGETS)})")
    return lambda function: Vectorized(function, signatures, target)


class Jitted:
    """A function made by ``@jit``/``@njit``: a scalar function compiled by
    tracing (as ``@vectorize`` without signatures), applied element by
    element to arrays (lazy result) or to numbers (a Python number)."""

    def __init__(self, function, decorator):
        self.__name__ = function.__name__
        self.__doc__ = function.__doc__
        self.py_func = function
        self._decorator = decorator
        self._ufunc = None

    def __call__(self, *args):
        Array = (_PACKAGE_NAMES or _package_names())[0]
        for i, arg in enumerate(args):
            if not isinstance(arg, (numbers.Number, np.generic, np.ndarray, Array)):
                raise CompileError(
                    f"{self._decorator} '{self.__name__}': argument {i} is a {type(arg).__name__}; "
                    "lazyfuse compiles functions of numbers and arrays (applied element by element)"
                )
        if self._ufunc is None:
            self._ufunc = Vectorized(self.py_func, [], "cpu")
        result = self._ufunc(*args)
        if all(isinstance(a, (numbers.Number, np.generic)) for a in args):
            return result.item()
        return result


def jit(function=None, **options):
    """Numba's ``@jit`` (nopython, its default since Numba 0.59) and
    ``@njit``: the function is compiled for numbers and arrays element by
    element; anything it cannot compile raises ``CompileError`` at the
    first call. ``forceobj=True`` keeps the Python function (object mode)."""
    decorator = options.pop("_decorator", "jit")
    if options.get("forceobj"):
        return function if function is not None else (lambda f: f)
    if function is None:
        return lambda f: Jitted(f, decorator)
    return Jitted(function, decorator)


def prange(*args):
    """Numba's ``prange``: ``range`` in Python; in a ``@guvectorize`` body,
    a loop whose iterations may run in parallel."""
    return range(*args)


def njit(function=None, **options):
    """Numba's ``@njit``: ``@jit`` in nopython mode (see :func:`jit`)."""
    options.pop("forceobj", None)
    return jit(function, _decorator="njit", **options)


class Signature(str):
    """``float32(float32, float32)``: the text lazyfuse's parsers read, with
    Numba's ``args`` and ``return_type``."""

    def __new__(cls, return_type, args):
        text = super().__new__(cls, f"{return_type!r}({', '.join(repr(a) for a in args)})")
        text.return_type, text.args = return_type, tuple(args)
        return text


class Tuple(tuple):
    """Numba's type of a tuple of values of the given types
    (``Tuple((float64, int32))``): a tuple of the types."""

    def __new__(cls, types):
        return super().__new__(cls, types)

    def __repr__(self):
        return f"Tuple({', '.join(map(repr, self))})"


class UniTuple(Tuple):
    """Numba's type of a tuple of ``count`` values of one type."""

    def __new__(cls, dtype, count):
        return super().__new__(cls, [dtype] * count)

    @property
    def dtype(self):
        """The type of every element."""
        return self[0]


class ArrayType:
    """An array type as Numba writes it: ``float32[:, :]`` (any layout),
    and as ``numba.types.Array(float32, 2, "C")`` makes it."""

    __slots__ = ("dtype", "ndim", "layout")

    def __init__(self, dtype, ndim, layout="A"):
        self.dtype = dtype if isinstance(dtype, _Type) else _Type(str(dtype))
        self.ndim, self.layout = int(ndim), layout

    def __repr__(self):
        dims = [":"] * self.ndim
        if dims and self.layout in ("C", "F"):
            dims[-1 if self.layout == "C" else 0] = "::1"
        return f"{self.dtype!r}[{', '.join(dims)}]"

    def __eq__(self, other):
        if not isinstance(other, ArrayType):
            return NotImplemented
        return repr(self) == repr(other)

    def __hash__(self):
        return hash(repr(self))


def typeof(value):
    """Numba's type of a NumPy array or number (``numba.typeof``)."""
    if isinstance(value, np.ndarray):
        layout = "C" if value.flags.c_contiguous else "F" if value.flags.f_contiguous else "A"
        return ArrayType(value.dtype.name, value.ndim, layout)
    dtype = np.asarray(value).dtype
    return _Type("bool" if dtype == np.bool_ else dtype.name)


# The translator's `@overload` calls type arguments with it (`_inlining`).
_registry.register(_registry.OPERATIONS, numba_typeof=typeof)


def as_dtype(numba_type):
    """NumPy's dtype of a Numba type (``numpy_support.as_dtype``)."""
    numba_type = numba_type.dtype if isinstance(numba_type, ArrayType) else numba_type
    if isinstance(numba_type, Record):
        return numba_type.dtype
    return np.dtype(numba_type.name)


def _array_type(self, key):
    dims = key if isinstance(key, tuple) else (key,)
    if not all(isinstance(d, slice) for d in dims):
        raise TypeError(f"{self.name}[...] takes slices, as float32[:, :]")
    return ArrayType(self, len(dims))


_Type.__getitem__ = _array_type


class GUVectorized:
    """A generalized ufunc made by ``@guvectorize``."""

    def __init__(self, function, signatures, layout, target):
        from . import _jit
        self.__name__ = function.__name__
        params = list(__import__("inspect").signature(function).parameters)
        cores = [c.strip("() ") for c in layout.replace("->", ",").replace(" ", "").split("),(")]
        texts = [_signature_text(s) for s in signatures]
        nin = layout.split("->")[0].count("(")
        # Complex parameters are two real ones each (`_complex_gufuncs`).
        self._complex = None
        if any("complex" in t for t in texts):
            from ._complex_gufuncs import ComplexParams
            self._complex = ComplexParams(function.__name__, params, cores, texts)
            params, cores, texts = self._complex.params, self._complex.cores, self._complex.signatures
            layout = self._complex.layout(nin)
        ndims = {p: len([d for d in c.split(",") if d]) for p, c in zip(params, cores)}
        translator = _jit.Translator(function, params, gufunc=True, ndims=ndims,
                                     complexes=self._complex.parts if self._complex else None)
        body = translator.kernel()
        self._target, self._context = target, None
        self._g = _native.build_gufunc(function.__name__, layout, texts, params, body)
        self._nin, self._nout = self._g.arity
        if self._complex:
            self._nin, self._nout = nin, len(self._complex.complex) - nin

    def __call__(self, *args):
        Array, _, asarray, _ = _PACKAGE_NAMES or _package_names()
        if self._context is None:
            self._context = _context_for(self._target)
        if len(args) not in (self._nin, self._nin + self._nout):
            raise TypeError(
                f"{self.__name__} takes {self._nin} inputs (and optionally its {self._nout} outputs), got {len(args)} arguments"
            )
        lazy = next((a for a in args if isinstance(a, Array)), None)  # outputs too
        to_lazy = lambda a: a if isinstance(a, Array) else (  # noqa: E731
            lazy._like(a) if lazy is not None else asarray(a, context=self._context))
        if self._complex:
            return self._call_complex(args, to_lazy)
        ins = [to_lazy(a) for a in args[:self._nin]]
        outs = args[self._nin:]
        if not outs:
            results = [Array(r) for r in self._g.call([a._a for a in ins])]
            return results[0] if self._nout == 1 else tuple(results)
        if all(type(o) is Array for o in outs):  # views write their arrays: below
            self._g.call_into([a._a for a in ins], [o._a for o in outs])
        else:
            results = self._g.call([a._a for a in ins])
            for out, result in zip(outs, results):
                if isinstance(out, Array):
                    out._rebind(result)
                else:
                    Array(result).copy_to_host(out)  # straight into it when it is dense
        return outs[0] if self._nout == 1 else tuple(outs)

    def _call_complex(self, args, to_lazy):
        from ._complex_gufuncs import write
        Array, _, asarray, ComplexArray = _PACKAGE_NAMES or _package_names()
        lazy = lambda a: a if isinstance(a, (Array, ComplexArray)) else (  # noqa: E731
            asarray(a, context=self._context) if np.iscomplexobj(a) else to_lazy(a))
        natives = self._complex.inputs([lazy(a) for a in args[:self._nin]], self._nin, to_lazy)
        results = self._complex.results(self._g.call(natives), self._nin, Array, ComplexArray)
        outs = args[self._nin:]
        for out, result in zip(outs, results):
            write(out, result, Array)
        given = outs or results
        return given[0] if self._nout == 1 else tuple(given)


def guvectorize(signatures, layout, target="cpu", **options):
    """Numba's ``@guvectorize``: the function's body, written over the core
    dimensions of its arguments (``for`` loops, indexing, ``arr.shape[d]``,
    ``prange``), becomes a generalized ufunc for ``layout``
    (``"(m,n)->(m,n)"``); call it with the inputs (outputs are returned) or
    with the inputs and the outputs (written, as Numba does)."""
    if target not in _TARGETS:
        raise ValueError(f"guvectorize: unknown target {target!r} (expected one of {', '.join(_TARGETS)})")
    return lambda function: GUVectorized(function, signatures, layout, target)
