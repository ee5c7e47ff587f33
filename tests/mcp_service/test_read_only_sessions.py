"""A caller who may only read, as an agent meets the server with the SDK's client over both transports: it lists
the read tools only, a write call answers a tool error naming the credential needed, and the session goes on."""

from __future__ import annotations

import json

import httpx
import pytest

from mcp_service.policy_kb import create_app
from tests.mcp_service.conftest import (
    FULL_KEY,
    INITIALIZE,
    MCP_HEADERS,
    READ_KEY,
    Service,
    bearer,
    mcp_session,
    running,
    sse_events,
)
from tests.mcp_service.tool_names import POLICY_READS, POLICY_WRITES
from tests.mcp_service.tools import text_is_a_rendering

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_a_read_key_lists_only_the_read_tools_and_a_refused_write_keeps_the_session(
    fresh_service: Service, transport: str
) -> None:
    async with mcp_session(fresh_service.url, key=READ_KEY, transport=transport) as session:
        listed = {tool.name for tool in (await session.list_tools()).tools}
        refused = await session.call_tool("remove_policy_revision", {"source": "NPPF", "revision_id": "rev_x"})
        after = await session.call_tool("list_policy_documents", {})
    assert listed == POLICY_READS
    assert refused.is_error and refused.structured_content is not None
    assert refused.structured_content["error_type"] == "forbidden"
    message = refused.structured_content["message"]
    assert "remove_policy_revision" in message and "MCP_API_KEY" in message
    text_is_a_rendering(refused.content[0].text, refused.structured_content)  # type: ignore[union-attr]
    assert not after.is_error and after.structured_content == {"status": "success", "policy_count": 0, "policies": []}


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_the_full_key_lists_every_tool_and_may_call_a_write(fresh_service: Service, transport: str) -> None:
    async with mcp_session(fresh_service.url, key=FULL_KEY, transport=transport) as session:
        listed = {tool.name for tool in (await session.list_tools()).tools}
        written = await session.call_tool("remove_policy_revision", {"source": "NPPF", "revision_id": "rev_x"})
    assert listed == POLICY_READS | POLICY_WRITES
    assert written.structured_content is not None
    assert written.structured_content["error_type"] == "policy_not_found"  # it ran: nothing is registered


def test_a_read_key_posting_to_another_replica_gets_the_same_refusal(fresh_service: Service) -> None:
    """The stream is held by replica A (opened with the full key); a read key's messages land on replica B,
    which relays them to A: A answers as to a read-only caller (``auth`` marks them, the relay forwards the
    mark)."""
    replica_b = create_app(fresh_service.settings, stores=fresh_service.stores, warm=False)
    arguments = {"source": "NPPF", "revision_id": "rev_x"}
    write = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "remove_policy_revision", "arguments": arguments},
    }
    with (
        running(replica_b) as url_b,
        httpx.Client(timeout=httpx.Timeout(10, read=15)) as client,
        client.stream("GET", f"{fresh_service.url}/sse", headers=bearer(FULL_KEY)) as stream,
    ):
        events = sse_events(stream)
        _, endpoint = next(events)
        reader = MCP_HEADERS | bearer(READ_KEY)
        assert client.post(f"{url_b}{endpoint}", json=INITIALIZE, headers=reader).status_code == 202
        next(events)
        client.post(
            f"{url_b}{endpoint}", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=reader
        )
        listing = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
        for message in (write, listing):
            assert client.post(f"{url_b}{endpoint}", json=message, headers=reader).status_code == 202
        answers = {answer["id"]: answer["result"] for answer in (json.loads(next(events)[1]) for _ in range(2))}
    refused, listed = answers[2], {tool["name"] for tool in answers[3]["tools"]}
    assert refused["isError"] and refused["structuredContent"]["error_type"] == "forbidden"
    assert listed == POLICY_READS
