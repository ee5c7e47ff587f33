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
from prefect.settings import PREFECT_API_URL, PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings
from prefect.testing.utilities import prefect_test_harness

HARNESS_START_TIMEOUT_S = 90


@pytest.fixture(scope="session", autouse=True)
def prefect_api() -> Iterator[str]:
    """One Prefect server (SQLite in a temp dir) for every fault test; its API URL."""
    with (
        prefect_test_harness(server_startup_timeout=HARNESS_START_TIMEOUT_S),
        temporary_settings({PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}),
    ):
        url = PREFECT_API_URL.value()
        assert url, "the Prefect test harness did not set an API URL"
        yield url
