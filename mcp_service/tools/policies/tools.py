"""The ``policy-kb-mcp`` tools: spec 000 FR-001..FR-006, plus a dated section lookup, a snapshot, a
batch search and a section's comparison between revisions. Each handler validates through its typed
signature and runs its ``work`` function (one call into ``lib``) on a worker thread, returning
the spec's JSON (``envelope``) in the shape ``outputs`` declares. The server they are registered
on is built in ``mcp_service.policy_kb``.

No ``from __future__ import annotations`` here: the SDK builds each tool's input schema from the
annotations at registration, and the bounds come from the settings in ``register_tools``.
"""

from functools import partial
from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field, Strict

from lib.models import SectionKind
from lib.policies.stores import PolicyStores
from mcp_service.tools.envelope import run_tool
from mcp_service.tools.policies import work
from mcp_service.tools.policies.outputs import (
    BatchSearchOutput,
    CitingOutput,
    CompareOutput,
    DocumentsOutput,
    IngestOutput,
    PageImageOutput,
    QuoteOutput,
    RemoveOutput,
    RevisionsOutput,
    SearchOutput,
    SectionOutput,
    SectionsOutput,
    SnapshotOutput,
)
from mcp_service.tools.policies.resources import linked
from mcp_service.tools.policies.viewer import VIEWER_META
from mcp_service.tools.progress import reporter
from mcp_service.tools.registration import READ_ONLY, date_field, tool

SERVER_NAME = "policy-kb-mcp"

INSTRUCTIONS = (
    "UK planning policy (NPPF, LTN 1/20, local plans ...) with every revision in time. Pass "
    "effective_date (YYYY-MM-DD, e.g. an application's validation date) to search_policy to see only "
    "the revisions in force that day, and cite source, version_label, section_ref and page_number from "
    "each result. list_policy_documents gives the source slugs; list_policy_sections a revision's table of "
    "contents; get_policy_section returns a whole paragraph, policy or chapter by its reference; "
    "find_citing_sections which plans cite a section."
)

# -- typed arguments ------------------------------------------------------------------------------

Source = Annotated[str, Field(description="Policy slug, e.g. NPPF (list_policy_documents)")]
RevisionId = Annotated[str, Field(description="e.g. rev_NPPF_2024_12 (list_policy_revisions)")]
EffectiveDate = Annotated[
    str | None, date_field("Only the revisions in force that day; omit for every revision, superseded included")
]
Sources = Annotated[list[str] | None, Field(description='Policy slugs, e.g. ["NPPF"]; omit for all')]
Mode = Annotated[
    Literal["hybrid", "dense", "lexical"],
    Field(description="hybrid: meaning and exact terms; dense: meaning; lexical: BM25, best for 'Para 116'"),
]


# -- registration ---------------------------------------------------------------------------------


