"""The ``policy-kb-mcp`` tools: spec 000 FR-001..FR-006, plus a dated section lookup, a snapshot and a
batch search. Each handler validates through its typed signature, makes one call into ``lib`` on a
worker thread and returns the spec's JSON (``envelope``) in the shape ``policy_outputs`` declares. The
server they are registered on is built in ``mcp_service.policy_kb``.

No ``from __future__ import annotations`` here: the SDK builds each tool's input schema from the
annotations at registration, and the bounds come from the settings in ``register_policy_tools``.
"""

import inspect
from collections.abc import Awaitable, Callable
from datetime import date
from functools import partial
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from lib.dates import parse_date
from lib.errors import UnsupportedFileTypeError
from lib.kb import KnowledgeBase
from lib.paths import read_allowed_file
from lib.policies import search as lib_search
from lib.policies.ingest import ingest_revision
from lib.policies.lifecycle import PDF_MAGIC, RegistrationAction, ensure_registered, remove_revision
from lib.policies.models import RevisionCreate
from lib.policies.registry import check_revision_id, check_source
from lib.policies.reindex import reindex_revision
from mcp_service.tools.envelope import run_tool
from mcp_service.tools.policy_outputs import (
    BatchQueryResult,
    BatchSearchOutput,
    DocumentsOutput,
    IngestOutput,
    RemoveOutput,
    RevisionsOutput,
    SearchOutput,
    SectionOutput,
    SnapshotOutput,
)
from mcp_service.views import policy_info, revision_info, snapshot

ToolFn = Callable[..., Awaitable[CallToolResult]]

SERVER_NAME = "policy-kb-mcp"
READ_TOOLS = frozenset(
    {
        "search_policy",
        "search_policy_batch",
        "get_policy_section",
        "get_policy_snapshot",
        "list_policy_documents",
        "list_policy_revisions",
    }
)
WRITE_TOOLS = frozenset({"ingest_policy_revision", "remove_policy_revision"})
"""Tools a read-only key (``MCP_READ_API_KEY``) may not call; ``auth.py`` refuses them with 403."""

INSTRUCTIONS = (
    "UK planning policy (NPPF, LTN 1/20, local plans ...) with every revision in time. Pass "
    "effective_date (YYYY-MM-DD, e.g. an application's validation date) to search_policy to see only "
    "the revisions in force that day, and cite source, version_label, section_ref and page_number from "
    "each result. list_policy_documents gives the source slugs; get_policy_section returns a whole "
    "paragraph, policy or chapter by its reference."
)

# -- typed arguments ------------------------------------------------------------------------------

Source = Annotated[
    str, Field(description="Policy source slug in UPPER_SNAKE_CASE, e.g. NPPF or LTN_1_20 (list_policy_documents)")
]
RevisionId = Annotated[str, Field(description="Revision id as listed by list_policy_revisions, e.g. rev_NPPF_2024_12")]
EffectiveDate = Annotated[
    str | None,
    Field(
        description="ISO date YYYY-MM-DD: only the revisions in force on that day (boundaries inclusive). "
        "Omit to search every ingested revision, superseded ones included."
    ),
]
Sources = Annotated[
    list[str] | None,
    Field(
        description='Restrict to these policy slugs, e.g. ["NPPF"]; omit for all policies. Unknown slugs are an error.'
    ),
]


# -- the work, one lib call each ------------------------------------------------------------------


def _ingest_file(kb: KnowledgeBase, source: str, revision_id: str, file_path: str, reindex: bool) -> IngestOutput:
    """Ingest the PDF at ``file_path`` as the registered revision (spec 000 FR-005), through the same
    ``lib`` functions as the ingestion and reindex flows: ``ensure_registered`` (idempotent by content
    hash), then ``ingest_revision`` or ``reindex_revision``."""
    revision = kb.registry.get_revision(check_source(source), check_revision_id(revision_id))
    content = read_allowed_file(kb.settings, file_path)
    if not content.startswith(PDF_MAGIC):
        raise UnsupportedFileTypeError("file_path is not a PDF (its content does not start with %PDF-)")
    registration = ensure_registered(
        kb,
        source,
        RevisionCreate(
            revision_id=revision_id,
            version_label=revision.version_label,
            effective_from=revision.effective_from,
            effective_to=revision.effective_to,
            notes=revision.notes,
        ),
        content,
    )
    current = registration.revision
    if registration.action == RegistrationAction.UNCHANGED and not reindex:
        return IngestOutput(source=source, revision_id=revision_id, chunks_created=current.chunk_count,
                            chunks_removed=0, page_count=current.page_count,
                            extraction_method=current.extraction_method, action="unchanged")  # fmt: skip
    if registration.action == RegistrationAction.UNCHANGED:
        outcome, action = reindex_revision(kb, source, revision_id), "reindexed"
    else:
        outcome, action = ingest_revision(kb, source, revision_id), "ingested"
    return IngestOutput(source=source, revision_id=revision_id, chunks_created=outcome.chunks_created,
                        chunks_removed=outcome.chunks_removed, page_count=outcome.page_count,
                        extraction_method=outcome.extraction_method, action=action)  # fmt: skip


