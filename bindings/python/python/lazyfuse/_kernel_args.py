"""The arguments of a kernel launch: tuples flattened into one parameter
per number or array, NumPy scalars and declared signatures giving
dtypes, ``In``/``Out``/``InOut`` wrappers, the launch's dimensions, and
the exception a ``debug=True`` kernel reported. Used by
``cuda.Dispatcher``."""

import numpy as np

from ._signatures import _signature_text, signature_params


class In:
    """A NumPy argument only read by the kernel: not copied back (Numba's
    ``cuda.In``, PyCUDA's ``drv.In``)."""

    copy_back = False

    def __init__(self, value):
        self.value = value

class Out(In):
    """A NumPy argument the kernel writes: copied back after the launch."""

    copy_back = True

class InOut(Out):
    """A NumPy argument read and written: copied back after the launch."""

def wrap_arg(value, default=InOut):
    """``value`` wrapped in ``default`` unless it is wrapped already (for
    a dispatcher's ``extensions``, as Numba's)."""
    return value if isinstance(value, In) else default(value)

def _flatten(name, value, dtype, leaves, tuples, fields, complexes=None, records=None):
    """Appends ``(leaf name, value, declared dtype)`` for each number or
    array of a kernel argument: the argument itself, or the elements of a
    tuple (recursively), named ``<name>__lf<i>``; ``tuples`` gets each
    tuple's element names, ``fields`` a namedtuple's field names. A complex
    argument is two leaves, its real and imaginary parts (``Complexes``); a
    structured array or a record one leaf per field (``_record_args``)."""
    if not isinstance(value, tuple):
        value = value.value if isinstance(value, In) else value
        if records is not None and records.split(name, value, leaves, complexes):
            return
        if complexes is None or not complexes.split(name, value, dtype, leaves):
            leaves.append((name, value, dtype))
        return
    elements = [f"{name}__lf{i}" for i in range(len(value))]
    tuples[name] = elements
    if hasattr(value, "_fields"):
        fields[name] = list(value._fields)
    for element, item in zip(elements, value):
        _flatten(element, item, None, leaves, tuples, fields, complexes, records)


class Complexes:
    """A launch's complex arguments, each passed as two leaves of its real
    type (kernels compute on the parts: ``_complex_values``): an array as
    its real and imaginary planes (NumPy's copied out and, when the kernel
    writes them, joined back into the argument; a lazyfuse complex array's
    own lazy planes, re-bound), a number as two numbers."""

    def __init__(self, array_type, complex_type):
        self.array_type, self.complex_type = array_type, complex_type
        # name -> (real part's leaf, imaginary part's leaf)
        self.names = {}
        # (argument, real plane, imaginary plane) to join after the launch
        self.joins = []

    def split(self, name, value, dtype, leaves):
        """Appends the two leaves of a complex ``value`` (or of a number a
        complex signature declares); False when it is neither."""
        declared = dtype is not None and np.dtype(dtype).kind == "c"
        if isinstance(value, np.ndarray) and value.dtype.kind == "c":
            parts, part_dtype = (np.ascontiguousarray(value.real), np.ascontiguousarray(value.imag)), None
            self.joins.append((name, value, *parts))
        elif isinstance(value, self.complex_type):
            parts, part_dtype = (self.array_type(value._re), self.array_type(value._im)), None
            self.joins.append((name, value, *parts))
        elif isinstance(value, (complex, np.complexfloating)) or (
                declared and isinstance(value, (bool, int, float, np.generic))):
            single = np.dtype(dtype).name == "complex64" if declared else isinstance(value, np.complex64)
            parts, part_dtype = (float(np.real(value)), float(np.imag(value))), (
                "float32" if single else "float64")
        else:
            return False
        names = self.names[name] = (f"{name}__lfre", f"{name}__lfim")
        leaves += [(names[0], parts[0], part_dtype), (names[1], parts[1], part_dtype)]
        return True

    def join(self, written, kept):
        """Writes the planes the launch wrote back into their arguments
        (not those passed as ``In``, in ``kept``)."""
        for name, value, re, im in self.joins:
            if name in kept or not set(self.names[name]) & written:
                continue
            if isinstance(value, np.ndarray):
                value.real[...] = re
                value.imag[...] = im
            else:
                value._re, value._im = re._a, im._a

