"""The OAuth 2.1 resource server, against a real authorization server (``oauth_server``: Authlib, RS256 JWTs):
the MCP SDK's OAuth client end to end, then each bad token refused with the right status and nothing written.
The server keeps its static keys too: either credential is accepted."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
import redis
from mcp import ClientSession
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from lib.composition import open_stores
from mcp_service.auth.tokens import JwtVerifier
from mcp_service.policy_kb import create_app
from tests.conftest import free_port
from tests.mcp_http import mcp_http_client
from tests.mcp_service.conftest import FULL_KEY, MCP_HEADERS, READ_KEY, Service, bearer, running, service_settings
from tests.mcp_service.oauth_server import SECRET, Issuer, running_issuer, token
from tests.polling import eventually_async

OAUTH_DB = 12


class MemoryTokens:
    """The SDK client's ``TokenStorage``, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with running_issuer() as running:
        yield running


@pytest.fixture(scope="module")
def service(issuer: Issuer, service_base: Path, redis_url: str, chroma_dir: Path) -> Iterator[Service]:
    """policy-kb over an empty registry, with both static keys and OAuth (JWKS refetched on any unknown kid)."""
    port = free_port()
    settings = service_settings(
        service_base,
        redis_url,
        chroma_dir,
        OAUTH_DB,
        oauth_issuer_url=issuer.url,
        policy_kb_port=port,
        oauth_jwks_min_refresh_seconds=0,
        host="127.0.0.1",
    )
    redis.Redis.from_url(settings.redis.url or "").flushdb()
    stores = open_stores(settings)
    with running(create_app(settings, stores=stores, warm=False), port=port) as url:
        yield Service(url, stores, settings)


def create_policy(service: Service, credential: dict[str, str], source: str) -> httpx.Response:
    body = {"source": source, "title": source, "category": "national_policy"}
    return httpx.post(f"{service.url}/api/v1/policies", json=body, headers=credential, timeout=30)


def remove_over_mcp(service: Service, credential: dict[str, str]) -> httpx.Response:
    arguments = {"source": "NOPE", "revision_id": "r"}
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "remove_policy_revision", "arguments": arguments},
    }
    return httpx.post(service.mcp, json=call, headers=MCP_HEADERS | credential, timeout=30)


def policy_exists(service: Service, source: str) -> bool:
    return httpx.get(f"{service.url}/api/v1/policies/{source}", headers=bearer(FULL_KEY)).status_code == 200


def test_protected_resource_metadata_names_the_issuer_and_the_scopes(service: Service, issuer: Issuer) -> None:
    for suffix in ("", "/mcp"):
        document = httpx.get(f"{service.url}/.well-known/oauth-protected-resource{suffix}").json()
        assert document["resource"] == service.url + suffix
        assert document["authorization_servers"] == [issuer.url]
        assert document["scopes_supported"] == ["policy:read", "policy:write"]
    challenge = httpx.get(f"{service.url}/api/v1/policies").headers["www-authenticate"]
    assert f'resource_metadata="{service.url}/.well-known/oauth-protected-resource/mcp"' in challenge
    assert 'scope="policy:read policy:write"' in challenge


