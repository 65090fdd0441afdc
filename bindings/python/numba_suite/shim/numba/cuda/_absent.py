"""Numba APIs that lazyfuse does not have (its compiler's passes, the CUDA
driver, PTX): importable so that a test file's other tests run, refusing
when used. Nothing here implements behaviour."""


class Absent:
    """A name that refuses every use: calling it, reading its attributes."""

    def __init__(self, name):
        self._name = name

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(f"lazyfuse has no {self._name}")

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Absent(f"{self._name}.{attr}")


class AbsentError(Exception):
    """An error class of Numba's that lazyfuse never raises."""
