"""Free loopback ports for the processes a stack, a test or a benchmark starts.

By default the kernel picks one (bind to port 0, read it, release it). That port comes from the ephemeral range
(``/proc/sys/net/ipv4/ip_local_port_range``, 32768-60999 here), the same range every outgoing connection draws
its source port from; between the release and the server's own bind, another process on the machine (a second
pytest-xdist worker picking a port, or any client connecting anywhere) can be handed it. With
``POLICY_KB_PORT_RANGE=LOW-HIGH`` set (the tests' conftest gives each xdist worker a range of its own below the
ephemeral range), ports are drawn at random from that range instead, each checked by binding it, and none is
handed out twice by one process until the range is used up. It is an environment variable, not a setting of
``lib/config/``, because it must reach the subprocesses the caller starts (``policy-kb stack up --free-ports``).
"""

from __future__ import annotations

import os
import random
import socket

PORT_RANGE_ENV = "POLICY_KB_PORT_RANGE"
"""``LOW-HIGH`` (inclusive): where :func:`free_port` draws from; unset = the kernel's choice."""

_handed_out: set[int] = set()


def port_range() -> tuple[int, int] | None:
    """The range of ``POLICY_KB_PORT_RANGE``, or None when unset (a malformed value raises ``ValueError``)."""
    raw = os.environ.get(PORT_RANGE_ENV, "").strip()
    if not raw:
        return None
    low, _, high = raw.partition("-")
    bounds = int(low), int(high)
    if not 1024 <= bounds[0] <= bounds[1] <= 65535:
        raise ValueError(f"{PORT_RANGE_ENV}={raw!r}: expected LOW-HIGH within 1024-65535")
    return bounds


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A loopback TCP port nothing listens on now: from ``POLICY_KB_PORT_RANGE`` when set, else the kernel's."""
    bounds = port_range()
    if bounds is None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return int(sock.getsockname()[1])
    low, high = bounds
    if len(_handed_out) >= (high - low + 1) // 2:
        _handed_out.clear()  # a long session: ports handed out long ago are free again or still checked by binding
    for _ in range(1000):
        port = random.randint(low, high)
        if port not in _handed_out and _bindable(port):
            _handed_out.add(port)
            return port
    raise OSError(f"no free port found in {PORT_RANGE_ENV}={low}-{high} after 1000 tries")