def _remove(kb: KnowledgeBase, source: str, revision_id: str) -> RemoveOutput:
    """Remove a revision's chunks (spec 000 FR-006). A registered revision goes entirely (registry entry,
    chunks, file: ``lib.policies.lifecycle.remove_revision``, as REST DELETE and the remove flow do), because a
    registry entry without its chunks would break NFR-003; chunks of an unregistered revision (orphans)
    are simply deleted, ``0`` if there are none."""
    check_source(source)
    check_revision_id(revision_id)
    registered = any(r.revision_id == revision_id for r in kb.registry.list_revisions(source))
    if registered:
        removed = remove_revision(kb, source, revision_id)
        return RemoveOutput(source=source, revision_id=revision_id, chunks_removed=removed.chunks_removed,
                            registry_entry_removed=True, file_removed=removed.file_removed)  # fmt: skip
    chunks = kb.vectors.delete_revision(source, revision_id)
    return RemoveOutput(source=source, revision_id=revision_id, chunks_removed=chunks, registry_entry_removed=False,
                        file_removed=False)  # fmt: skip


def _documents(kb: KnowledgeBase) -> DocumentsOutput:
    policies = kb.registry.list_policies()
    today = kb.resolver.resolve_many([p.source for p in policies], date.today())
    infos = [policy_info(p, today.get(p.source)) for p in policies]
    return DocumentsOutput(policy_count=len(infos), policies=infos)


def _revisions(kb: KnowledgeBase, source: str) -> RevisionsOutput:
    kb.registry.get_policy(check_source(source))
    revisions = [revision_info(r) for r in kb.registry.list_revisions(source)]
    return RevisionsOutput(source=source, revision_count=len(revisions), revisions=revisions)


def _snapshot(kb: KnowledgeBase, effective_date: str) -> SnapshotOutput:
    day = parse_date(effective_date, field="effective_date")
    titles = {p.source: p.title for p in kb.registry.list_policies()}
    return SnapshotOutput(**snapshot(day, kb.resolver.resolve_snapshot(day), titles).model_dump())


def _search(kb: KnowledgeBase, **kwargs: Any) -> SearchOutput:
    result = lib_search.search_policy(kb, **kwargs)
    return SearchOutput(query=result.query, effective_date=result.effective_date,
                        results_count=len(result.results), results=result.results)  # fmt: skip


def _search_batch(kb: KnowledgeBase, queries: list[str], **kwargs: Any) -> BatchSearchOutput:
    results = lib_search.search_policy_batch(kb, queries, **kwargs)
    return BatchSearchOutput(
        effective_date=results[0].effective_date if results else None,
        query_count=len(results),
        results=[BatchQueryResult(query=r.query, results_count=len(r.results), results=r.results) for r in results],
    )


def _section(kb: KnowledgeBase, **kwargs: Any) -> SectionOutput:
    return SectionOutput(**lib_search.get_policy_section(kb, **kwargs).model_dump())


# -- registration ---------------------------------------------------------------------------------


