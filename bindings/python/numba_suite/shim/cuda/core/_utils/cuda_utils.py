"""cuda-python's ``CUDAError`` (imported by a test file of the suite;
lazyfuse does not use cuda-python)."""


class CUDAError(Exception):
    """An error of the CUDA driver, as cuda-python raises it."""
