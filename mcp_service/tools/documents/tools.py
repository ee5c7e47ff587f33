"""The ``document-store-mcp`` tools: spec 003 FR-001..FR-004 over planning-application documents.

Four tools, each a typed signature running its ``work`` function (one call into ``lib.documents``) on a worker
thread, the spec's JSON out (``envelope``) in the shape ``outputs`` declares. The server they are registered on
is built in ``mcp_service.document_store``.

No ``from __future__ import annotations`` here: the SDK builds each tool's input schema from the
annotations at registration, and the bounds come from the settings in ``register_tools``.
"""

from functools import partial
from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field, Strict

from lib.documents.classification import DOCUMENT_TYPES
from lib.documents.stores import DocumentStores
from mcp_service.tools.documents import work
from mcp_service.tools.documents.outputs import (
    DocumentListOutput,
    DocumentQuoteOutput,
    DocumentTextOutput,
    IngestDocumentOutput,
    SearchOutput,
)
from mcp_service.tools.envelope import run_tool
from mcp_service.tools.progress import reporter
from mcp_service.tools.registration import READ_ONLY, tool

SERVER_NAME = "document-store-mcp"

INSTRUCTIONS = (
    "The documents of UK planning applications (transport assessments, design and access statements, "
    "plans, reports ...), ingested once each. list_ingested_documents gives an application's documents; "
    "search_application_docs finds passages, filtered by application_ref and document_types, by meaning and by "
    "exact terms (application references, street names, policy codes); "
    "get_document_text returns a whole document. Cite source_file and page_numbers from each result."
)

DocumentType = Literal[DOCUMENT_TYPES]  # type: ignore[valid-type]
ApplicationRef = Annotated[str, Field(description="Planning application reference, e.g. '25/01178/REM'")]
DocumentId = Annotated[
    str,
    Field(description="Document id as ingest_document or list_ingested_documents gave it, e.g. 25_01178_REM_a1b2c3"),
]


def register_tools(server: MCPServer, stores: DocumentStores) -> None:
    """Add the four spec 003 tools to ``server``, over the application-document stores."""
    max_results = stores.settings.search.max_results
    Query = Annotated[str, Field(description="What to look for, in plain words, e.g. 'cycle parking provision'")]
    MaxResults = Annotated[
        int, Strict(), Field(ge=1, le=max_results, description="How many chunks to return, best first")
    ]
    FilePath = Annotated[
        str,
        Field(description="Path of the file on the server, inside one of its ALLOWED_FILE_ROOTS (a PDF or an image)"),
    ]
    TypeOverride = Annotated[
        DocumentType | None, Field(description="Document type; omit to classify from the file name, then content")
    ]
    TypeFilter = Annotated[
        list[DocumentType] | None, Field(description="Only these document types, e.g. ['transport_assessment']")
    ]
    RefFilter = Annotated[str | None, Field(description="Only this application, e.g. '25/01178/REM'")]
    Mode = Annotated[
        Literal["hybrid", "dense", "lexical"],
        Field(
            description="How results are ranked: hybrid (default) fuses meaning and exact terms; dense ranks by "
            "meaning only (the spec's semantic search); lexical by the words and references named (BM25), best "
            "for an application reference, a street name or a code such as 'LTN 1/20'"
        ),
    ]

    @tool(server, ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True))
    async def ingest_document(
        file_path: FilePath, application_ref: ApplicationRef, ctx: Context, document_type: TypeOverride = None
    ) -> Annotated[CallToolResult, IngestDocumentOutput]:
        """Extract (text layer, OCR for scanned pages), chunk, embed and store one document of an application.

        status is success (document_id, chunks_created, extraction_method, contains_drawings, total_chars,
        total_words), already_ingested (the same content was ingested for this application before), or
        skipped with reason image_based (drawings or scans with nothing to read without OCR). Errors:
        file_not_found, path_not_allowed, unsupported_file_type (the content is not a PDF or an image, by its
        bytes whatever its name, or the name says another type than the content: a PNG saved as .pdf),
        encrypted, extraction_failed, no_content. Sends progress notifications when asked (a progressToken)."""
        job = partial(work.ingest, stores, file_path, application_ref, document_type, reporter(ctx))
        return await run_tool("ingest_document", job)

    @tool(server, READ_ONLY)
    async def search_application_docs(
        query: Query,
        application_ref: RefFilter = None,
        document_types: TypeFilter = None,
        max_results: MaxResults = 10,
        mode: Mode = "hybrid",
    ) -> Annotated[CallToolResult, SearchOutput]:
        """Search ingested application documents by meaning and exact terms, best first; the filters apply
        to both rankings before anything is ranked.

        Results are best first by score (0..1: in hybrid the fused rank score, 1 only for a chunk both rankings
        put first; in dense mode relevance_score; in lexical mode the share of the best possible BM25 score).
        Each result has chunk_id, text, relevance_score (the spec's max(0, 1 - L2 distance / 2), null in lexical
        mode), score, dense_score and lexical_score (each ranking's 0..1 score, null when it did not find the
        chunk), and metadata: application_ref,
        document_id, source_file, document_type, page_numbers (comma-separated), chunk_index, total_chunks,
        extraction_method, char_count, word_count."""
        search = partial(work.search, stores, query, application_ref, document_types, max_results, mode)
        return await run_tool("search_application_docs", search, search=stores.settings.search)

    @tool(server, READ_ONLY)
    async def verify_document_quote(
        quote: Annotated[str, Field(description="The passage as quoted, 12 to 4,000 characters")],
        application_ref: RefFilter = None,
    ) -> Annotated[CallToolResult, DocumentQuoteOutput]:
        """Check that a quoted passage is really in an application's documents before citing it. verdict: exact
        (character for character), normalised (differs only in whitespace, line-end hyphenation, ligatures,
        curly quotes, dashes, bullet marks or an omission marked '...'), close (a slip that keeps the meaning:
        similarity and word_changes given), altered (the meaning changed: meaning_changes names each negation,
        modal, number, date, qualifier or antonym; similarity null), not_found. match gives document_id,
        source_file, document_type, page_number and the sentence around it. Errors: invalid_argument."""
        return await run_tool("verify_document_quote", partial(work.quote, stores, quote, application_ref))

    @tool(server, READ_ONLY)
    async def get_document_text(document_id: DocumentId) -> Annotated[CallToolResult, DocumentTextOutput]:
        """The whole text of one ingested document, its chunks joined in order (overlaps removed), with
        file_path (the path it was ingested from) and object_key (where the original is kept).
        Errors: document_not_found, no_chunks."""
        return await run_tool("get_document_text", partial(work.text, stores, document_id))

    @tool(server, READ_ONLY)
    async def list_ingested_documents(application_ref: ApplicationRef) -> Annotated[CallToolResult, DocumentListOutput]:
        """Every document ingested for one application (an empty list when none): document_id, file_path (the
        path it was ingested from), object_key (where the original is kept), source_file, document_type,
        chunk_count, ingested_at (e.g. 2026-02-14T10:30:00Z), extraction_method, contains_drawings."""
        return await run_tool("list_ingested_documents", partial(work.listing, stores, application_ref))
