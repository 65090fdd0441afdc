"""Numba's extension API: ``overload`` is ``lazyfuse.extending``'s. The
typing and lowering API is not lazyfuse's (kernels are translated from
their source, not typed by Numba); tests that use it are listed as
Numba's internals, and these names exist so ``tests/support.py`` imports,
and refuse when used."""

from lazyfuse.extending import overload  # noqa: F401


def _refuse(*args, **kwargs):
    raise NotImplementedError("lazyfuse kernels do not use Numba's extension API")


typeof_impl = register_model = NativeValue = _refuse
typeof_impl.register = _refuse
