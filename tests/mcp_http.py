"""The HTTP client the tests and benchmarks hand the MCP SDK's Streamable HTTP transport.

The SDK's own factory (``create_mcp_http_client``) lives in a private module, which nothing here imports
(issue 47; ``tests/lib/test_import_rules.py``). This is the same client: httpx2, 30 s to connect, write and
wait for the pool, 300 s to read, since a server may hold an event stream open.
"""

from __future__ import annotations

import httpx2

TIMEOUT = httpx2.Timeout(30.0, read=300.0)


def mcp_http_client(headers: dict[str, str] | None = None, auth: httpx2.Auth | None = None) -> httpx2.AsyncClient:
    """A new client with the transport's timeouts (enter it as a context manager: it owns connections)."""
    return httpx2.AsyncClient(headers=headers, auth=auth, timeout=TIMEOUT)
