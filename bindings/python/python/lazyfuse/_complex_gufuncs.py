"""Complex parameters of ``@guvectorize`` functions: the gufunc engine has
real types only, so each complex parameter becomes two real ones (its
parts, ``p__lfre`` and ``p__lfim``, with the same core dimensions), the
body is translated with them as one complex value (``_complex_values``),
and a call passes each complex argument's planes and makes complex
results of the planes it gets back."""

import numpy as np

from ._signatures import signature_params
from .errors import ArgumentError

_PART_TYPE = {"complex64": "float32", "complex128": "float64"}


class ComplexParams:
    """Which parameters of a gufunc are complex, and the real gufunc's
    parameters, layout and signatures."""

    def __init__(self, name, params, cores, signatures):
        self.name = name
        parsed = [signature_params(text) for text in signatures]
        self.complex = [self._kind(p, [args[i] for _, args in parsed if i < len(args)])
                        for i, p in enumerate(params)]
        self.params = [part for p, c in zip(params, self.complex)
                       for part in ((f"{p}__lfre", f"{p}__lfim") if c else (p,))]
        self.cores = [core for core, c in zip(cores, self.complex)
                      for core in ((core, core) if c else (core,))]
        self.signatures = [
            f"{result}({', '.join(self._split(arg) for arg in args)})" for result, args in parsed]
        self.parts = {p: (f"{p}__lfre", f"{p}__lfim") for p, c in zip(params, self.complex) if c}

    def _kind(self, param, declared):
        kinds = {a.split("[")[0].strip() in _PART_TYPE for a in declared}
        if len(kinds) > 1:
            raise ArgumentError(f"guvectorize '{self.name}': '{param}' is complex in some "
                                "signatures and real in others (expected one or the other)")
        return kinds.pop() if kinds else False

    @staticmethod
    def _split(arg):
        dtype, _, rest = arg.partition("[")
        part = _PART_TYPE.get(dtype.strip())
        if part is None:
            return arg
        dims = f"[{rest}" if rest else ""
        return f"{part}{dims}, {part}{dims}"

    def layout(self, nin):
        """The real gufunc's layout (``nin``: the complex one's inputs)."""
        inputs = sum(2 if c else 1 for c in self.complex[:nin])
        cores = [f"({c})" for c in self.cores]
        return f"{','.join(cores[:inputs])}->{','.join(cores[inputs:])}"

    def inputs(self, values, nin, to_lazy):
        """The native arrays the real gufunc takes for the complex one's
        ``values`` (lazy arrays, real or complex)."""
        natives = []
        for value, is_complex in zip(values, self.complex[:nin]):
            if not is_complex:
                natives.append(to_lazy(value)._a)
                continue
            parts = value._demanded() if hasattr(value, "_demanded") else None
            if parts is None:  # a real array where a complex one is declared
                real = to_lazy(value)
                parts = [real._a, (real * 0)._a]
            natives += parts
        return natives

    def results(self, natives, nin, array_type, complex_type):
        """The complex gufunc's results of the real one's ``natives``."""
        out, position = [], 0
        for is_complex in self.complex[nin:]:
            if is_complex:
                out.append(complex_type(natives[position], natives[position + 1]))
                position += 2
            else:
                out.append(array_type(natives[position]))
                position += 1
        return out


def write(out, result, array_type):
    """Writes a complex gufunc's ``result`` into the ``out`` the caller gave."""
    if isinstance(out, np.ndarray):
        out[...] = np.asarray(result)
    elif hasattr(out, "_re"):
        out._re, out._im = result._re, result._im
    elif isinstance(out, array_type):
        out._rebind(result._a)
    else:
        raise ArgumentError(f"guvectorize: cannot write into a {type(out).__name__}")
