"""Numba's own CUDA tests against lazyfuse (issue 47).

numba-cuda's wheel on PyPI ships its tests (BSD-2-Clause, its licence is
copied next to them). This script downloads the pinned wheel once, lays out
its ``cudapy`` and ``doc_examples`` tests under ``shim/numba`` (Numba's
names bound to lazyfuse's, and Numba's test base classes), and runs them with
pytest. ``xfails.txt`` lists the tests expected to fail, each with its
reason; ``excluded.txt`` the test files that test Numba's internals.

Usage: python run.py [--tree DIR] [pytest arguments...]
"""

import argparse
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

VERSION = "0.30.4"
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
SUITES = ("cudapy", "doc_examples")


#: The exit status when the wheel cannot be downloaded (the test command
#: reports the suite as skipped).
NO_WHEEL = 3


def wheel(cache):
    """The numba-cuda wheel, downloaded into ``cache`` the first time;
    None when it cannot be."""
    found = sorted(cache.glob(f"numba_cuda-{VERSION}-*.whl"))
    if not found:
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
             "--no-deps", "--only-binary=:all:", f"numba-cuda=={VERSION}", "-d", str(cache)],
            check=False,
        )
        found = sorted(cache.glob(f"numba_cuda-{VERSION}-*.whl"))
    return found[0] if found else None


def lay_out(tree, archive):
    """The shim's ``numba`` package with the wheel's tests inside it."""
    if tree.exists():
        shutil.rmtree(tree)
    shutil.copytree(HERE / "shim", tree)
    prefix = "numba_cuda/numba/cuda/tests/"
    keep = [prefix + "__init__.py", prefix + "support.py"] + [prefix + s + "/" for s in SUITES]
    keep.append(prefix + "data/")
    with zipfile.ZipFile(archive) as z:
        for name in z.namelist():
            if name.endswith("/"):
                continue
            if any(name == k or (k.endswith("/") and name.startswith(k)) for k in keep):
                target = tree / "numba" / "cuda" / "tests" / name[len(prefix):]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(z.read(name))
            elif "/licenses/" in name:
                (tree / Path(name).name).write_bytes(z.read(name))
    shutil.copy(HERE / "conftest.py", tree / "conftest.py")


def _reason(entry):
    """The reason ``xfails.txt`` gives for ``entry``."""
    for line in (HERE / "xfails.txt").read_text().splitlines():
        if line.split("#")[0].strip() == entry:
            return line.partition("#")[2].strip()
    return ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=REPO / "target" / "numba-suite")
    args, pytest_args = parser.parse_known_args()
    tree = args.tree / "tree"
    archive = wheel(args.tree / "wheel")
    if archive is None:
        print(f"numba-cuda=={VERSION} could not be downloaded from the package registry")
        return NO_WHEEL
    lay_out(tree, archive)
    excluded = [line.split("#")[0].strip() for line in (HERE / "excluded.txt").read_text().splitlines()]
    # Expected failures of whole files: files that do not import (they
    # need an API lazyfuse lacks); they cannot be marked, so they are left
    # out and named.
    unimportable = [line.split("#")[0].strip() for line in (HERE / "xfails.txt").read_text().splitlines()
                    if line.split("#")[0].strip().endswith(".py")]
    ignores = [f"--ignore={tree / 'numba' / 'cuda' / 'tests' / e}" for e in excluded + unimportable if e]
    for name in unimportable:
        print(f"expected to fail: {name} does not import ({_reason(name)})")
    env = dict(os.environ, LAZYFUSE_NUMBA_XFAILS=str(HERE / "xfails.txt"))
    report = args.tree / "report.xml"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tree),
               f"--junitxml={report}",
               "--continue-on-collection-errors",
               *ignores, *[str(tree / "numba" / "cuda" / "tests" / s) for s in SUITES], *pytest_args]
    status = subprocess.run(command, cwd=tree, env=env).returncode
    print(_summary(report, len(unimportable)))
    return status


def _summary(report, unimportable):
    """One line of counts from pytest's JUnit report (the terminal's own
    summary line does not survive the tests that redirect stdout)."""
    import xml.etree.ElementTree as ET
    counts = dict.fromkeys(("passed", "failed", "xfailed", "numba_xfailed", "skipped"), 0)
    for case in ET.parse(report).getroot().iter("testcase"):
        tags = {child.tag: child for child in case}
        if "failure" in tags or "error" in tags:
            counts["failed"] += 1
        elif "skipped" in tags and tags["skipped"].get("type") == "pytest.xfail":
            # Ours carry xfails.txt's reason; Numba's own
            # `@unittest.expectedFailure` tests none.
            counts["xfailed" if tags["skipped"].get("message") else "numba_xfailed"] += 1
        elif "skipped" in tags:
            counts["skipped"] += 1
        else:
            counts["passed"] += 1
    ran = counts["passed"] + counts["failed"] + counts["xfailed"]
    return (f"Numba's CUDA tests: {counts['passed']} passed, {counts['failed']} failed, "
            f"{counts['xfailed']} expected failures ({counts['passed'] / max(ran, 1):.0%} of the "
            f"{ran} that run), {counts['skipped']} skipped as under Numba's simulator, "
            f"{counts['numba_xfailed']} failing as Numba expects, {unimportable} files that do not import")


if __name__ == "__main__":
    sys.exit(main())
