#!/usr/bin/env python3
"""Fails when the crate arrows `docs/architecture.md` draws (its "Crates and
arrows" block: `crate (folder) ──► dep, dep   what it holds`) differ from
the workspace's manifests, as `cargo metadata` reads them: every crate
drawn once, with exactly the lazyfuse crates it depends on.

Usage: python3 scripts/doc-arrows.py   (from anywhere in the repository)
"""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
ARROW = "──►"


def full(name):
    return name if name.startswith("lazyfuse") else "lazyfuse-" + name


def drawn():
    text = open(os.path.join(ROOT, "docs", "architecture.md"), encoding="utf-8").read()
    block = text.split("## Crates and arrows", 1)[1].split("```", 2)[1]
    arrows = {}
    for line in block.splitlines():
        if ARROW not in line:
            continue
        crate = line.split()[0]
        # The dependencies end where two spaces start the description.
        deps = re.split(r"\s{2,}", line.split(ARROW, 1)[1].strip())[0]
        names = [] if deps == "nothing" else [full(d.strip()) for d in deps.split(",")]
        if crate in arrows:
            sys.exit(f"docs/architecture.md draws {crate} twice")
        arrows[crate] = set(names)
    return arrows


def manifests():
    out = subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps"],
                         cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return {p["name"]: {d["name"] for d in p["dependencies"]
                        if d["name"].startswith("lazyfuse") and d["kind"] is None}
            for p in json.loads(out)["packages"]}


def main():
    want, got = manifests(), drawn()
    problems = [f"{c}: not drawn" for c in sorted(set(want) - set(got))]
    problems += [f"{c}: drawn, but no such crate" for c in sorted(set(got) - set(want))]
    for crate in sorted(set(want) & set(got)):
        if want[crate] != got[crate]:
            problems.append(f"{crate}: drawn ──► {sorted(got[crate])}, "
                            f"the manifest says {sorted(want[crate])}")
    if problems:
        print("docs/architecture.md's arrows differ from Cargo.toml:\n  " + "\n  ".join(problems))
        sys.exit(1)
    print(f"crate arrows of docs/architecture.md: all {len(got)} match the manifests")


if __name__ == "__main__":
    main()
