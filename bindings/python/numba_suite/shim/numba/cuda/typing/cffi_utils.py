"""lazyfuse kernels do not call C functions through cffi."""

SUPPORTED = False
