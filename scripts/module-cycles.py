#!/usr/bin/env python3
"""Fails when two modules of one crate import each other (`use crate::…` or
`super::…` outside test modules): each layer's modules depend one way.

Usage: python3 scripts/module-cycles.py   (from anywhere in the repository)
"""
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


failed = False
for crate in CRATES:
    root = os.path.join(ROOT, crate)
    if not os.path.isdir(root):
        continue
    for a, b in circles(root):
        print(f"{crate}: modules {a} and {b} import each other")
        failed = True
print("module import circles: " + ("found" if failed else "none"))
sys.exit(1 if failed else 0)
