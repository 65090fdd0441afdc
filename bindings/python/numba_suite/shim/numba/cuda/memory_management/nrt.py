"""lazyfuse has no Numba runtime (NRT): the tests' statistics hooks refuse."""


class _NoRuntime:
    def __getattr__(self, name):
        raise NotImplementedError(f"lazyfuse has no Numba runtime (rtsys.{name})")


rtsys = _NoRuntime()
