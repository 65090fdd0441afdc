"""What the test files share: the ``backend`` fixture, which runs a test
once on each backend the machine has (``cpu``, ``sim``, the simulated GPU,
and ``cuda`` where a CUDA GPU is usable), inside ``with
lazyfuse.use(backend)``. ``LAZYFUSE_TEST_BACKENDS=cuda`` (a comma-separated
list) picks the backends instead: the GPU check runs the suite on ``cuda``
alone that way."""

import os

import pytest

import lazyfuse as lf


def _backends():
    chosen = os.environ.get("LAZYFUSE_TEST_BACKENDS")
    if chosen:
        return [b.strip() for b in chosen.split(",") if b.strip()]
    return ["cpu", "sim"] + (["cuda"] if lf.cuda.is_available() else [])


BACKENDS = _backends()


def _under_test():
    line = f"lazyfuse backends under test: {', '.join(BACKENDS)}"
    if "cuda" not in BACKENDS and not os.environ.get("LAZYFUSE_TEST_BACKENDS"):
        line += " (SKIPPED cuda: no CUDA GPU is usable here)"
    return line


def pytest_report_header(config):
    return _under_test()


def pytest_terminal_summary(terminalreporter):
    # Also at the end, where `pytest -q` shows it.
    terminalreporter.write_line(_under_test())


@pytest.fixture(params=BACKENDS)
def backend(request):
    with lf.use(request.param):
        yield request.param
