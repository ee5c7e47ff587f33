"""The citation viewer (MCP Apps, ``ui://``) as a host shows it: the search, section and page tools name the
view, and the view, given a real ``get_page_image`` result the way a host sends it
(``ui/notifications/tool-result`` over ``postMessage``), renders the page with the passage highlighted and its
citation, in headless Chromium."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio
from playwright.sync_api import Browser

from mcp_service.tools.policies.viewer import VIEWER_URI
from tests.mcp_service.conftest import Service, mcp_session
from tests.mcp_service.test_page_images import yellow

PASSAGE = "Development should only be prevented or refused on highways grounds"


async def from_the_server(url: str) -> tuple[dict[str, Any], dict[str, Any], str, dict[str, Any]]:
    """The server's capabilities, its tools' ``_meta`` by name, the viewer's HTML and a highlighted page."""
    async with mcp_session(url) as session:
        capabilities = session.server_capabilities
        tools = {tool.name: tool.meta or {} for tool in (await session.list_tools()).tools}
        viewer = await session.read_resource(VIEWER_URI)
        found = await session.call_tool(
            "search_policy", {"query": PASSAGE, "n_results": 1, "effective_date": "2025-06-01"}
        )
        hit = found.structured_content["results"][0]
        arguments = {
            "source": "NPPF",
            "page_number": hit["page_number"],
            "revision_id": hit["revision_id"],
            "highlight": PASSAGE,
        }
        page = await session.call_tool("get_page_image", arguments)
    assert capabilities is not None
    html = viewer.contents[0]
    assert html.mime_type == "text/html;profile=mcp-app"
    return (
        capabilities.model_dump(by_alias=True, exclude_none=True),
        tools,
        html.text,  # type: ignore[union-attr]
        page.model_dump(by_alias=True, mode="json", exclude_none=True),
    )


def test_the_viewer_renders_the_cited_page_highlighted_with_its_citation(
    nppf_service: Service, browser: Browser
) -> None:
    with ThreadPoolExecutor(1) as thread:  # the sync Playwright of ``browser`` holds this thread's event loop
        capabilities, tools, html, result = thread.submit(anyio.run, from_the_server, nppf_service.url).result()
    assert capabilities["resources"] is not None  # the extension itself: test_capabilities (2026-07-28 only)
    for name in ("search_policy", "get_policy_section", "get_page_image"):
        assert tools[name]["ui"]["resourceUri"] == VIEWER_URI, name
    assert "ui" not in tools["list_policy_documents"]
    page = browser.new_page(viewport={"width": 1400, "height": 2200})
    try:
        page.set_content(html)
        send = "r => window.postMessage({jsonrpc: '2.0', method: 'ui/notifications/tool-result', params: r}, '*')"
        page.evaluate(send, result)
        image = page.locator("#page")
        image.wait_for(state="visible")
        size = page.evaluate(
            "() => [document.getElementById('page').naturalWidth, document.getElementById('page').naturalHeight]"
        )
        shown = image.screenshot()
        citation = page.locator("#citation").inner_text()
    finally:
        page.close()
    data = result["structuredContent"]
    assert size == [data["width"], data["height"]]
    assert citation.startswith(f"NPPF December 2024, p. {data['printed_page']}")
    assert f"{data['highlighted']} lines highlighted" in citation and data["highlighted"] > 0
    assert yellow(shown).sum() > 500
