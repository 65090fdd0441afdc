#!/usr/bin/env python3
"""Fails when two modules of one crate import each other (`use crate::…` or
`super::…` outside test modules): each layer's modules depend one way.

Then the same for the Python package (`bindings/python/python/lazyfuse`),
stricter: no circle of imports at all, and every module in one of the
layers of `LAYERS`, importing only from its own layer and those below.
An import is `from .x import …` or `from . import x` (module x), at the
top or inside a function; `from . import name` of a name that is no
module, and `import lazyfuse`, import the package's `__init__`, which is
the top layer (it imports everything). The layers, bottom up: base (no
arrays: errors, the native extension, `_registry`'s tables, the tracer),
core (the `Array` type and what its methods do), numpy (NumPy's
functions; `_numpy` assembles the namespace), libraries (`linalg`, `fft`,
`random`, `dask`), numba (the kernel compilers and `cuda`), package
(`__init__`). Where a lower module needs a higher one's function (an
`Array` method sorting, `__array_function__` dispatching to NumPy's
namespace), the higher module registers it in `_registry` when imported
and the lower one looks it up when called.

Usage: python3 scripts/module-cycles.py   (from anywhere in the repository)
"""
import ast
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CRATES = ["core/src", "fusion/src", "codegen/device/src", "codegen/cpu/src",
          "codegen/sim/src", "codegen/cuda/src", "codegen/kernel/src", "library/src", "src",
          "bindings/src", "bench/src"]


