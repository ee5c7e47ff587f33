"""The ``policy-kb-mcp`` server's resources: a revision, one of its sections and one of its pages, each at a
stable URI that names the revision, so a superseded revision stays readable by its id.

    policy://{source}/revisions/{revision_id}                    the revision (JSON: dates, status, counts)
    policy://{source}/revisions/{revision_id}/sections/{ref}     a section as get_policy_section gives it (JSON)
    policy://{source}/revisions/{revision_id}/pages/{page}       a PDF page as get_page_image renders it (PNG)

``{ref}`` is the section's reference percent-encoded (``Para%20116``). Search hits and sections link to theirs
(``links``: ``resource_link`` content blocks beside the text), and ``resources/read`` answers them through the
same ``work`` functions as the tools. An unknown policy, revision, section or page is -32602 (the SDK's code for
a resource not found) with the ``error_type`` in ``data``; anything else is -32603 and logged.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any, TypeVar
from urllib.parse import quote

from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, CallToolResult, ResourceLink

from lib.errors import KBError
from lib.policies.sections import chosen_revision
from lib.policies.stores import PolicyStores
from mcp_service.tools.policies import work
from mcp_service.views import revision_info

T = TypeVar("T")

REVISION = "policy://{source}/revisions/{revision_id}"
SECTION = REVISION + "/sections/{ref}"
PAGE = REVISION + "/pages/{page}"


@lru_cache(maxsize=4096)
def _segment(value: str) -> str:
    """``value`` percent-encoded as one URI path segment; remembered, as a search's links name the same few
    sources, revisions and sections again and again."""
    return quote(value, safe="")


def revision_uri(source: str, revision_id: str) -> str:
    return f"policy://{_segment(source)}/revisions/{_segment(revision_id)}"


def section_uri(source: str, revision_id: str, section_ref: str) -> str:
    return f"{revision_uri(source, revision_id)}/sections/{_segment(section_ref)}"


def page_uri(source: str, revision_id: str, page_number: int) -> str:
    return f"{revision_uri(source, revision_id)}/pages/{page_number}"


def cited(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """The entries of a tool's answer that cite a section: the answer itself (a section), its hits, a batch's."""
    entries = [payload] if "section_ref" in payload and "revision_id" in payload else []
    for item in payload.get("results") or []:
        if isinstance(item, dict):
            entries += [hit for hit in item.get("results") or [] if isinstance(hit, dict)] or [item]
    return entries


def linked(result: CallToolResult) -> CallToolResult:
    """A successful result with a ``resource_link`` to the section and page of each entry it cites."""
    if not result.is_error and isinstance(result.structured_content, dict):
        result.content.extend(links(cited(result.structured_content)))
    return result


def links(entries: Iterable[dict[str, Any]]) -> list[ResourceLink]:
    """For each cited entry (a hit, a section), a link to its section and one to its first page, named briefly
    (the URI says the rest; ``resources/read`` gives the mime type)."""
    out: list[ResourceLink] = []
    for entry in entries:
        source, revision_id, ref = entry.get("source"), entry.get("revision_id"), entry.get("section_ref")
        if not (isinstance(source, str) and isinstance(revision_id, str) and isinstance(ref, str)):
            continue
        out.append(ResourceLink(type="resource_link", uri=section_uri(source, revision_id, ref), name=ref))
        pages = entry.get("page_numbers") or [entry.get("page_number")]
        if isinstance(pages[0], int):
            out.append(
                ResourceLink(
                    type="resource_link", uri=page_uri(source, revision_id, pages[0]), name=f"PDF page {pages[0]}"
                )
            )
    return out


def answered(read: Callable[[], T]) -> T:
    """``read()``, its ``KBError`` as the JSON-RPC error of a resource: not found or invalid is -32602."""
    try:
        return read()
    except KBError as exc:
        code = INVALID_PARAMS if exc.http_status < 500 else INTERNAL_ERROR
        raise MCPError(code=code, message=exc.message, data={"error_type": exc.error_type}) from exc


def register_resources(server: MCPServer, stores: PolicyStores) -> None:
    """Add the revision, section and page templates to ``server``, over the policy stores."""

    @server.resource(
        REVISION,
        name="policy_revision",
        mime_type="application/json",
        description="A policy revision: dates, status, chunk and page counts",
    )
    def policy_revision(source: str, revision_id: str) -> str:
        revision = answered(lambda: chosen_revision(stores, source, revision_id, None))
        return revision_info(revision).model_dump_json()

    @server.resource(
        SECTION,
        name="policy_section",
        mime_type="application/json",
        description="One section of a revision, as get_policy_section gives it",
    )
    def policy_section(source: str, revision_id: str, ref: str) -> str:
        section = answered(lambda: work.section(stores, source=source, section_ref=ref, revision_id=revision_id))
        return json.dumps(section.model_dump(mode="json"), ensure_ascii=False)

    @server.resource(
        PAGE,
        name="policy_page",
        mime_type="image/png",
        description="One page of a revision's PDF, rendered as get_page_image renders it",
    )
    def policy_page(source: str, revision_id: str, page: str) -> bytes:
        if not page.isdigit() or int(page) < 1:
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"page must be a PDF page number, 1 or more: {page[:20]!r}",
                data={"error_type": "invalid_argument"},
            )
        return answered(lambda: work.page(stores, source, int(page), revision_id=revision_id)).png
