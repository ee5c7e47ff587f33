"""A LangChain agent's view of the governance server: ``langchain-mcp-adapters`` loads the server's MCP tools
as LangChain tools over Streamable HTTP and invokes ``query_governance``.

Runs in its own venv (``make langchain-client``: langchain-mcp-adapters 0.3.2 needs mcp 1.x, this project
uses mcp 2.x), so it imports nothing from the project. Prints one JSON object on stdout:
``{"tools": [names], "args": {tool: [argument names]}, "content": [the result's content blocks], "artifact": ...}``.

    .tools/langchain-venv/bin/python tests/mcp_service/clients/langchain_mcp_client.py URL QUESTION [TOKEN]
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from langchain_mcp_adapters.client import MultiServerMCPClient


async def main(url: str, question: str, token: str | None) -> dict[str, Any]:
    connection: dict[str, Any] = {"url": url, "transport": "streamable_http"}
    if token:
        connection["headers"] = {"Authorization": f"Bearer {token}"}
    client = MultiServerMCPClient({"governance": connection})
    tools = {tool.name: tool for tool in await client.get_tools()}
    call = {"name": "query_governance", "args": {"question": question, "top_k": 3}, "id": "1", "type": "tool_call"}
    message = await tools["query_governance"].ainvoke(call)
    return {
        "tools": sorted(tools),
        "args": {name: sorted(tool.args) for name, tool in tools.items()},
        "content": message.content,
        "artifact": message.artifact,
    }


if __name__ == "__main__":
    print(
        json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)), default=str)
    )
