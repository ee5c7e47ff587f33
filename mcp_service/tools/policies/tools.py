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

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from lib.policies.sections import SectionKind
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
from mcp_service.tools.registration import READ_ONLY, tool

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
Mode = Annotated[
    Literal["hybrid", "dense", "lexical"],
    Field(
        description="How results are ranked: hybrid (default) fuses meaning and exact terms; dense ranks by "
        "meaning only; lexical by the words and references named (BM25), best for 'Para 116', 'Table 5-2', "
        "'footnote 7', 'LTN 1/20'."
    ),
]


# -- registration ---------------------------------------------------------------------------------


def register_tools(server: MCPServer, stores: PolicyStores) -> None:
    """Add the eleven tools to ``server``, over the policy stores."""
    max_results = stores.settings.search.max_results

    Query = Annotated[str, Field(description="What to look for, in plain words, e.g. 'refusal on highways grounds'")]
    NResults = Annotated[int, Field(ge=1, le=max_results, description="How many chunks to return (per query)")]
    Queries = Annotated[
        list[str], Field(min_length=1, max_length=max_results, description="Several questions, searched alike")
    ]
    SectionRef = Annotated[
        str,
        Field(description="A reference as results cite it ('Para 116', 'Chapter 9', 'Policy TR6') or typed ('RES9')"),
    ]
    SectionRevision = Annotated[
        str | None, Field(description="A specific revision; wins over effective_date when both are given")
    ]
    SectionDate = Annotated[
        str | None, Field(description="YYYY-MM-DD: the revision in force that day. Default: the one in force today.")
    ]
    SnapshotDate = Annotated[str, Field(description="YYYY-MM-DD, e.g. an application's validation date")]
    FilePath = Annotated[
        str,
        Field(
            description="Path of the PDF on the server, inside one of its ALLOWED_FILE_ROOTS (by default the "
            "data directory's inbox/; /data/raw in docker-compose)"
        ),
    ]
    Reindex = Annotated[
        bool,
        Field(
            description="Rebuild the revision's chunks from this file, even if it was already ingested or differs "
            "from the stored one (it then replaces the stored original)"
        ),
    ]

    @tool(server, READ_ONLY)
    async def search_policy(
        query: Query,
        sources: Sources = None,
        effective_date: EffectiveDate = None,
        n_results: NResults = 10,
        mode: Mode = "hybrid",
    ) -> Annotated[CallToolResult, SearchOutput]:
        """Search over policy text by meaning and exact terms, optionally as of a date.

        With effective_date, only chunks of the revision of each policy in force on that day are searched,
        so an answer cites the policy as it stood then; a date before a policy's first revision returns no
        results for it. Results are best first by score (hybrid: both rankings fused). Each carries chunk_id,
        text, relevance_score (max(0, 1 - L2 distance / 2), the cosine similarity of query and chunk; null in
        lexical mode), score, source, revision_id, version_label, section_ref and page_number for the citation,
        and dense_score / lexical_score from the rankings that found it."""
        job = partial(work.search, stores, query=query, sources=sources, effective_date=effective_date,
                       n_results=n_results, mode=mode)  # fmt: skip
        return await run_tool("search_policy", job, search=stores.settings.search)

    @tool(server, READ_ONLY)
    async def search_policy_batch(
        queries: Queries,
        sources: Sources = None,
        effective_date: EffectiveDate = None,
        n_results: NResults = 10,
        mode: Mode = "hybrid",
    ) -> Annotated[CallToolResult, BatchSearchOutput]:
        """Run several searches in one call, with the same sources, date and mode (one registry lookup, one
        embedding batch). Results come back per query, in order, each shaped like search_policy's."""
        job = partial(work.search_batch, stores, queries, sources=sources, effective_date=effective_date,
                       n_results=n_results, mode=mode)  # fmt: skip
        return await run_tool("search_policy_batch", job, search=stores.settings.search)

    @tool(server, READ_ONLY)
    async def get_policy_section(
        source: Source, section_ref: SectionRef, revision_id: SectionRevision = None, effective_date: SectionDate = None
    ) -> Annotated[CallToolResult, SectionOutput]:
        """The full text of one section of a policy revision, with its page numbers, kind, title and the refs
        its text cites (cites: section_ref and the registered source it names, null when not registered).

        The reference may be written as people type it: 'RES9', 'Policy RES9', 'policy res9', 'CS 1', '3.60',
        'paragraph 3.60'; section_ref in the answer is the revision's own. 'Chapter N' returns the whole
        chapter. Errors: section_not_found (no such reference in that revision, or one naming several; the
        message lists the nearest refs it has), revision_not_found (no revision in force on the date),
        policy_not_found."""
        job = partial(
            work.section,
            stores,
            source=source,
            section_ref=section_ref,
            revision_id=revision_id,
            effective_date=effective_date,
        )
        return await run_tool("get_policy_section", job)

    KindFilter = Annotated[
        SectionKind | None,
        Field(description="Only sections of this kind, e.g. policy for a plan's policies; omit for every section"),
    ]
    CitedRef = Annotated[
        str, Field(description="The cited section as people write it: 'Para 11', 'paragraph 11', 'Policy SD11'")
    ]
    CitingDate = Annotated[
        str | None,
        Field(description="YYYY-MM-DD: only the revisions in force that day. Default: the ones in force today."),
    ]

    @tool(server, READ_ONLY)
    async def list_policy_sections(
        source: Source,
        revision_id: SectionRevision = None,
        effective_date: SectionDate = None,
        kind: KindFilter = None,
    ) -> Annotated[CallToolResult, SectionsOutput]:
        """The table of contents of one policy revision: every section in document order, with section_ref,
        kind (policy, paragraph, chapter, appendix, table, figure, footnote, glossary, modification, page,
        front-matter), title, page_numbers, printed_page and, for a paragraph of reasoned justification, the
        policy it supports. List a plan's policies (kind policy) first, then read the ones that apply with
        get_policy_section. Errors: revision_not_found, policy_not_found, invalid_argument."""
        job = partial(work.sections, stores, source=source, revision_id=revision_id, effective_date=effective_date,
                      kind=kind)  # fmt: skip
        return await run_tool("list_policy_sections", job)

    @tool(server, READ_ONLY)
    async def find_citing_sections(
        source: Source, section_ref: CitedRef, effective_date: CitingDate = None
    ) -> Annotated[CallToolResult, CitingOutput]:
        """Which sections of which policies cite a section, e.g. every local plan section citing paragraph 11
        of the NPPF, as of a date: only the revisions in force that day are read. A citation counts when the
        text names the section and its document ("paragraph 11 of the NPPF", "NPPF paragraph 11", "Policy
        SD11 of the Joint Core Strategy"), or the section alone inside its own document. Each result cites
        source, revision_id, version_label, section_ref and page_numbers. Errors: policy_not_found,
        invalid_argument, invalid_date."""
        job = partial(work.citing, stores, source=source, section_ref=section_ref, effective_date=effective_date)
        return await run_tool("find_citing_sections", job)

    QuoteText = Annotated[
        str,
        Field(description="The passage as quoted, e.g. a sentence an agent cites; 12 to 4,000 characters"),
    ]
    QuoteDate = Annotated[
        str | None,
        Field(description="YYYY-MM-DD, e.g. an application's validation date: check the revisions in force that "
                          "day. Default: today."),
    ]  # fmt: skip

    @tool(server, READ_ONLY)
    async def verify_quote(
        quote: QuoteText, sources: Sources = None, effective_date: QuoteDate = None
    ) -> Annotated[CallToolResult, QuoteOutput]:
        """Check that a quoted passage is really in the policy revision in force on a date, before citing it.
        verdict: exact (character for character), normalised (differs only in whitespace, line-end
        hyphenation, ligatures, curly quotes, dashes or bullet marks), close (a few words differ: similarity and
        the differing words are given), not_found. match gives source, revision, section_ref, page_number and
        the sentence around it. When the revision in force does not hold the quote, elsewhere lists the other
        revisions that do (superseded, or not yet in force) with their dates. Errors: policy_not_found,
        invalid_argument, invalid_date."""
        job = partial(work.quote, stores, quote, sources=sources, effective_date=effective_date)
        return await run_tool("verify_quote", job)

    PageNumber = Annotated[int, Field(ge=1, description="The page of the PDF, 1 for the first, as results cite it")]
    Highlight = Annotated[
        str | None, Field(max_length=4000, description="Text to highlight on the page, e.g. the sentence cited")
    ]
    ChunkId = Annotated[str | None, Field(description="A chunk_id from search_policy to highlight on the page")]

    @tool(server, READ_ONLY)
    async def get_page_image(
        source: Source,
        page_number: PageNumber,
        revision_id: SectionRevision = None,
        effective_date: SectionDate = None,
        highlight: Highlight = None,
        chunk_id: ChunkId = None,
    ) -> Annotated[CallToolResult, PageImageOutput]:
        """The cited page itself: one page of a revision's original PDF as a PNG image (150 dpi), with the
        given text or the chunk highlighted in yellow, so a claim can be checked against what the page shows.
        The revision is the one named, else the one in force on effective_date (default today). Errors:
        revision_not_found, policy_not_found, invalid_argument (a page beyond the document, a chunk of
        another revision)."""
        job = partial(work.page, stores, source, page_number, revision_id=revision_id,
                      effective_date=effective_date, highlight=highlight, chunk_id=chunk_id)  # fmt: skip
        return await run_tool("get_page_image", job)

    @tool(server, READ_ONLY)
    async def get_policy_snapshot(effective_date: SnapshotDate) -> Annotated[CallToolResult, SnapshotOutput]:
        """Which revision of every registered policy was in force on a date, and for the others why none
        was (not yet in force, or a gap between revisions). Use it to state the policy context of a review."""
        return await run_tool("get_policy_snapshot", partial(work.snapshot_on, stores, effective_date))

    @tool(server, READ_ONLY)
    async def list_policy_documents() -> Annotated[CallToolResult, DocumentsOutput]:
        """Every registered policy document: source slug, title, category and the revision in force today.
        The slugs are what the other tools' source and sources arguments take."""
        return await run_tool("list_policy_documents", partial(work.documents, stores))

    @tool(server, READ_ONLY)
    async def list_policy_revisions(source: Source) -> Annotated[CallToolResult, RevisionsOutput]:
        """All revisions of one policy, newest first, with effective_from/effective_to (null = still in
        force), status (processing, active, superseded, failed) and chunk_count."""
        return await run_tool("list_policy_revisions", partial(work.revisions, stores, source))

    @tool(server, ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True))
    async def ingest_policy_revision(
        source: Source, revision_id: RevisionId, file_path: FilePath, reindex: Reindex = False
    ) -> Annotated[CallToolResult, IngestOutput]:
        """Extract, chunk, embed and store a registered revision's PDF; blocks until done (about a minute
        for a 100-page PDF). The revision must already be registered (REST API).

        Running it again with the same file changes nothing (action "unchanged") unless reindex is true or
        the revision's chunks were removed (remove_policy_revision): then it is ingested again. With
        reindex true the chunks are rebuilt from the file given, even one other than the stored original,
        which it then replaces; searches keep finding the old chunks until the new ones are stored.
        extraction_method: "text_layer" (the PDF's own text, read with PyMuPDF), "ocr" (every page with
        text came from Tesseract OCR) or "mixed" (some pages each way). Errors: revision_not_found,
        file_not_found, path_not_allowed, unsupported_file_type, no_content, cannot_reindex (the revision
        is processing or being reindexed), revision_already_exists (another file, without reindex)."""
        return await run_tool(
            "ingest_policy_revision", partial(work.ingest_file, stores, source, revision_id, file_path, reindex)
        )

    @tool(server, ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True))
    async def remove_policy_revision(
        source: Source, revision_id: RevisionId
    ) -> Annotated[CallToolResult, RemoveOutput]:
        """Remove all of a revision's chunks from the search index, and nothing else: its registry entry and
        stored PDF stay, so ingest_policy_revision can rebuild it (the reindex job of spec 000). Until then
        searches find nothing of that revision. chunks_removed is 0 when it had none. To delete a revision
        entirely use the REST API (DELETE /api/v1/policies/{source}/revisions/{revision_id})."""
        return await run_tool("remove_policy_revision", partial(work.remove_chunks, stores, source, revision_id))

    CompareRevision = Annotated[
        str | None, Field(description="A revision id (list_policy_revisions); wins over the date when both are given")
    ]
    CompareDate = Annotated[str | None, Field(description="YYYY-MM-DD: the revision in force that day")]

    @tool(server, READ_ONLY)
    async def compare_policy_section(
        source: Source,
        section_ref: SectionRef,
        from_revision_id: CompareRevision = None,
        to_revision_id: CompareRevision = None,
        from_date: CompareDate = None,
        to_date: CompareDate = None,
    ) -> Annotated[CallToolResult, CompareOutput]:
        """What changed in one section between two revisions of a policy, e.g. Para 116 of the NPPF from
        December 2024 to the draft. Each side is the revision named, else the one in force on its date;
        with neither, "to" is the newest revision and "from" the one before it.

        Returns both texts with their citations (source, revision_id, version_label, section_ref,
        page_numbers), a word-level diff (similarity, words added and removed, the new text with
        [-removed-] and {+added+} inline) and reference_status: unchanged, changed, different (the same
        reference now says something else), missing_in_from or missing_in_to. Editions renumber, so when
        the reference is missing or different, matches lists the sections of the other revision
        (matches_in) that best say what this one says, found by searching that revision with the
        section's text, each with its score: cite those. Errors: section_not_found (in neither
        revision), revision_not_found, policy_not_found, invalid_argument (the same revision twice)."""
        job = partial(work.compare, stores, source=source, section_ref=section_ref,
                       from_revision_id=from_revision_id, to_revision_id=to_revision_id, from_date=from_date,
                       to_date=to_date)  # fmt: skip
        return await run_tool("compare_policy_section", job)