@pytest.mark.anyio
async def test_the_sdk_client_discovers_gets_a_token_lists_and_calls_tools(
    service: Service, issuer: Issuer, caplog: pytest.LogCaptureFixture
) -> None:
    provider = ClientCredentialsOAuthProvider(
        service.mcp, MemoryTokens(), "agent-write", SECRET, scope="policy:read policy:write", issuer=issuer.url
    )
    with caplog.at_level(logging.INFO, logger="policy_kb.audit"):
        async with (
            mcp_http_client(auth=provider) as http,
            streamable_http_client(service.mcp, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert {"search_policy", "ingest_policy_revision"} <= names
            listed = await session.call_tool("list_policy_documents", {})
            assert not listed.is_error and listed.structured_content == {
                "status": "success",
                "policy_count": 0,
                "policies": [],
            }
            removed = await session.call_tool("remove_policy_revision", {"source": "NOPE", "revision_id": "r"})
            assert removed.structured_content is not None  # the write ran (no scope refusal): nothing to remove
            assert removed.structured_content["error_type"] == "policy_not_found", removed.structured_content
        # The audit line is written once the response has gone, so the client can have it first: wait for it.
        await eventually_async(
            lambda: any("tool=remove_policy_revision" in r.getMessage() for r in caplog.records),
            what="the write's audit line",
        )
    assert provider.context.current_tokens is not None  # the token came from the issuer, not from this test
    claims = jwt.decode(provider.context.current_tokens.access_token, options={"verify_signature": False})
    assert claims["aud"] == service.mcp and claims["iss"] == issuer.url
    audits = [r.getMessage() for r in caplog.records if r.name == "policy_kb.audit"]
    assert any("caller=sub:agent-write" in a and "tool=remove_policy_revision" in a for a in audits), audits
    assert not any(provider.context.current_tokens.access_token in r.getMessage() for r in caplog.records)


def test_static_keys_keep_working_next_to_oauth(service: Service, issuer: Issuer) -> None:
    assert create_policy(service, bearer(FULL_KEY), "KEYED").status_code == 201
    refused = create_policy(service, bearer(READ_KEY), "KEYED2")
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    assert httpx.get(f"{service.url}/api/v1/policies", headers=bearer(READ_KEY)).status_code == 200
    written = token(issuer, "agent-write", "policy:read policy:write", service.url)
    assert create_policy(service, bearer(written), "TOKENED").status_code == 201  # REST takes tokens too
    assert policy_exists(service, "KEYED") and policy_exists(service, "TOKENED")


def b64(value: bytes) -> str:
    return base64.urlsafe_b64encode(value).rstrip(b"=").decode()


def unsigned(claims: dict[str, Any]) -> str:
    return f"{b64(json.dumps({'alg': 'none', 'typ': 'JWT'}).encode())}.{b64(json.dumps(claims).encode())}."


def hs256_with_public_key(issuer: Issuer, audience: str) -> str:
    """The classic confusion: the issuer's published public key used as an HMAC secret (by hand: PyJWT
    itself refuses to sign that way)."""
    header = {"alg": "HS256", "typ": "JWT", "kid": issuer.keys[0].kid}
    signing_input = (
        f"{b64(json.dumps(header).encode())}.{b64(json.dumps(issuer.claims(audience, 'policy:write')).encode())}"
    )
    signature = hmac.new(issuer.keys[0].as_pem(private=False), signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64(signature)}"


BAD_TOKENS = {
    "another_audience": lambda i, s: token(i, "agent-write", "policy:read policy:write", "http://elsewhere:9"),
    "expired": lambda i, s: token(i, "agent-expired", "policy:read policy:write", s.url),
    "unknown_key": lambda i, s: i.foreign_token(s.url),
    "alg_none": lambda i, s: unsigned(i.claims(s.url, "policy:read policy:write")),
    "hs256_public_key": lambda i, s: hs256_with_public_key(i, s.url),
}


@pytest.mark.parametrize("case", list(BAD_TOKENS))
def test_a_bad_token_gets_401_and_writes_nothing(service: Service, issuer: Issuer, case: str) -> None:
    credential = bearer(BAD_TOKENS[case](issuer, service))
    response = create_policy(service, credential, f"BAD-{case}")
    assert response.status_code == 401, response.text
    assert response.json()["error"]["code"] == "unauthorized"
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    assert remove_over_mcp(service, credential).status_code == 401
    assert httpx.get(f"{service.url}/api/v1/policies", headers=credential).status_code == 401
    assert not policy_exists(service, f"BAD-{case}")


def test_a_read_scoped_token_reads_but_gets_403_insufficient_scope_on_a_write(service: Service, issuer: Issuer) -> None:
    credential = bearer(token(issuer, "agent-read", "policy:read policy:write", service.url))  # write not granted
    assert httpx.get(f"{service.url}/api/v1/policies", headers=credential).status_code == 200
    response = create_policy(service, credential, "READER")
    assert response.status_code == 403 and response.json()["error"]["code"] == "insufficient_scope"
    challenge = response.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="policy:write"' in challenge
    over_mcp = remove_over_mcp(service, credential)
    assert over_mcp.status_code == 403 and "remove_policy_revision" in over_mcp.json()["error"]["message"]
    escaped = (
        rb'{"jsonrpc": "2.0", "id": 1, "method": "tools\/call", "params": {"name": "remove_policy_revision", '
        rb'"arguments": {"source": "NOPE", "revision_id": "r"}}}'
    )  # the same call, "/" escaped as JSON allows
    assert httpx.post(service.mcp, content=escaped, headers=MCP_HEADERS | credential).status_code == 403
    assert not policy_exists(service, "READER")
    other_server = bearer(token(issuer, "agent-read", "kb:read", service.url))  # right audience, no policy scope
    assert httpx.get(f"{service.url}/api/v1/policies", headers=other_server).status_code == 403


def test_a_token_signed_with_a_rotated_key_is_accepted_after_the_jwks_is_refetched(
    service: Service, issuer: Issuer
) -> None:
    before = bearer(token(issuer, "agent-read", "policy:read", service.url))
    assert httpx.get(f"{service.url}/api/v1/policies", headers=before).status_code == 200  # the first key cached
    issuer.rotate()
    rotated = token(issuer, "agent-write", "policy:read policy:write", service.url)
    assert jwt.get_unverified_header(rotated)["kid"] == issuer.keys[-1].kid != issuer.keys[0].kid
    assert create_policy(service, bearer(rotated), "ROTATED").status_code == 201
    assert policy_exists(service, "ROTATED")


@pytest.mark.anyio
async def test_unknown_kids_refetch_the_jwks_at_most_once_per_interval(service: Service, issuer: Issuer) -> None:
    verifier = JwtVerifier(service.settings.oauth.model_copy(update={"jwks_min_refresh_seconds": 3600}), [service.url])
    assert await verifier.verify_token(token(issuer, "agent-read", "policy:read", service.url)) is not None
    fetched = verifier.fetched_at
    issuer.rotate()
    rotated = token(issuer, "agent-read", "policy:read", service.url)
    assert await verifier.verify_token(rotated) is None  # a refetch just happened: the new kid is not looked for
    assert verifier.fetched_at == fetched
    verifier.min_refresh_s = 0
    assert await verifier.verify_token(rotated) is not None