def register_policy_tools(server: MCPServer, kb: KnowledgeBase) -> None:
    """Add the eight tools to ``server``; ``kb`` is the process's knowledge base (composition root)."""
    max_results = kb.settings.max_results
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    def tool(annotations: ToolAnnotations) -> Callable[[ToolFn], ToolFn]:
        """``server.tool`` with the docstring's indentation removed from the description agents read."""
        return lambda fn: server.tool(description=inspect.cleandoc(fn.__doc__ or ""), annotations=annotations)(fn)

    Query = Annotated[str, Field(description="What to look for, in plain words, e.g. 'refusal on highways grounds'")]
    NResults = Annotated[int, Field(ge=1, le=max_results, description="How many chunks to return (per query)")]
    Queries = Annotated[
        list[str], Field(min_length=1, max_length=max_results, description="Several questions, searched alike")
    ]
    SectionRef = Annotated[
        str, Field(description="A reference as search results cite it: 'Para 116', 'Chapter 9', 'Policy TR6'")
    ]
    SectionRevision = Annotated[
        str | None, Field(description="A specific revision; wins over effective_date when both are given")
    ]
    SectionDate = Annotated[
        str | None, Field(description="YYYY-MM-DD: the revision in force that day. Default: the one in force today.")
    ]
    SnapshotDate = Annotated[str, Field(description="YYYY-MM-DD, e.g. an application's validation date")]
    FilePath = Annotated[str, Field(description="Path of the PDF on the server, inside one of its ALLOWED_FILE_ROOTS")]
    Reindex = Annotated[
        bool, Field(description="Rebuild the chunks even if this very file was already ingested for the revision")
    ]

    @tool(read_only)
    async def search_policy(
        query: Query, sources: Sources = None, effective_date: EffectiveDate = None, n_results: NResults = 10
    ) -> Annotated[CallToolResult, SearchOutput]:
        """Semantic search over policy text, optionally as of a date.

        With effective_date, only chunks of the revision of each policy in force on that day are searched,
        so an answer cites the policy as it stood then; a date before a policy's first revision returns no
        results for it. Each result carries chunk_id, text, relevance_score, source, revision_id,
        version_label, section_ref and page_number for the citation."""
        work = partial(_search, kb, query=query, sources=sources, effective_date=effective_date, n_results=n_results)
        return await run_tool("search_policy", work)

    @tool(read_only)
    async def search_policy_batch(
        queries: Queries, sources: Sources = None, effective_date: EffectiveDate = None, n_results: NResults = 10
    ) -> Annotated[CallToolResult, BatchSearchOutput]:
        """Run several searches in one call, with the same sources and date (one registry lookup, one
        embedding batch). Results come back per query, in order, each shaped like search_policy's."""
        work = partial(_search_batch, kb, queries, sources=sources, effective_date=effective_date, n_results=n_results)
        return await run_tool("search_policy_batch", work)

    @tool(read_only)
    async def get_policy_section(
        source: Source, section_ref: SectionRef, revision_id: SectionRevision = None, effective_date: SectionDate = None
    ) -> Annotated[CallToolResult, SectionOutput]:
        """The full text of one section of a policy revision, with its page numbers.

        'Chapter N' returns the whole chapter. Errors: section_not_found (no such reference in that
        revision), revision_not_found (no revision in force on the date), policy_not_found."""
        work = partial(
            _section, kb, source=source, section_ref=section_ref, revision_id=revision_id, effective_date=effective_date
        )
        return await run_tool("get_policy_section", work)

    @tool(read_only)
    async def get_policy_snapshot(effective_date: SnapshotDate) -> Annotated[CallToolResult, SnapshotOutput]:
        """Which revision of every registered policy was in force on a date, and for the others why none
        was (not yet in force, or a gap between revisions). Use it to state the policy context of a review."""
        return await run_tool("get_policy_snapshot", partial(_snapshot, kb, effective_date))

    @tool(read_only)
    async def list_policy_documents() -> Annotated[CallToolResult, DocumentsOutput]:
        """Every registered policy document: source slug, title, category and the revision in force today.
        The slugs are what the other tools' source and sources arguments take."""
        return await run_tool("list_policy_documents", partial(_documents, kb))

    @tool(read_only)
    async def list_policy_revisions(source: Source) -> Annotated[CallToolResult, RevisionsOutput]:
        """All revisions of one policy, newest first, with effective_from/effective_to (null = still in
        force), status (processing, active, superseded, failed) and chunk_count."""
        return await run_tool("list_policy_revisions", partial(_revisions, kb, source))

    @tool(ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True))
    async def ingest_policy_revision(
        source: Source, revision_id: RevisionId, file_path: FilePath, reindex: Reindex = False
    ) -> Annotated[CallToolResult, IngestOutput]:
        """Extract, chunk, embed and store a registered revision's PDF; blocks until done (about a minute
        for a 100-page PDF). The revision must already be registered (REST API). Running it again with the
        same file changes nothing unless reindex is true; old chunks are replaced only after the new ones
        are stored. Errors: revision_not_found, file_not_found, path_not_allowed, unsupported_file_type,
        no_content, revision_already_exists (another file is registered for this revision)."""
        return await run_tool(
            "ingest_policy_revision", partial(_ingest_file, kb, source, revision_id, file_path, reindex)
        )

    @tool(ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True))
    async def remove_policy_revision(
        source: Source, revision_id: RevisionId
    ) -> Annotated[CallToolResult, RemoveOutput]:
        """Remove a revision's chunks from the search index. A registered revision is removed entirely
        (registry entry, chunks and stored PDF), and the revision it had superseded is back in force for
        its dates; the last active revision of a policy cannot be removed (cannot_delete_sole_revision).
        Chunks of an unregistered revision are deleted; chunks_removed is 0 when there are none."""
        return await run_tool("remove_policy_revision", partial(_remove, kb, source, revision_id))
