"""PyCUDA's ``SourceModule``: CUDA C whose ``__global__`` functions run on
every lazyfuse backend (``lazyfuse._c_translate``)."""

from .. import _raw_kernels
from ..errors import ArgumentError


class SourceModule:
    """``SourceModule(source)``: ``get_function(name)`` gives a launchable
    kernel. PyCUDA's compiler options are accepted; ``-D`` defines take
    effect, the rest change nothing lazyfuse does. PyCUDA wraps the source
    in ``extern "C"`` (``no_extern_c=False``): names are the source's."""

    def __init__(self, source, nvcc="nvcc", options=None, keep=False, no_extern_c=False,
                 arch=None, code=None, cache_dir=None, include_dirs=()):
        self._module = _raw_kernels.RawModule(code=source, options=tuple(options or ()))

    def get_function(self, name):
        """The kernel ``name``, called as ``f(*args, block=(x, y, z), grid=(x, y))``."""
        return Function(self._module.get_function(name))

    def get_global(self, name):
        return self._module.get_global(name)


class Function:
    """A kernel of a ``SourceModule``."""

    def __init__(self, raw):
        self._raw = raw
        self._arg_types = None

    def __call__(self, *args, block=None, grid=(1, 1), shared=0, stream=None, time_kernel=False,
                 texrefs=()):
        if block is None:
            raise ArgumentError(f"kernel '{self._raw.name}': block= is required "
                                "(PyCUDA's block=(x, y, z))")
        from . import driver
        launch_args, allocations = driver._launch_args(args)
        raw = self._raw
        if isinstance(raw, _raw_kernels.SourceKernel):  # run as written, on cuda only
            raw(tuple(grid), tuple(block), launch_args, shared_mem=shared)
        else:
            _raw_kernels.launch(raw.name, raw._function, raw._kernel(), tuple(grid), tuple(block),
                                launch_args, shared)
        driver._written_back(allocations)
        return 0.0 if time_kernel else None

    def prepare(self, arg_types, block=None, shared=None, texrefs=()):
        """PyCUDA's ``prepare``: argument types are the kernel's own here."""
        self._arg_types = arg_types
        self._block = block
        return self

    def prepared_call(self, grid, block, *args, shared_size=0):
        self(*args, block=block, grid=grid, shared=shared_size)

    def prepared_timed_call(self, grid, block, *args, shared_size=0):
        self(*args, block=block, grid=grid, shared=shared_size)
        return lambda: 0.0
