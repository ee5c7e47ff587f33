"""Every server module has one shape (``create_app``, ``register_tools``), and what its tools publish is clean:
descriptions as agents read them carry no source indentation, and the write tools a read-only key may not call
are exactly the tools not annotated read-only. Each server's tools are registered, as the service does, over
real stores (``tests.conftest.stores``)."""

from __future__ import annotations

from typing import Any

import pytest
from mcp_types import Tool

from lib.composition import Stores
from lib.notes.uploads import upload_staging
from mcp_service.__main__ import SERVERS
from mcp_service.app import new_mcp_server
from mcp_service.kb_engine_client import KbEngineClient
from mcp_service.tools.kb.work import KbStores
from mcp_service.tools.registration import write_tools
from tests.mcp_service.tool_names import SERVER_TOOLS


def server_stores(name: str, stores: Stores) -> Any:
    """What ``create_app`` of server ``name`` registers its tools over."""
    if name == "policy-kb":
        return stores.policies
    if name == "document-store":
        return stores.documents
    if name == "governance":
        return stores.governance
    return KbStores(stores.settings, KbEngineClient.from_settings(stores.settings), upload_staging(stores.notes))


async def registered_tools(name: str, stores: Stores) -> list[Tool]:
    server = new_mcp_server(f"{name}-under-test", "")
    over = server_stores(name, stores)
    SERVERS[name].load().register_tools(server, over)
    try:
        return await server.list_tools()
    finally:
        if isinstance(over, KbStores):
            await over.engine.aclose()


@pytest.mark.anyio
@pytest.mark.parametrize("name", list(SERVERS))
async def test_no_tool_description_has_indented_lines_or_trailing_whitespace(name: str, stores: Stores) -> None:
    tools = await registered_tools(name, stores)
    assert tools
    for tool in tools:
        assert tool.description, tool.name
        assert tool.description == tool.description.strip(), tool.name
        for line in tool.description.splitlines():
            assert line == line.strip(), (tool.name, line)


@pytest.mark.anyio
@pytest.mark.parametrize("name", list(SERVERS))
async def test_the_write_tools_are_the_tools_not_annotated_read_only(name: str, stores: Stores) -> None:
    tools = await registered_tools(name, stores)
    unhinted = {t.name for t in tools if t.annotations is None or t.annotations.read_only_hint is not True}
    reads, writes = SERVER_TOOLS[name]
    assert write_tools(tools) == unhinted == writes
    assert {t.name for t in tools} - unhinted == reads
