"""A client of the stack's supervisord: its XML-RPC API (``supervisor.getAllProcessInfo``, ...) over the
unix socket of ``StackLayout.supervisor_socket``, each call bounded by ``RPC_TIMEOUT_S`` (supervisor's own
transport has no timeout on unix sockets, and ``status`` must never hang on a wedged daemon)."""

from __future__ import annotations

import http.client
import socket
import xmlrpc.client
from pathlib import Path
from typing import Any

from deployments.stack.layout import StackLayout

RPC_TIMEOUT_S = 5.0


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: Path) -> None:
        super().__init__("localhost", timeout=RPC_TIMEOUT_S)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(RPC_TIMEOUT_S)
        sock.connect(str(self._path))
        self.sock = sock


class _UnixTransport(xmlrpc.client.Transport):
    def __init__(self, path: Path) -> None:
        super().__init__()
        self._path = path

    def make_connection(self, host: Any) -> http.client.HTTPConnection:
        return _UnixConnection(self._path)


def supervisor(layout: StackLayout) -> Any:
    """The ``supervisor`` namespace of the stack's XML-RPC API (raises ``OSError`` or ``xmlrpc.client.Error``)."""
    proxy = xmlrpc.client.ServerProxy("http://localhost", transport=_UnixTransport(layout.supervisor_socket))
    return proxy.supervisor


def process_info(layout: StackLayout) -> dict[str, dict[str, Any]]:
    """``getAllProcessInfo`` by process name (state, statename, pid, spawnerr, ...); empty when supervisord
    does not answer."""
    try:
        return {info["name"]: info for info in supervisor(layout).getAllProcessInfo()}
    except (OSError, xmlrpc.client.Error):
        return {}
