"""Secure by default (decision 0045): no server starts without a credential unless ``ALLOW_UNAUTHENTICATED`` says
it may, and then only bound to loopback; the refusal names the setting that fixes it. Servers with a key start
on any host."""

from __future__ import annotations

import importlib

import httpx
import pytest
from pydantic import SecretStr

from lib.errors import InsecureConfigurationError
from mcp_service.auth import is_loopback
from tests.mcp_service.conftest import INITIALIZE, MCP_HEADERS, Service, running

SERVERS = {
    "mcp_service.policy_kb": "MCP_API_KEY",
    "mcp_service.document_store": "MCP_API_KEY",
    "mcp_service.kb": "KB_MCP_API_KEY",
    "mcp_service.governance": "GOVERNANCE_API_KEY",
}
NO_KEYS = {"mcp_api_key": None, "mcp_read_api_key": None, "kb_mcp_api_key": None, "governance_api_key": None}


def build(module: str, service: Service, **overrides: object) -> object:
    settings = service.settings.replace(**(NO_KEYS | overrides))
    return importlib.import_module(module).create_app(settings, stores=service.stores, warm=False)


@pytest.mark.parametrize("module", SERVERS)
def test_a_server_without_credentials_refuses_to_start(fresh_service: Service, module: str) -> None:
    with pytest.raises(InsecureConfigurationError) as refused:
        build(module, fresh_service, allow_unauthenticated=False, host="127.0.0.1")
    assert SERVERS[module] in refused.value.message and "ALLOW_UNAUTHENTICATED" in refused.value.message


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.1.2.3", "policy-kb.example"])
@pytest.mark.parametrize("module", SERVERS)
def test_an_open_server_refuses_a_host_that_is_not_loopback(fresh_service: Service, module: str, host: str) -> None:
    with pytest.raises(InsecureConfigurationError) as refused:
        build(module, fresh_service, allow_unauthenticated=True, host=host)
    assert "loopback" in refused.value.message and repr(host) in refused.value.message


def test_an_empty_key_is_no_key(fresh_service: Service) -> None:
    with pytest.raises(InsecureConfigurationError):
        build("mcp_service.policy_kb", fresh_service, allow_unauthenticated=False, mcp_api_key=SecretStr(""))


def test_the_kb_engine_mounted_without_its_key_refuses_too(fresh_service: Service) -> None:
    """The kb server's MCP paths have their key, but the engine it mounts at /api/v1 would be open."""
    with pytest.raises(InsecureConfigurationError) as refused:
        build("mcp_service.kb", fresh_service, allow_unauthenticated=False, kb_mcp_api_key=SecretStr("k" * 32))
    assert "kb-engine" in refused.value.message and "MCP_API_KEY" in refused.value.message


@pytest.mark.parametrize("module", SERVERS)
def test_a_server_with_a_key_starts_on_any_host(fresh_service: Service, module: str) -> None:
    keys = {
        "mcp_api_key": SecretStr("m" * 32),
        "kb_mcp_api_key": SecretStr("k" * 32),
        "governance_api_key": SecretStr("g" * 32),
    }
    assert build(module, fresh_service, allow_unauthenticated=False, host="0.0.0.0", **keys) is not None


def test_allowed_open_on_loopback_it_serves_without_a_key(fresh_service: Service) -> None:
    app = build("mcp_service.policy_kb", fresh_service, allow_unauthenticated=True, host="127.0.0.1")
    with running(app) as url:  # type: ignore[arg-type]
        assert httpx.post(f"{url}/mcp", json=INITIALIZE, headers=MCP_HEADERS).status_code == 200


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.2", False),
        ("", False),
        ("example.org", False),
    ],
)
def test_loopback_is_told_from_the_bind_address_alone(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
