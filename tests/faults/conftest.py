"""The fault tests: real servers of the local stack (``deployments.stack.process``: redis-server with AOF,
``chroma run``, ``moto_server``, a Prefect worker) stopped, killed and restarted under a running service.

One Prefect API serves the whole faults session (flows run in the test process against it, as the
service's background runner does; the worker test runs a real worker on it). Each module starts the
store processes it breaks, on free ports in a folder of its own, once.
"""

from __future__ import annotations

import os

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")


from collections.abc import Iterator

import pytest

from tests.conftest import prefect_harness


@pytest.fixture(scope="session", autouse=True)
def prefect_api() -> Iterator[str]:
    """A Prefect server of the fault tests' own: their worker registers every deployment on it and runs them,
    which must not change what the flow tests' server holds."""
    with prefect_harness() as url:
        yield url
