"""A caller who may only read, as an agent meets the server with the SDK's client over both transports: it lists
the read tools only, a write call answers a tool error naming the credential needed, and the session goes on."""

from __future__ import annotations

import pytest

from tests.mcp_service.conftest import FULL_KEY, READ_KEY, Service, mcp_session
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
