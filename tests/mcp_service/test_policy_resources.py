"""The policy-kb server's resources, as an agent follows them with the SDK's client: search hits and sections
link to their section and page, and ``resources/read`` answers those links for the revision they name, a
revision not in force today included."""

from __future__ import annotations

import base64
import json

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, BlobResourceContents, ResourceLink, TextResourceContents

from mcp_service.tools.policies.resources import section_uri
from tests.mcp_service.conftest import Service, mcp_session

pytestmark = pytest.mark.anyio

DRAFT = "rev_NPPF_2099_01_DRAFT"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


async def test_search_hits_link_to_their_section_and_page_and_the_links_resolve(nppf_service: Service) -> None:
    async with mcp_session(nppf_service.url) as session:
        templates = {t.uri_template for t in (await session.list_resource_templates()).resource_templates}
        found = await session.call_tool(
            "search_policy", {"query": "refused on highways grounds", "n_results": 3, "effective_date": "2025-06-01"}
        )
        hits = found.structured_content["results"]
        found_links = [block for block in found.content if isinstance(block, ResourceLink)]
        section = await session.read_resource(found_links[0].uri)
        page = await session.read_resource(found_links[1].uri)
    assert templates == {
        "policy://{source}/revisions/{revision_id}",
        "policy://{source}/revisions/{revision_id}/sections/{ref}",
        "policy://{source}/revisions/{revision_id}/pages/{page}",
    }
    assert len(found_links) == 2 * len(hits) == 6
    top = hits[0]
    assert str(found_links[0].uri) == section_uri(top["source"], top["revision_id"], top["section_ref"])
    assert str(found_links[1].uri).endswith(f"/revisions/{top['revision_id']}/pages/{top['page_number']}")
    text = section.contents[0]
    assert isinstance(text, TextResourceContents) and text.mime_type == "application/json"
    read = json.loads(text.text)
    assert (read["section_ref"], read["revision_id"]) == (top["section_ref"], top["revision_id"])
    assert top["page_number"] in read["page_numbers"]
    png = page.contents[0]
    assert isinstance(png, BlobResourceContents) and png.mime_type == "image/png"
    assert base64.b64decode(png.blob).startswith(b"\x89PNG\r\n\x1a\n")


async def test_a_section_result_links_to_itself_and_a_revision_not_in_force_is_read_by_its_id(
    nppf_service: Service,
) -> None:
    async with mcp_session(nppf_service.url) as session:
        drafted = await session.call_tool(
            "get_policy_section", {"source": "NPPF", "section_ref": "Chapter 1", "revision_id": DRAFT}
        )
        draft_links = [block for block in drafted.content if isinstance(block, ResourceLink)]
        revision = await session.read_resource(f"policy://NPPF/revisions/{DRAFT}")
        again = await session.read_resource(draft_links[0].uri)
        with pytest.raises(MCPError) as missing:
            await session.read_resource(section_uri("NPPF", DRAFT, "Para 99999"))
        with pytest.raises(MCPError) as no_page:
            await session.read_resource(f"policy://NPPF/revisions/{DRAFT}/pages/first")
    assert not drafted.is_error and drafted.structured_content["revision_id"] == DRAFT
    assert str(draft_links[0].uri) == section_uri("NPPF", DRAFT, drafted.structured_content["section_ref"])
    info = json.loads(revision.contents[0].text)  # type: ignore[union-attr]
    assert (info["revision_id"], info["effective_from"]) == (DRAFT, "2099-01-01")
    assert json.loads(again.contents[0].text)["text"] == drafted.structured_content["text"]  # type: ignore[union-attr]
    assert missing.value.error.code == INVALID_PARAMS
    assert missing.value.error.data == {"error_type": "section_not_found"}
    assert no_page.value.error.code == INVALID_PARAMS
