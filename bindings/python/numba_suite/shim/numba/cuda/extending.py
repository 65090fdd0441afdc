"""Numba's typing and lowering extension API: not lazyfuse's (kernels are
translated from their source, not typed by Numba). Tests that use it are
listed as Numba's internals; these names exist so ``tests/support.py``
imports, and refuse when used."""


def _refuse(*args, **kwargs):
    raise NotImplementedError("lazyfuse kernels do not use Numba's extension API")


typeof_impl = register_model = NativeValue = overload = _refuse
typeof_impl.register = _refuse
