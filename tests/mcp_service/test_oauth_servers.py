"""The other three servers (document-store, kb, governance) are OAuth 2.1 resource servers too, each for its own
resource URL and scopes, against the real authorization server (``oauth_server``) and real requests to each
running server: metadata, a right token reads, another server's token gets 401, a read token gets 403 on a
write, and the kb server reaches its engine with its own key, never the caller's token.
``test_oauth`` covers policy-kb and the bad-token matrix, which every server shares (``auth``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from lib.composition import open_stores
from mcp_service.__main__ import SERVERS
from tests.conftest import free_port
from tests.mcp_service.conftest import FULL_KEY, INITIALIZE, MCP_HEADERS, bearer, mcp_session, running, service_settings
from tests.mcp_service.oauth_server import Issuer, running_issuer, token
from tests.mcp_service.tool_names import SERVER_TOOLS
from tests.mcp_service.tools import call

pytestmark = pytest.mark.anyio

OAUTH_DB = 12
"""``test_oauth``'s database: each module flushes it when it starts."""


@dataclass(frozen=True)
class Target:
    """A server under test: its scope prefix, the setting its port is, a read tool and a write tool to call."""

    scope: str
    port_setting: str
    read: tuple[str, dict[str, Any]]
    write: tuple[str, dict[str, Any]] | None


TARGETS = {
    "document-store": Target(
        "documents",
        "document_store_port",
        ("list_ingested_documents", {"application_ref": "A/1"}),
        ("ingest_document", {"file_path": "/nope.pdf", "application_ref": "A/1"}),
    ),
    "kb": Target("kb", "kb_mcp_port", ("kb_status", {}), ("kb_update_note", {"document_id": 999999, "text": "x"})),
    "governance": Target("governance", "governance_port", ("list_governance_documents", {}), None),
}