class Datetimes:
    """A launch's ``datetime64``/``timedelta64`` arguments (arrays and
    numbers), passed as their ``int64`` counts: an array as an ``int64``
    view of its memory (what the kernel writes lands in it), a number as
    its count. Kernels compute on the counts, so every such argument of a
    launch must have one unit (``[D]`` and ``[D]``: differences, sums and
    comparisons of counts are then NumPy's); NaT is the smallest int64,
    not NumPy's NaT in arithmetic."""

    def __init__(self, kernel):
        self.kernel, self.units = kernel, {}

    def value(self, name, value):
        """``value`` as the launch passes it."""
        inner = value.value if isinstance(value, In) else value
        if not isinstance(inner, (np.ndarray, np.datetime64, np.timedelta64)) or inner.dtype.kind not in "mM":
            return value
        self.units[name] = np.datetime_data(inner.dtype)
        if len(set(self.units.values())) > 1:
            from .errors import CompileError
            raise CompileError(
                f"kernel '{self.kernel}': datetime64/timedelta64 arguments of different units "
                f"({', '.join(f'{n}: {u[1]}{u[0]}' for n, u in sorted(self.units.items()))}); "
                "kernels compute on their int64 counts, which need one unit (convert with astype)")
        counts = inner.view(np.int64) if isinstance(inner, np.ndarray) else np.int64(inner.view(np.int64))
        return type(value)(counts) if isinstance(value, In) else counts


def _launch_dims(what, dims):
    """A launch's grid or block as a list of 1 to 3 ints (Numba's messages)."""
    if type(dims) is int:
        return [dims]
    listed = list(dims) if isinstance(dims, (tuple, list)) else [dims]
    if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in listed):
        raise TypeError(f"{what} must be a sequence of integers, got {listed}")
    if not 1 <= len(listed) <= 3:
        raise ValueError(f"{what} must be a sequence of 1, 2 or 3 integers, got {listed}")
    return [int(d) for d in listed]

def _scalar_types(signature):
    """The dtype a signature gives each scalar parameter (None for arrays),
    or None without a signature: ``void(float32[:], int32)`` gives
    ``[None, "int32"]``. Several signatures (a list) declare none."""
    if signature is None or isinstance(signature, list):
        return None
    params = signature_params(_signature_text(signature))[1]
    try:
        return [None if "[" in p else np.dtype(p).name for p in params]
    except TypeError:
        return None

def _raise_reported(raises, record):
    """Raises the exception a kernel reported (``record``: its code, the
    thread's and the block's indices), with Numba's message."""
    if record[0] == 0:
        return
    cls, message = raises[int(record[0]) - 1]
    where = f"tid={list(map(int, record[1:4]))} ctaid={list(map(int, record[4:7]))}"
    raise cls(f"{where}: {message}" if message else where)


def _launch_value(kernel, name, value, dtype, array_type, asarray):
    """``(what the launch passes, its part of the cache key)`` for one
    leaf: an array (a NumPy one copied in) keyed by dtype and dimensions,
    or a number keyed by its dtype: the signature's (converted as C
    converts, an int wrapping, as Numba's launch does), a NumPy scalar's
    own, else float64 or int64."""
    if isinstance(value, (array_type, np.ndarray)):
        value = value if isinstance(value, array_type) else asarray(value)
        return value, (value.dtype, value.ndim)  # the dtype's name only when compiling
    if isinstance(value, (bool, int, float, np.generic)) and dtype is not None:
        return np.asarray(value).astype(dtype).item(), dtype
    if isinstance(value, np.generic) and value.dtype.kind in "iuf":
        return value.item(), value.dtype.name
    if isinstance(value, (bool, int, float, np.generic)):
        value = value.item() if isinstance(value, np.generic) else value
        return value, "float64" if isinstance(value, float) else "int64"
    raise TypeError(f"kernel '{kernel}': cannot pass a {type(value).__name__} "
                    f"(as '{name}': expected an array, a number or a tuple of them)")
