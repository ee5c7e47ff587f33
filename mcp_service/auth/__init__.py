"""Authentication and authorisation, one module a job: who may call what, for every route but ``/health`` and
the protected-resource metadata, as a plain ASGI middleware.
The web page (``/ui``, ``mcp_service.ui``) is exempt here because it checks the same keys itself, at its sign-in.

Credentials (spec 000 FR-010, and the MCP authorization specification's resource server):

- ``MCP_API_KEY``: a static key that may do everything (``key:full``); ``MCP_READ_API_KEY`` one that may only
  read (``key:read``). Compared with ``hmac.compare_digest``.
- ``OAUTH_ISSUER_URL``: JWT access tokens of that authorization server (``tokens.JwtVerifier``), for this
  server's resource URL. A token may read with ``<scope>:read`` and read and write with ``<scope>:write``,
  ``<scope>`` being the server's (``policy``, ``documents``, ``kb``, ``governance``). With keys and OAuth
  both configured, either is accepted. Neither configured: the server refuses to start (``require_credentials``)
  unless ``ALLOW_UNAUTHENTICATED`` is set and it binds to loopback; then no checks (decision 0045, a deviation
  from spec 000 FR-010's open default).

What a request needs: REST ``GET``/``HEAD`` read; other REST methods write; MCP traffic reads except a
``tools/call`` of a write tool, one whose ``readOnlyHint`` is not true in the server's own tool list
(``tools.registration.write_tools``). To see which tool an MCP POST calls, its JSON body (at most
``MAX_INSPECTED_BODY`` bytes, as the MCP transports themselves allow) is read here and replayed to the app.
An MCP caller who may read but not write is let through, marked (``tools.access.read_only``): the MCP server
lists it the read tools only and answers a write call with a tool error, so its session goes on; only a token's
write on ``/mcp`` is still refused here, with the 403 scope challenge an MCP client steps up from.
So is any JSON body of a REST write: each is parsed once with ``bodies.parse_json``, and one that is not JSON or
nests deeper than ``bodies.MAX_JSON_DEPTH`` gets 400 (``bodies.malformed_response``) before the app sees it.

Missing header, another scheme and a bad key or token get 401 with the spec's bodies; with OAuth on, its
``WWW-Authenticate`` names the resource metadata and the scopes (RFC 9728), so an MCP client can go and get a
token. A credential that may not do what the request does gets 403 (``error="insufficient_scope"``). Then the
caller's budget (``rate_limit``): over it, 429 with ``Retry-After`` (counted: ``policy_kb_rate_limited_total``
by server). The caller's name is set for the request (``lib.callers``) and every write gets an
``audit.write`` line with it and the response's status.
Every refusal is logged at WARNING with client IP, method and path, never with the token.

Modules: ``keys`` (static keys, constant-time), ``tokens`` (JWT access tokens of the issuer), ``scopes`` (the
caller, what a request needs), ``startup`` (refusing to serve open), ``middleware`` (the ASGI middleware).
"""

from mcp_service.auth.keys import StaticKeys, configured_key
from mcp_service.auth.middleware import BAD_FORMAT, INVALID, MISSING, RATE_LIMITED_RPC_CODE, BearerAuthMiddleware
from mcp_service.auth.scopes import READ_METHODS, READ_POSTS, Caller, OAuthResource
from mcp_service.auth.startup import is_loopback, require_credentials

__all__ = [
    "BAD_FORMAT",
    "INVALID",
    "MISSING",
    "RATE_LIMITED_RPC_CODE",
    "READ_METHODS",
    "READ_POSTS",
    "BearerAuthMiddleware",
    "Caller",
    "OAuthResource",
    "StaticKeys",
    "configured_key",
    "is_loopback",
    "require_credentials",
]