class EngineWitness:
    """The kb app as served, recording the ``Authorization`` of every request that reaches its engine
    (``/api/v1``): what the kb tools present to it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.seen: list[str] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/api/v1/"):
            self.seen.append(Headers(scope=scope).get("authorization", ""))
        await self.app(scope, receive, send)


@dataclass
class Served:
    name: str
    url: str
    target: Target
    engine_saw: list[str] = field(default_factory=list)

    @property
    def mcp(self) -> str:
        return f"{self.url}/mcp"

    def token(self, issuer: Issuer, scope: str, *, client: str = "agent-write", resource: str | None = None) -> str:
        return token(issuer, client, scope, resource or self.mcp)


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with running_issuer() as running_one:
        yield running_one


@pytest.fixture(scope="module")
def servers(issuer: Issuer, service_base: Path, redis_url: str, chroma_dir: Path) -> Iterator[dict[str, Served]]:
    """document-store, kb (its engine mounted, under ``MCP_API_KEY``) and governance over one set of stores, each
    on its own port with OAuth on (static keys stay set: either is accepted)."""
    settings = service_settings(
        service_base, redis_url, chroma_dir, OAUTH_DB, oauth_issuer_url=issuer.url, host="127.0.0.1"
    )
    redis.Redis.from_url(settings.redis.url or "").flushdb()
    stores = open_stores(settings)
    with ExitStack() as stack:
        served = {}
        for name, target in TARGETS.items():
            port = free_port()
            app = (
                SERVERS[name]
                .load()
                .create_app(settings.replace(**{target.port_setting: port}), stores=stores, warm=False)
            )
            witness = EngineWitness(app)
            url = stack.enter_context(running(witness, port=port))
            served[name] = Served(name, url, target, witness.seen)
        yield served


def test_each_server_publishes_its_own_resource_and_scopes(servers: dict[str, Served], issuer: Issuer) -> None:
    for served in servers.values():
        scopes = [f"{served.target.scope}:read"] + ([f"{served.target.scope}:write"] if served.target.write else [])
        for suffix in ("", "/mcp"):
            document = httpx.get(f"{served.url}/.well-known/oauth-protected-resource{suffix}").json()
            assert document["resource"] == served.url + suffix, served.name
            assert document["authorization_servers"] == [issuer.url]
            assert document["scopes_supported"] == scopes, served.name
        challenge = httpx.post(served.mcp, json={}, headers=MCP_HEADERS).headers["www-authenticate"]
        assert f'resource_metadata="{served.url}/.well-known/oauth-protected-resource/mcp"' in challenge
        assert f'scope="{" ".join(scopes)}"' in challenge, served.name


@pytest.mark.parametrize("name", list(TARGETS))
async def test_a_token_for_the_server_lists_its_tools_and_calls_a_read_tool(
    servers: dict[str, Served], issuer: Issuer, name: str
) -> None:
    served = servers[name]
    credential = served.token(issuer, f"{served.target.scope}:read", client="agent-read")
    async with mcp_session(served.url, key=credential) as session:
        listed = {tool.name for tool in (await session.list_tools()).tools}
    reads, _ = SERVER_TOOLS[name]
    assert listed == reads  # a read scope lists only what it may call (tools.access)
    tool, arguments = served.target.read
    assert (await call(served.url, tool, arguments, key=credential))["status"] == "success"


def test_a_token_minted_for_another_server_gets_401(servers: dict[str, Served], issuer: Issuer) -> None:
    """Each server is handed a token with its own scopes but the next server's audience (the same issuer,
    host and path; only the port differs)."""
    names = list(servers)
    for name, other in zip(names, names[1:] + names[:1], strict=True):
        served, scope = servers[name], f"{servers[name].target.scope}:read"
        for resource in (servers[other].url, servers[other].mcp):
            foreign = bearer(served.token(issuer, scope, resource=resource))
            response = httpx.post(served.mcp, json=INITIALIZE, headers=MCP_HEADERS | foreign)
            assert response.status_code == 401, (name, resource)
            assert 'error="invalid_token"' in response.headers["www-authenticate"]
        assert (
            httpx.post(
                served.mcp, json=INITIALIZE, headers=MCP_HEADERS | bearer(served.token(issuer, scope))
            ).status_code
            == 200
        )


@pytest.mark.parametrize("name", [name for name, target in TARGETS.items() if target.write])
async def test_a_read_scoped_token_gets_403_insufficient_scope_on_a_write_tool(
    servers: dict[str, Served], issuer: Issuer, name: str
) -> None:
    served = servers[name]
    assert served.target.write is not None
    tool, arguments = served.target.write
    scope = served.target.scope
    asked = f"{scope}:read {scope}:write"  # agent-read is granted the read scope only
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    reader = bearer(served.token(issuer, asked, client="agent-read"))
    response = httpx.post(served.mcp, json=body, headers=MCP_HEADERS | reader)
    assert response.status_code == 403, response.text
    error = response.json()["error"]
    assert error["code"] == "insufficient_scope" and tool in error["message"]
    challenge = response.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and f'scope="{scope}:write"' in challenge
    written = await call(served.url, tool, arguments, key=served.token(issuer, asked))  # the write scope passes
    assert written["status"] == "error" and written["error_type"] in ("path_not_allowed", "document_not_found")


def test_governance_reads_with_governance_read_and_refuses_another_servers_scope(
    servers: dict[str, Served], issuer: Issuer
) -> None:
    served = servers["governance"]
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "list_governance_documents", "arguments": {}},
    }
    ok = httpx.post(served.mcp, json=body, headers=MCP_HEADERS | bearer(served.token(issuer, "governance:read")))
    assert ok.status_code == 200 and ok.json()["result"]["structuredContent"]["status"] == "success"
    other = bearer(served.token(issuer, "policy:read policy:write"))  # this server's audience, policy's scopes
    refused = httpx.post(served.mcp, json=body, headers=MCP_HEADERS | other)
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "insufficient_scope"
    assert 'scope="governance:read"' in refused.headers["www-authenticate"]


async def test_the_kb_server_reaches_its_mounted_engine_in_process_never_with_the_callers_token(
    servers: dict[str, Served], issuer: Issuer
) -> None:
    """The engine's HTTP API takes its static key only; the kb tools call the engine mounted here in process
    (``mcp_service.kb_engine_local``), so no request reaches ``/api/v1`` at all, let alone with the token."""
    served = servers["kb"]
    credential = served.token(issuer, "kb:read")
    engine = f"{served.url}/api/v1/status"
    assert httpx.get(engine, headers=bearer(credential)).status_code == 401  # the engine takes its key only
    assert httpx.get(engine, headers=bearer(FULL_KEY)).status_code == 200
    served.engine_saw.clear()
    status = await call(served.url, "kb_status", key=credential)
    assert status["status"] == "success" and status["engine_url"] == served.url
    assert served.engine_saw == []


def test_the_kb_server_will_not_mount_an_open_engine_behind_oauth(
    issuer: Issuer, tmp_path: Path, redis_url: str, chroma_dir: Path
) -> None:
    """With OAuth on and no ``MCP_API_KEY`` the mounted engine would take anyone (it takes static keys only)."""
    settings = service_settings(
        tmp_path, redis_url, chroma_dir, OAUTH_DB, oauth_issuer_url=issuer.url, mcp_api_key=None
    )
    with pytest.raises(ValueError, match="MCP_API_KEY"):
        SERVERS["kb"].load().create_app(settings, warm=False)  # refused before any store is opened
