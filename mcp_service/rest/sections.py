"""The REST routes of section reads (issue 22): a revision's table of contents and the sections citing a
section, the same ``lib.policies.sections`` calls as the MCP tools ``list_policy_sections`` and
``find_citing_sections``. Errors are raised and mapped once (``errors.install_error_handlers``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from lib.models import SectionKind
from lib.policies.sections import (
    CitingSections,
    SectionList,
    find_citing_sections,
    list_policy_sections,
)
from mcp_service.rest.errors import error_responses
from mcp_service.rest.routes import Policies

router = APIRouter()


@router.get(
    "/policies/{source}/revisions/{revision_id}/sections",
    response_model=SectionList,
    tags=["revisions"],
    responses=error_responses(400, 404),
)
def list_sections(
    source: str,
    revision_id: str,
    stores: Policies,
    kind: Annotated[SectionKind | None, Query(description="Only sections of this kind, e.g. policy")] = None,
) -> SectionList:
    """Every section of the revision in document order: ref, kind, title, pages, the policy a paragraph supports."""
    return list_policy_sections(stores, source, revision_id=revision_id, kind=kind)


@router.get(
    "/policies/{source}/citations",
    response_model=CitingSections,
    tags=["policies"],
    responses=error_responses(400, 404),
)
def citing_sections(
    source: str,
    stores: Policies,
    section_ref: Annotated[str, Query(description="The cited section, e.g. Para 11 or Policy SD11")],
    on: Annotated[str | None, Query(alias="date", description="YYYY-MM-DD (default today)")] = None,
) -> CitingSections:
    """The sections of the revisions in force on ``date`` that cite ``section_ref`` of this policy."""
    return find_citing_sections(stores, source, section_ref, effective_date=on)
