"""Free ports: each pytest-xdist worker draws from a range of its own, below the kernel's ephemeral range."""

from __future__ import annotations

import itertools
import os
import socket

import pytest

from deployments.stack.ports import PORT_RANGE_ENV, free_port, port_range
from tests.conftest import ephemeral_port_low, worker_port_range


def test_this_session_draws_its_ports_from_its_workers_range_below_the_ephemeral_one() -> None:
    bounds = port_range()
    assert bounds is not None, f"tests/conftest.py sets {PORT_RANGE_ENV}"
    assert bounds == worker_port_range(
        os.environ.get("PYTEST_XDIST_WORKER"),
        int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")),
        ephemeral_port_low(),
    )
    ports = [free_port() for _ in range(200)]
    assert len(set(ports)) == len(ports), "no port is handed out twice"
    assert all(bounds[0] <= port <= bounds[1] < ephemeral_port_low() for port in ports)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", ports[-1]))  # and it is free to listen on


@pytest.mark.parametrize("workers", [2, 3, 4])
def test_worker_ranges_are_disjoint_and_below_the_ephemeral_range(workers: int) -> None:
    ranges = sorted(worker_port_range(f"gw{i}", workers, 32768) for i in range(workers))
    assert all(low <= high for low, high in ranges)
    assert all(a[1] < b[0] for a, b in itertools.pairwise(ranges))
    assert ranges[0][0] >= 10000 and ranges[-1][1] < 32768
    assert worker_port_range(None, 1, 32768) == (10000, 32767)


def test_a_port_in_use_is_never_handed_out(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        monkeypatch.setenv(PORT_RANGE_ENV, f"{taken.getsockname()[1]}-{taken.getsockname()[1]}")
        with pytest.raises(OSError, match="no free port"):
            free_port()


def test_a_malformed_range_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PORT_RANGE_ENV, "80-90")
    with pytest.raises(ValueError, match=PORT_RANGE_ENV):
        free_port()
