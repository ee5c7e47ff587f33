"""What a caller may do and what a request needs: read, or write.

REST ``GET``/``HEAD``/``OPTIONS`` read, and so do the POSTs in ``READ_POSTS`` (their body is a question); other
REST methods write. MCP traffic reads except a ``tools/call`` of a write tool, one whose ``readOnlyHint`` is not
true in the server's own tool list (``tools.registration.write_tools``). An OAuth token reads with
``<scope>:read`` and reads and writes with ``<scope>:write``, ``<scope>`` being the server's (``policy``,
``documents``, ``kb``, ``governance``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp.server.auth.provider import AccessToken, TokenVerifier

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
READ_POSTS = frozenset({"/api/v1/quotes/verify", "/api/v1/search"})
"""REST POSTs that read, as their MCP tools do (``readOnlyHint``): the body is a question, not a change (a quote
check; the kb engine's search)."""


@dataclass(frozen=True)
class Caller:
    """Who a request comes from and what it may do. ``name`` is never a token."""

    name: str
    read: bool
    write: bool
    token: bool = False

    def may(self, write: bool) -> bool:
        return self.write if write else self.read


@dataclass(frozen=True)
class OAuthResource:
    """This server as an OAuth protected resource: its verifier, resource URL, metadata URL and scope prefix.
    ``writes`` is false for a server that only reads (governance): it publishes and asks for ``<scope>:read``
    alone, never a write scope no authorization server defines."""

    verifier: TokenVerifier
    resource_url: str
    metadata_url: str
    scope: str
    writes: bool = True

    @property
    def scopes(self) -> list[str]:
        return [f"{self.scope}:read", f"{self.scope}:write"] if self.writes else [f"{self.scope}:read"]

    def caller(self, verified: AccessToken) -> Caller:
        """What a verified token may do here, by its scopes."""
        read, write = (f"{self.scope}:{access}" in verified.scopes for access in ("read", "write"))
        name = f"sub:{verified.subject}" if verified.subject else f"client:{verified.client_id}"
        return Caller(name, read=read or write, write=write, token=True)

    def needed(self, writes: bool) -> str:
        return f"{self.scope}:{'write' if writes else 'read'}"


def rest_writes(method: str, path: str) -> bool:
    """Whether a REST (non-MCP-POST) request writes."""
    if method in READ_METHODS or (path == "/mcp" and method == "DELETE"):
        return False
    return not (method == "POST" and path in READ_POSTS)


def write_needs(caller: Caller, oauth: OAuthResource | None) -> str:
    """What ``caller``, who may only read, would need to write: its token a write scope, or a full key."""
    if caller.token and oauth is not None:
        return f"the scope {oauth.scope}:write"
    return "an API key that may write (MCP_API_KEY), not the read-only key"


def write_tool_called(parsed: Any, writes: frozenset[str]) -> str | None:
    """The first write tool a parsed JSON-RPC message (or batch) calls.

    Deliberately looser than the SDK's ``mcp_types.jsonrpc_message_adapter``: any object with
    ``"method": "tools/call"`` naming a write tool is refused, whether or not a transport would accept
    the rest of it, so no difference between this parse and a transport's can let a write through."""
    for message in parsed if isinstance(parsed, list) else [parsed]:
        if isinstance(message, dict) and message.get("method") == "tools/call":
            params = message.get("params")
            name = params.get("name") if isinstance(params, dict) else None
            if name in writes:
                return str(name)
    return None
