"""Numba's ``cuda.CUSource`` (CUDA C source to link into kernels) and
``cuda.declare_device``. A ``CUSource`` holds its source, as Numba's does;
linking the ``__device__`` functions of CUDA C (or PTX, LTO-IR) into a
Python kernel is not supported yet: ``declare_device`` raises a
``CompileError`` saying so (CUDA C kernels themselves run through
``RawKernel``/``SourceModule``, see ``_raw_kernels``)."""

from .errors import CompileError


class CUSource:
    """CUDA C source code, as Numba's ``CUSource``: ``data`` is the text,
    ``name`` an optional file name for it."""

    kind = "cu"

    def __init__(self, data, name=None):
        if isinstance(data, bytes):
            data = data.decode()
        if not isinstance(data, str):
            raise TypeError(f"CUSource takes the source as str or bytes, not {type(data).__name__}")
        self.data, self.name = data, name

    def __repr__(self):
        return f"CUSource({self.name or '<source>'}, {len(self.data)} characters)"


def declare_device(name, sig, link=None, use_cooperative=False, abi="numba"):
    """Numba's ``declare_device``: an external device function defined in
    linked code. Not supported yet: raises ``CompileError`` (lazyfuse
    translates kernels from their source and cannot link external device
    functions into them)."""
    raise CompileError(
        f"declare_device('{name}'): linking external device functions (CUDA C, PTX, LTO-IR) into "
        "Python kernels is not supported; write the function in Python with @cuda.jit(device=True), "
        "or the whole kernel in CUDA C (RawKernel, SourceModule)"
    )
