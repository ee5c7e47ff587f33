"""Calling the service's tools the way an agent does, with the SDK client."""

from __future__ import annotations

import json
from typing import Any

from mcp_types import TextContent

from tests.mcp_service.conftest import FULL_KEY, mcp_session


async def call(
    url: str, tool: str, arguments: dict[str, Any] | None = None, *, transport: str = "http", key: str = FULL_KEY
) -> dict[str, Any]:
    """The tool's JSON: its structured content. The text block is a rendering for a reader, not the JSON again
    (``text_is_a_rendering``)."""
    async with mcp_session(url, key=key, transport=transport) as session:
        result = await session.call_tool(tool, arguments or {})
    assert result.structured_content is not None, result
    text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
    text_is_a_rendering(text, result.structured_content)
    assert result.is_error == (result.structured_content["status"] == "error")
    return result.structured_content


def text_is_a_rendering(text: str, structured: dict[str, Any]) -> None:
    """The text (its blocks joined) is not JSON, and an error's names its error_type and carries its message."""
    try:
        json.loads(text)
    except ValueError:
        pass
    else:
        raise AssertionError(f"the text block is JSON: {text[:200]}")
    if structured.get("status") == "error":
        assert text == f"Error ({structured['error_type']}): {structured['message']}", text
