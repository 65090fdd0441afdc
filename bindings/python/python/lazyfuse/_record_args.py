"""Record (structured) arguments of a kernel launch: a NumPy structured
array, or one record of it (``np.void``/``np.record``), passed as one
array per field (a structure of arrays), and written back into the
argument after the launch (Numba copies host arrays back). Arrays of
byte and unicode strings (NumPy's ``S`` and ``U``), as arguments and as
fields, go the same way as arrays of their code units
(``_strings.code_units``). Used by ``cuda.Dispatcher`` through
``_kernel_args._flatten``; the translator reads the fields through
``_record_values`` and writes strings through ``_string_values``.

lazyfuse's arrays hold numbers only, so a structured array never becomes
one: each field is copied out into an array of its own dtype, of the
argument's shape followed by the field's own (a field ``("h", float32,
2)`` of an array of ``n`` records is an ``(n, 2)`` array); a single
record is an array of one record. Fields that are records themselves are
flattened into their fields (``r.a.x``). A string field ``("s", "S12")``
is an ``(n, 12)`` array of ``uint8`` (``"<U12"``: of ``uint32``), its
last dimension the code units.
"""

import numpy as np

from ._strings import code_units, from_code_units, string_layout
from .errors import CompileError


def record_fields(dtype, what="a record argument"):
    """``[(path, base dtype, shape)]`` of a structured dtype's fields, a
    nested record's fields flattened (``("a", "x")``): the leaves a
    kernel reads. A record nested with a shape of its own (an array of
    records inside a record) is refused. A string field's base dtype is
    its ``S``/``U`` dtype (its leaf holds the code units)."""
    out = []
    for name in dtype.names:
        field = dtype.fields[name][0]
        base, shape = field.base, field.shape
        if base.names is not None:
            if shape:
                raise CompileError(f"{what}: the field '{name}' is an array of records "
                                   "(records nested with a shape are not supported in kernels)")
            out += [((name, *path), b, s) for path, b, s in record_fields(base, what)]
            continue
        if base.kind not in "biufcSU":
            raise CompileError(f"{what}: the field '{name}' is of dtype {base} (kernels read "
                               "records of numbers, booleans, complex numbers and strings only)")
        out.append(((name,), base, shape))
    return out


def _field(host, path):
    view = host
    for part in path:
        view = view[part]
    return view


class Records:
    """A launch's record arguments, each as one leaf per field
    (``<name>__lff<k>``), and its arrays of strings, each as the array of
    its code units (one leaf, the argument's name): ``infos`` tells the
    translator each record argument's dimensions, whether it is one
    record, and its fields' paths, leaves and shapes, ``strings`` each
    leaf of strings' kind and length; ``join`` writes what the kernel
    wrote back."""

    def __init__(self):
        # name -> (ndim, single, ((path, leaf, field shape, dtype name), ...))
        self.infos = {}
        # leaf -> ("S" or "U", code units per string): `_string_values`
        self.strings = {}
        # (argument name, leaf, the argument's field, its copy passed)
        self.joins = []

    def split(self, name, value, leaves, complexes):
        """Appends the leaves of a structured ``value`` (complex fields
        split into their parts by ``complexes``) or of an array of
        strings; False when ``value`` is neither."""
        if isinstance(value, np.ndarray) and value.dtype.kind in "SU":
            self.split_strings(name, value, leaves)
            return True
        if isinstance(value, np.void) and value.dtype.names is not None:
            host, single = np.asarray(value).reshape(1), True  # a view of the record
        elif isinstance(value, np.ndarray) and value.dtype.names is not None:
            host, single = (value.reshape(1), True) if value.ndim == 0 else (value, False)
        else:
            return False
        if "__lf" in name:
            raise CompileError(f"argument '{name.split('__lf')[0]}': a record inside a tuple "
                               "(pass records and arrays of records as arguments of their own)")
        fields = []
        for k, (path, base, shape) in enumerate(record_fields(value.dtype, f"argument '{name}'")):
            leaf = f"{name}__lff{k}"
            view = _field(host, path)
            data = np.array(view, order="C")  # a copy always: written back only when wanted
            if base.kind in "SU":
                data = code_units(data)
                self.strings[leaf] = string_layout(base)
                leaves.append((leaf, data, None))
            elif complexes is None or not complexes.split(leaf, data, None, leaves):
                leaves.append((leaf, data, None))
            self.joins.append((name, leaf, view, data))
            fields.append((path, leaf, tuple(shape), base.name))
        self.infos[name] = (host.ndim, single, tuple(fields))
        return True

    def split_strings(self, name, value, leaves):
        """Appends an array of strings as its code units (a copy)."""
        if "__lf" in name:
            raise CompileError(f"argument '{name.split('__lf')[0]}': an array of strings inside a "
                               "tuple (pass arrays of strings as arguments of their own)")
        self.strings[name] = string_layout(value.dtype)
        data = code_units(value)
        leaves.append((name, data, None))
        self.joins.append((name, name, value, data))

    def key(self):
        """The part of a launch's cache key the records and strings make."""
        return tuple(sorted(self.infos.items())), tuple(sorted(self.strings.items()))

    def join(self, written, kept, complexes):
        """Copies each field the launch wrote (a leaf, or a part of a
        complex one) back into its argument, except arguments passed as
        ``In`` (their names in ``kept``)."""
        for name, leaf, view, data in self.joins:
            if name.split("__lf")[0] in kept:
                continue
            names = {leaf, *complexes.names.get(leaf, ())}
            if names & written:
                view[...] = from_code_units(data, view.dtype) if leaf in self.strings else data


def stays_numpy(dtype):
    """Whether a "device array" of ``dtype`` stays NumPy's
    (``RecordDeviceArray``): records and strings, which lazyfuse's
    arrays cannot hold."""
    dtype = getattr(dtype, "dtype", dtype)
    return isinstance(dtype, np.dtype) and (dtype.names is not None or dtype.kind in "SU")


class RecordDeviceArray(np.ndarray):
    """A "device array" of records or of strings (``cuda.device_array_like``
    of a structured array): lazyfuse's device arrays hold numbers only, so
    it stays a NumPy array, passed to kernels field by field (or as code
    units) as any NumPy argument, with Numba's ``copy_to_host``."""

    def copy_to_host(self, ary=None, stream=0):
        """The records as a NumPy array (into ``ary`` when given)."""
        if ary is None:
            return np.array(self).view(np.ndarray)
        ary[...] = self
        return ary

    def copy_to_device(self, ary, stream=0):
        """Takes ``ary``'s records."""
        self[...] = ary


def record_device_array(shape, dtype):
    """A zeroed ``RecordDeviceArray`` of ``shape`` and a structured (or
    string) ``dtype``."""
    return np.zeros(shape, dtype).view(RecordDeviceArray)
