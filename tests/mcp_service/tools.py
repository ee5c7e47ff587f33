"""Calling the service's tools the way an agent does, with the SDK client."""

from __future__ import annotations

import json
from typing import Any

from tests.mcp_service.conftest import FULL_KEY, mcp_session


async def call(url: str, tool: str, arguments: dict[str, Any] | None = None, *, transport: str = "http",
               key: str = FULL_KEY) -> dict[str, Any]:  # fmt: skip
    """The tool's JSON. Structured content and the text block must say the same thing."""
    async with mcp_session(url, key=key, transport=transport) as session:
        result = await session.call_tool(tool, arguments or {})
    assert result.structured_content is not None, result
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
    assert result.is_error == (result.structured_content["status"] == "error")
    return result.structured_content
