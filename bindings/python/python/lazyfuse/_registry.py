"""The tables through which a module calls code of a layer above it,
which it may not import (see ``scripts/module-cycles.py``): the module
above registers its functions here when it is imported, and the module
below looks them up when it is called. The package's ``__init__`` imports
every module, so the tables are full before any call from outside.

- ``FUNCTIONS``: NumPy's function name -> its lazy implementation (the
  ``_numpy`` namespace: ``lf.exp``, ``lf.concatenate``; and NumPy's own
  functions called on lazy arrays, through ``Array.__array_function__``).
- ``LINALG_FUNCTIONS``, ``FFT_FUNCTIONS``: the same for ``numpy.linalg``
  (``lazyfuse.linalg``) and ``numpy.fft`` (``lazyfuse.fft``).
- ``OPERATIONS``: what ``Array``'s methods and the core's helpers call of
  the modules above the ``Array`` type (indexing, reductions, ufuncs,
  ``sort``…), by the name the implementing module registers; not a
  NumPy namespace.

Imports nothing from the package."""

FUNCTIONS = {}
LINALG_FUNCTIONS = {}
FFT_FUNCTIONS = {}
OPERATIONS = {}


def register(table, *functions, **named):
    """Adds ``functions`` to ``table`` under their ``__name__``, and
    ``named`` under the names given."""
    for function in functions:
        table[function.__name__] = function
    table.update(named)