def module_of(root, path):
    parts = os.path.relpath(path, root)[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return "::".join(parts)


def imports(root):
    graph = {}
    for folder, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(folder, name)
            module = module_of(root, path)
            text = open(path, encoding="utf-8").read().split("#[cfg(test)]")[0]
            parent = module.rsplit("::", 1)[0] if "::" in module else ""
            found = set(re.findall(r"\bcrate::([a-z_]+(?:::[a-z_]+)*)", text))
            found |= {(parent + "::" if parent else "") + m
                      for m in re.findall(r"\bsuper::([a-z_]+)", text)}
            graph[module] = found
    return graph


def owner(graph, path):
    parts = path.split("::")
    for k in range(len(parts), 0, -1):
        candidate = "::".join(parts[:k])
        if candidate in graph:
            return candidate
    return None


def circles(root):
    graph = imports(root)
    edges = {}
    for module, found in graph.items():
        edges[module] = set()
        for path in found:
            target = owner(graph, path)
            # A module and its own submodules are one unit.
            if target and target != module and not target.startswith(module + "::") \
                    and not module.startswith(target + "::"):
                edges[module].add(target)
    return sorted({tuple(sorted((a, b))) for a in edges for b in edges[a] if a in edges.get(b, ())})


PYTHON = "bindings/python/python/lazyfuse"
# The compiled extension: a module of the package without a .py file.
NATIVE = ("_native",)
# The Python package's layers, bottom up. A module imports from its own
# layer (without a circle) and the layers below, never from a layer above;
# what a lower module must call above it goes through `_registry`'s
# tables, which the modules above fill when imported.
LAYERS = [
    # Needs no array: errors, the compiled extension, the tables, and the
    # tracer of Python functions into expressions (`where` takes its values).
    ("base", ["errors", "_native", "_registry", "_rounds", "_sources", "_signatures", "_trace",
              "_branches"]),
    # The Array type, its contexts and constructors, and what its methods
    # do: indexing and views, reductions, ufuncs, the array API's devices.
    ("core", ["_contexts", "_methods", "_array", "_creation", "_reductions", "_ufuncs",
              "_selection", "_fancy", "_views", "_array_api", "_cupy"]),
    # NumPy's functions over lazy arrays; `_numpy` assembles the namespace.
    ("numpy", ["_joins", "_ranges", "_arrangements", "_compat", "_generated", "_host", "_pad",
               "_polynomials", "_histograms", "_statistics", "_sorting", "_quantiles",
               "_diagonals", "_contractions", "_complex", "_numpy"]),
    # NumPy's submodules and Dask's backend.
    ("libraries", ["linalg", "fft", "random", "_distributions", "dask"]),
    # Numba's and CUDA C's front end: compiling kernels, `cuda`, PyCUDA's
    # and CuPy's raw kernels.
    ("numba", ["_slices", "_control", "_zero_division", "_byte_views", "_kernel_math", "_kernel_cmath", "_functions",
               "_compile_time", "_sequences", "_calls", "_reports", "_inlining",
               "_complex_inference", "_complex_values", "_strings", "_record_args", "_record_values", "_string_values",
               "_complex_gufuncs", "_vector_types", "_vector_values", "_grid_groups", "_libdevice", "_enum_values", "_reshapes", "_jit", "_complex_calls", "_numba",
               "_kernel_args", "_streams", "_devicearray", "_cu_sources", "extending", "_cuda_devices", "_cuda_random", "cuda", "_c_tree",
               "_c_tables", "_c_runtime", "_c_lex", "_c_templates", "_c_parse", "_c_printf", "_c_statements", "_c_translate", "_c_combine",
               "_raw_kernels", "pycuda", "pycuda.autoinit", "pycuda.compiler", "pycuda.driver",
               "pycuda.gpuarray"]),
    # The package's namespace: imports every module above, re-exports.
    ("package", ["__init__"]),
]


def python_modules(root):
    """The package's modules by dotted name (``_array``, ``pycuda.driver``;
    a folder's ``__init__`` is the folder's name, the package's own
    ``__init__``) and their files."""
    found = {}
    for folder, _, files in os.walk(root):
        package = os.path.relpath(folder, root).replace(os.sep, ".")
        for name in files:
            if not name.endswith(".py"):
                continue
            module = name[:-3]
            if package != ".":
                module = package if module == "__init__" else package + "." + module
            found[module] = os.path.join(folder, name)
    return found


def python_imports(root):
    """Module -> the package's modules it imports, at any depth (inside
    functions too). ``from . import x`` is an import of module ``x`` when
    there is one, else of a name the package's ``__init__`` defines
    (``from . import asarray``): an import of ``__init__``; so is an
    absolute ``import lazyfuse`` (or ``from lazyfuse import …``)."""
    modules = python_modules(root)
    top = os.path.basename(os.path.normpath(root))
    known = set(modules) | set(NATIVE)
    graph = {}
    for module, path in modules.items():
        is_package = os.path.basename(path) == "__init__.py"
        package = module if is_package else (module.rsplit(".", 1)[0] if "." in module else "")
        package = "" if module == "__init__" else package
        found = set()
        for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    if parts[0] == top:
                        found.add(_resolve(".".join(parts[1:]), known))
                continue
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level == 0:
                parts = (node.module or "").split(".")
                if parts[0] != top:
                    continue
                base = ".".join(parts[1:])
            else:
                base = ".".join(package.split(".")[:len(package.split(".")) - (node.level - 1)]
                                if package else [])
                base = ".".join(p for p in (base, node.module or "") if p)
            for alias in node.names:
                name = ".".join(p for p in (base, alias.name) if p)
                # `from .x import y` imports module x (or x.y, a submodule);
                # `from . import y`, module y or a name of __init__.
                found.add(name if name in known else _resolve(base, known))
        graph[module] = found - {module}
    graph.update({name: set() for name in NATIVE})
    return graph


def _resolve(dotted, known):
    """The module a dotted name inside the package belongs to: the longest
    known prefix, else the package's ``__init__``."""
    parts = dotted.split(".") if dotted else []
    for k in range(len(parts), 0, -1):
        if ".".join(parts[:k]) in known:
            return ".".join(parts[:k])
    return "__init__"


def layering_problems(graph):
    """Modules missing from `LAYERS` (or listed and gone), and imports from
    a higher layer."""
    layer = {m: (i, name) for i, (name, modules) in enumerate(LAYERS) for m in modules}
    problems = [f"module {m} is in no layer of LAYERS" for m in sorted(set(graph) - set(layer))]
    problems += [f"LAYERS lists {m}, which is no module" for m in sorted(set(layer) - set(graph))]
    for module in sorted(set(graph) & set(layer)):
        for target in sorted(graph[module] & set(layer)):
            if layer[target][0] > layer[module][0]:
                problems.append(f"{module} ({layer[module][1]}) imports {target}, of a higher "
                                f"layer ({layer[target][1]})")
    return problems


def components(graph):
    """Strongly connected components of more than one module (Tarjan's,
    iterative)."""
    index, low, on, stack, found, counter = {}, {}, set(), [], [], [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    part = set()
                    while True:
                        member = stack.pop()
                        on.discard(member)
                        part.add(member)
                        if member == node:
                            break
                    if len(part) > 1:
                        found.append(part)
            elif step not in index:
                index[step] = low[step] = counter[0]
                counter[0] += 1
                stack.append(step)
                on.add(step)
                work.append((step, iter(sorted(graph[step]))))
            elif step in on:
                low[node] = min(low[node], index[step])
    return found


failed = False
for crate in CRATES:
    root = os.path.join(ROOT, crate)
    if not os.path.isdir(root):
        continue
    for a, b in circles(root):
        print(f"{crate}: modules {a} and {b} import each other")
        failed = True
graph = python_imports(os.path.join(ROOT, PYTHON))
for part in components(graph):
    print(f"{PYTHON}: modules {sorted(part)} import one another")
    failed = True
for problem in layering_problems(graph):
    print(f"{PYTHON}: {problem}")
    failed = True
print("module import circles and upward imports: " + ("found" if failed else "none"))
sys.exit(1 if failed else 0)
