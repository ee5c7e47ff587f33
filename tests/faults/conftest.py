"""The fault tests: real servers of the local stack (``deployments.stack.process``: redis-server with AOF,
``chroma run``, moto's S3 server, a Prefect worker) stopped, killed and restarted under a running service.

One Prefect API serves the whole faults session (flows run in the test process against it, as the
service's background runner does; the worker test runs a real worker on it). Each module starts the
store processes it breaks, on free ports in a folder of its own, once.
"""

from __future__ import annotations

import os

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")


import pytest


@pytest.fixture(scope="session", autouse=True)
def _prefect(prefect_api: str) -> str:
    """The session's one Prefect test server (``tests/conftest.py``): two harnesses in one process leave
    Prefect's events client on the first, so the flow tests' task runs would never be recorded."""
    return prefect_api
