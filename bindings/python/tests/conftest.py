"""What the test files share: the ``backend`` fixture, which runs a test
once on each backend every machine has (``cpu``, and ``sim``, the
simulated GPU), inside ``with lazyfuse.use(backend)``."""

import pytest

import lazyfuse as lf


@pytest.fixture(params=["cpu", "sim"])
def backend(request):
    with lf.use(request.param):
        yield request.param
