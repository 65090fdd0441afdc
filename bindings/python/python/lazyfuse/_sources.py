"""The source lines of a function, also of one made by ``exec()``.

lazyfuse translates kernels and device functions from their source (Numba
reads bytecode). ``inspect`` finds the source of a function defined in a
file or a notebook cell, but not of one made by ``exec()`` of a string, as
programs and Numba's own tests make kernels from templates. So once a
kernel front end is imported, an audit hook (PEP 578) keeps the most recent
strings compiled under a name that is no file (``<string>``), and the
command of ``python -c``: a function
with no source of its own is looked up among them by its code — the
string's function of the same name and first line whose bytecode is the
function's own.

Audit hooks cannot be removed; this one only looks at ``compile`` events
and keeps at most ``KEPT`` strings that define a function.
"""

import ast
import collections
import inspect
import linecache
import os
import sys

#: How many exec'd sources are kept (the oldest are forgotten first).
KEPT = 512

# (filename, source) of the strings most recently compiled, newest last.
_recent = collections.deque(maxlen=KEPT)
_hooked = False


def _on_audit(event, args):
    if event != "compile" or len(args) != 2:
        return
    source, filename = args
    if isinstance(source, bytes):
        try:
            source = source.decode("utf-8")
        except UnicodeDecodeError:
            return
    if (isinstance(source, str) and "def " in source and isinstance(filename, str)
            and not os.path.exists(filename)):
        _recent.append((filename, source))


def keep_exec_sources():
    """Starts keeping the sources ``exec()`` and ``compile()`` are given
    (once per process)."""
    global _hooked
    if not _hooked:
        sys.addaudithook(_on_audit)
        _hooked = True
        # `python -c COMMAND` compiled its command before any hook: it is
        # still in the interpreter's own arguments.
        argv = getattr(sys, "orig_argv", [])
        if "-c" in argv[:-1]:
            _on_audit("compile", (argv[argv.index("-c") + 1], "<string>"))


def define(source, filename, env):
    """Runs generated Python ``source`` (functions the front end writes:
    translated CUDA C, a ``@vectorize`` body's wrapper) in ``env``, its
    text registered with ``linecache`` under ``filename`` so that the
    translator reads its functions' source as it reads a file's."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), env)
    return env


def source_lines(function):
    """``inspect.getsourcelines(function)``, or for a function made by
    ``exec()`` of a string since ``keep_exec_sources()``, its lines in that
    string and its first line; raises ``OSError`` or ``TypeError`` as
    ``inspect`` does when neither has it."""
    try:
        return inspect.getsourcelines(function)
    except OSError:
        found = _exec_source(getattr(function, "__code__", None))
        if found is None:
            raise
        return found


def _exec_source(code):
    if code is None:
        return None
    for filename, source in reversed(_recent):
        if filename != code.co_filename:
            continue
        try:
            # The copy compiles under a name the hook ignores (a file that
            # exists: this one), so looking up adds nothing to `_recent`.
            tree = ast.parse(source, __file__)
            compiled = compile(tree, __file__, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            continue
        if any(_same(candidate, code) for candidate in _code_objects(compiled)):
            lines = source.splitlines(True)
            first = code.co_firstlineno
            return inspect.getblock(lines[first - 1:]), first
    return None


def _same(candidate, code):
    """Whether two code objects are one function's: the same bytecode over
    the same names and constants (templates differ in names alone, as
    ``cuda.atomic.max`` and ``cuda.atomic.min``)."""
    def constants(c):
        return [k for k in c.co_consts if not inspect.iscode(k)]
    return (candidate.co_name == code.co_name
            and candidate.co_firstlineno == code.co_firstlineno
            and candidate.co_code == code.co_code
            and candidate.co_names == code.co_names
            and candidate.co_varnames == code.co_varnames
            and constants(candidate) == constants(code))


def _code_objects(code):
    """``code`` and every code object inside it (iteratively)."""
    work = [code]
    while work:
        current = work.pop()
        yield current
        work.extend(c for c in current.co_consts if inspect.iscode(c))
