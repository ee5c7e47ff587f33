"""What each of the four servers tells an agent before its first question, over Streamable HTTP with the SDK's
client: the same capabilities on ``initialize`` (2025-11-25) and ``server/discover`` (2026-07-28), none it does
not serve; the JSON-RPC errors for names it does not know; ``tools/list`` within its budget, with every date
argument typed as a date."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import SecretStr

from mcp_service.__main__ import SERVERS
from tests.mcp_http import mcp_http_client
from tests.mcp_service.conftest import FULL_KEY, Service, bearer, running

pytestmark = pytest.mark.anyio

LEGACY, MODERN = "legacy", "auto"
"""The SDK client's modes: the ``initialize`` handshake, and ``server/discover`` (2026-07-28) first."""
TOOLS_LIST_BUDGET = 16_000
"""Characters of ``tools/list`` (its JSON, output schemas included) a server may cost a session."""
PROMPTS = {
    "policy-kb": "check_policy_basis",
    "document-store": "review_application_documents",
    "kb": "answer_from_notes",
    "governance": "answer_from_governance",
}
"""Each server's one prompt."""
SERVERS_WITH_RESOURCES = {"policy-kb"}
EXTENSIONS = {
    "policy-kb": {"io.modelcontextprotocol/ui", "io.modelcontextprotocol/tasks"},
    "document-store": {"io.modelcontextprotocol/tasks"},
}
"""The SEP-2133 extensions each server offers: the citation viewer (``tools.policies.viewer``), and tasks for
the servers with an ingestion (``tools.tasks``)."""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def servers(fresh_service: Service) -> Iterator[dict[str, str]]:
    """Each of the four servers, as its ``create_app`` builds it, over the fresh service's stores: name -> URL."""
    settings = fresh_service.settings.replace(kb_mcp_api_key=SecretStr(FULL_KEY))
    urls = {"policy-kb": fresh_service.url}
    with (
        running(SERVERS["document-store"].load().create_app(settings, stores=fresh_service.stores, warm=False)) as docs,
        running(SERVERS["kb"].load().create_app(settings, stores=fresh_service.stores, warm=False)) as kb,
        running(SERVERS["governance"].load().create_app(settings, stores=fresh_service.stores, warm=False)) as gov,
    ):
        yield urls | {"document-store": docs, "kb": kb, "governance": gov}


@asynccontextmanager
async def client(url: str, mode: str) -> AsyncIterator[Client]:
    async with (
        mcp_http_client(headers=bearer(FULL_KEY)) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http), mode=mode) as connected,
    ):
        yield connected


def wire(model: Any) -> dict[str, Any]:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def test_each_server_advertises_the_same_capabilities_on_initialize_and_server_discover(
    servers: dict[str, str],
) -> None:
    for name, url in servers.items():
        async with client(url, LEGACY) as legacy, client(url, MODERN) as modern:
            assert (legacy.protocol_version, modern.protocol_version) == ("2025-11-25", "2026-07-28"), name
            handshake, discovered = wire(legacy.server_capabilities), wire(modern.server_capabilities)
        # SEP-2133 extensions exist from 2026-07-28 on: the SDK leaves them out of a 2025-11-25 handshake.
        extensions = discovered.pop("extensions", None)
        assert handshake == discovered, name
        expected: dict[str, Any] = {"tools": {"listChanged": False}, "prompts": {"listChanged": False}}
        if name in SERVERS_WITH_RESOURCES:
            expected["resources"] = {"subscribe": False, "listChanged": False}
        assert set(extensions or {}) == EXTENSIONS.get(name, set()), name
        assert handshake == expected, name


@pytest.mark.parametrize("mode", [LEGACY, MODERN])
async def test_an_unknown_prompt_is_invalid_params_and_a_known_one_renders(fresh_service: Service, mode: str) -> None:
    async with client(fresh_service.url, mode) as connected:
        listed = [prompt.name for prompt in (await connected.list_prompts()).prompts]
        with pytest.raises(MCPError) as unknown:
            await connected.get_prompt("no_such_prompt", {})
        known = await connected.get_prompt(
            "check_policy_basis", {"proposal": "Two houses on a garden plot", "date": "2025-06-01"}
        )
    assert listed == ["check_policy_basis"]
    assert unknown.value.error.code == INVALID_PARAMS and "no_such_prompt" in unknown.value.error.message
    text = known.messages[0].content.text  # type: ignore[union-attr]
    assert 'get_policy_snapshot(effective_date="2025-06-01")' in text and "> Two houses on a garden plot" in text


@pytest.mark.parametrize("mode", [LEGACY, MODERN])
async def test_an_unknown_tool_is_invalid_params_on_every_server_and_a_known_one_still_answers(
    servers: dict[str, str], mode: str
) -> None:
    """The specification lists an unknown tool among protocol errors (-32602), not tool results."""
    for name, url in servers.items():
        async with client(url, mode) as connected:
            with pytest.raises(MCPError) as unknown:
                await connected.call_tool("no_such_tool", {"query": "x"})
            listed = (await connected.list_tools()).tools
        assert unknown.value.error.code == INVALID_PARAMS, name
        assert unknown.value.error.message == "Unknown tool: no_such_tool", name
        assert listed, name  # the session went on
    async with client(servers["governance"], mode) as connected:
        known = await connected.call_tool("list_governance_documents", {})
    assert not known.is_error


@pytest.mark.parametrize("mode", [LEGACY, MODERN])
async def test_each_server_has_its_prompt_and_one_without_resources_lists_none_and_knows_no_name(
    servers: dict[str, str], mode: str
) -> None:
    for name, url in servers.items():
        async with client(url, mode) as connected:
            assert [prompt.name for prompt in (await connected.list_prompts()).prompts] == [PROMPTS[name]]
    async with client(servers["governance"], mode) as connected:
        answer = await connected.get_prompt("answer_from_governance", {"question": "Which PEP covers inline metadata?"})
        assert "query_governance(question=..., as_of=null)" in answer.messages[0].content.text  # type: ignore[union-attr]
        assert (await connected.list_resources()).resources == []
        assert (await connected.list_resource_templates()).resource_templates == []
        for call in (connected.get_prompt("anything", {}), connected.read_resource("policy://NPPF/revisions/r")):
            with pytest.raises(MCPError) as refused:
                await call
            assert refused.value.error.code == INVALID_PARAMS


async def test_every_tools_list_is_within_its_budget_and_types_its_dates(servers: dict[str, str]) -> None:
    dates = 0
    for name, url in servers.items():
        async with client(url, LEGACY) as connected:
            listed = await connected.list_tools()
        size = len(json.dumps(wire(listed), separators=(",", ":")))
        assert size <= TOOLS_LIST_BUDGET, (name, size)
        for tool in listed.tools:
            assert tool.output_schema is not None, tool.name
            assert "title" not in tool.input_schema, tool.name
            for argument, schema in tool.input_schema.get("properties", {}).items():
                is_date = argument.endswith("date") or argument == "as_of"
                assert (schema.get("format") == "date") == is_date, (tool.name, argument, schema)
                if is_date:
                    dates += 1
                    assert schema["examples"] == ["2025-06-01"], (tool.name, argument)
                if argument == "mode":
                    assert set(schema["enum"]) >= {"hybrid", "dense", "lexical"}, (tool.name, schema)
                if argument in ("n_results", "top_k"):
                    assert isinstance(schema.get("maximum"), int), (tool.name, argument)
    assert dates >= 11  # every date argument of the policy and governance tools