def register_tools(server: MCPServer, stores: PolicyStores) -> None:
    """Add the eleven tools to ``server``, over the policy stores."""
    max_results = stores.settings.search.max_results

    Query = Annotated[str, Field(description="Plain words, e.g. 'refusal on highways grounds'")]
    NResults = Annotated[int, Strict(), Field(ge=1, le=max_results, description="Results per query")]
    Queries = Annotated[list[str], Field(min_length=1, max_length=max_results, description="Questions, searched alike")]
    SectionRef = Annotated[str, Field(description="e.g. 'Para 116', 'Chapter 9', 'Policy TR6', 'RES9'")]
    SectionRevision = Annotated[str | None, Field(description="Wins over effective_date")]
    SectionDate = Annotated[str | None, date_field("The revision in force that day; default today")]
    SnapshotDate = Annotated[str, date_field("e.g. an application's validation date")]
    FilePath = Annotated[str, Field(description="A PDF on the server, inside ALLOWED_FILE_ROOTS")]
    Reindex = Annotated[
        bool, Strict(), Field(description="Rebuild the chunks from this file (it replaces the stored one)")
    ]

    @tool(server, READ_ONLY, VIEWER_META)
    async def search_policy(
        query: Query,
        sources: Sources = None,
        effective_date: EffectiveDate = None,
        n_results: NResults = 10,
        mode: Mode = "hybrid",
    ) -> Annotated[CallToolResult, SearchOutput]:
        """Search policy text by meaning and exact terms. With effective_date only the revision of each policy
        in force that day is searched. Results best first by score (0..1), one per section; cite source,
        version_label, section_ref, printed_page (page_number is the PDF page). relevance_score: cosine
        similarity (null in lexical mode)."""
        job = partial(
            work.search,
            stores,
            query=query,
            sources=sources,
            effective_date=effective_date,
            n_results=n_results,
            mode=mode,
        )
        return linked(await run_tool("search_policy", job, search=stores.settings.search))

    @tool(server, READ_ONLY)
    async def search_policy_batch(
        queries: Queries,
        sources: Sources = None,
        effective_date: EffectiveDate = None,
        n_results: NResults = 10,
        mode: Mode = "hybrid",
    ) -> Annotated[CallToolResult, BatchSearchOutput]:
        """Several searches in one call, with the same sources, date and mode; results per query, in order,
        shaped like search_policy's."""
        job = partial(
            work.search_batch,
            stores,
            queries,
            sources=sources,
            effective_date=effective_date,
            n_results=n_results,
            mode=mode,
        )
        return linked(await run_tool("search_policy_batch", job, search=stores.settings.search))

    @tool(server, READ_ONLY, VIEWER_META)
    async def get_policy_section(
        source: Source, section_ref: SectionRef, revision_id: SectionRevision = None, effective_date: SectionDate = None
    ) -> Annotated[CallToolResult, SectionOutput]:
        """The full text of one section (a paragraph, policy, or 'Chapter N' whole) with its pages, kind,
        title and the refs it cites. Refs as people type them ('policy res9', 'paragraph 3.60'). Errors:
        section_not_found (lists the nearest refs), revision_not_found, policy_not_found."""
        job = partial(
            work.section,
            stores,
            source=source,
            section_ref=section_ref,
            revision_id=revision_id,
            effective_date=effective_date,
        )
        return linked(await run_tool("get_policy_section", job))

    KindFilter = Annotated[SectionKind | None, Field(description="Only sections of this kind")]
    CitedRef = Annotated[str, Field(description="e.g. 'Para 11', 'Policy SD11'")]
    CitingDate = Annotated[str | None, date_field("Only the revisions in force that day; default today")]

    @tool(server, READ_ONLY)
    async def list_policy_sections(
        source: Source,
        revision_id: SectionRevision = None,
        effective_date: SectionDate = None,
        kind: KindFilter = None,
    ) -> Annotated[CallToolResult, SectionsOutput]:
        """A revision's table of contents in document order: section_ref, kind, title, pages and, for
        reasoned justification, the policy it supports. List a plan's policies (kind policy), then read
        them with get_policy_section. Errors: revision_not_found, policy_not_found."""
        job = partial(
            work.sections, stores, source=source, revision_id=revision_id, effective_date=effective_date, kind=kind
        )
        return await run_tool("list_policy_sections", job)

    @tool(server, READ_ONLY)
    async def find_citing_sections(
        source: Source, section_ref: CitedRef, effective_date: CitingDate = None
    ) -> Annotated[CallToolResult, CitingOutput]:
        """The sections of the revisions in force on a date that cite a section, e.g. every local plan
        section citing NPPF paragraph 11. Errors: policy_not_found, invalid_date."""
        job = partial(work.citing, stores, source=source, section_ref=section_ref, effective_date=effective_date)
        return await run_tool("find_citing_sections", job)

    QuoteText = Annotated[str, Field(description="The passage as quoted; 12 to 4,000 characters")]
    QuoteDate = Annotated[str | None, date_field("Check the revisions in force that day; default today")]

    @tool(server, READ_ONLY)
    async def verify_quote(
        quote: QuoteText, sources: Sources = None, effective_date: QuoteDate = None
    ) -> Annotated[CallToolResult, QuoteOutput]:
        """Check a quoted passage is in the revision in force on a date before citing it. verdict: exact,
        normalised (whitespace, hyphenation, quotes, dashes differ), close, altered (meaning changed),
        not_found, not_in_force (only another revision holds it: elsewhere). match: where, with the
        sentence around it. Errors: policy_not_found, invalid_date."""
        job = partial(work.quote, stores, quote, sources=sources, effective_date=effective_date)
        return await run_tool("verify_quote", job)

    PageNumber = Annotated[int, Strict(), Field(ge=1, description="PDF page (page_number in results)")]
    Highlight = Annotated[str | None, Field(max_length=4000, description="Text to highlight")]
    ChunkId = Annotated[str | None, Field(description="A search_policy chunk_id to highlight")]

    @tool(server, READ_ONLY, VIEWER_META)
    async def get_page_image(
        source: Source,
        page_number: PageNumber,
        revision_id: SectionRevision = None,
        effective_date: SectionDate = None,
        highlight: Highlight = None,
        chunk_id: ChunkId = None,
    ) -> Annotated[CallToolResult, PageImageOutput]:
        """One page of a revision's PDF as a PNG image, the given text or chunk highlighted, to check a
        claim against the page. Errors: revision_not_found, policy_not_found, invalid_argument."""
        job = partial(
            work.page,
            stores,
            source,
            page_number,
            revision_id=revision_id,
            effective_date=effective_date,
            highlight=highlight,
            chunk_id=chunk_id,
        )
        return await run_tool("get_page_image", job)

    @tool(server, READ_ONLY)
    async def get_policy_snapshot(effective_date: SnapshotDate) -> Annotated[CallToolResult, SnapshotOutput]:
        """The revision of every policy in force on a date, and for the others why none was: the policy
        context of a review."""
        return await run_tool("get_policy_snapshot", partial(work.snapshot_on, stores, effective_date))

    @tool(server, READ_ONLY)
    async def list_policy_documents() -> Annotated[CallToolResult, DocumentsOutput]:
        """Every policy: its source slug (what source and sources take), title, category, revision in force."""
        return await run_tool("list_policy_documents", partial(work.documents, stores))

    @tool(server, READ_ONLY)
    async def list_policy_revisions(source: Source) -> Annotated[CallToolResult, RevisionsOutput]:
        """A policy's revisions, newest first: dates (effective_to null = in force), status, chunk_count."""
        return await run_tool("list_policy_revisions", partial(work.revisions, stores, source))

    @tool(server, ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True))
    async def ingest_policy_revision(
        source: Source, revision_id: RevisionId, file_path: FilePath, ctx: Context, reindex: Reindex = False
    ) -> Annotated[CallToolResult, IngestOutput]:
        """Extract, chunk, embed and store a registered revision's PDF; blocks until done. The same file
        again changes nothing unless reindex is true or its chunks were removed. Errors: revision_not_found,
        file_not_found, path_not_allowed, unsupported_file_type, no_content, cannot_reindex,
        revision_already_exists. Sends progress notifications when asked (a progressToken)."""
        job = partial(work.ingest_file, stores, source, revision_id, file_path, reindex, reporter(ctx))
        return await run_tool("ingest_policy_revision", job)

    @tool(server, ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True))
    async def remove_policy_revision(
        source: Source, revision_id: RevisionId
    ) -> Annotated[CallToolResult, RemoveOutput]:
        """Remove a revision's chunks from the search index only (its entry and PDF stay, so
        ingest_policy_revision can rebuild it)."""
        return await run_tool("remove_policy_revision", partial(work.remove_chunks, stores, source, revision_id))

    CompareRevision = Annotated[str | None, Field(description="Wins over the date")]
    CompareDate = Annotated[str | None, date_field("The revision in force that day")]

    @tool(server, READ_ONLY)
    async def compare_policy_section(
        source: Source,
        section_ref: SectionRef,
        from_revision_id: CompareRevision = None,
        to_revision_id: CompareRevision = None,
        from_date: CompareDate = None,
        to_date: CompareDate = None,
    ) -> Annotated[CallToolResult, CompareOutput]:
        """What changed in one section between two revisions: each side the revision named, else the one
        in force on its date, else the newest and the one before. Both texts, a word diff ([-removed-]
        {+added+}) and reference_status; when the ref is missing or says something else (editions
        renumber), matches are the sections that best say the same: cite those. Errors: section_not_found,
        revision_not_found, policy_not_found."""
        job = partial(
            work.compare,
            stores,
            source=source,
            section_ref=section_ref,
            from_revision_id=from_revision_id,
            to_revision_id=to_revision_id,
            from_date=from_date,
            to_date=to_date,
        )
        return await run_tool("compare_policy_section", job)
