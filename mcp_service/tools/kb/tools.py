"""The ``kb`` MCP server's tools (spec 002): notes and files in tag collections, searched, updated, uploaded
in chunks. Each handler is typed, runs its ``work`` function (one engine call with the collection
convention, or the upload staging) and returns the spec's JSON in the project's envelope.

The handlers are coroutines awaiting the engine over HTTP rather than threads blocking on it: when the
engine is this very service, its routes need the worker threads to answer. The reads are admitted first
(``run_engine_read``): past the engine lane's bounds they are refused ``overloaded`` at once, never sent on.
The writes are not: the engine only queues their jobs (no search), and a multi-part upload is never
refused half-way through (decision 0034).

No ``from __future__ import annotations`` here: the SDK builds each tool's input schema from the
annotations at registration.
"""

import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field, Strict

from lib.config import SearchSettings
from lib.errors import KBError
from lib.notes.uploads import MAX_CHUNK_BYTES
from mcp_service.search_lane import engine_lane
from mcp_service.tools.envelope import INTERNAL_MESSAGE, error, success
from mcp_service.tools.kb import work
from mcp_service.tools.kb.outputs import (
    DocumentOutput,
    DocumentsOutput,
    JobAccepted,
    JobsOutput,
    SearchOutput,
    StatusOutput,
    UploadChunkOutput,
    UploadStartOutput,
)
from mcp_service.tools.kb.work import KbStores
from mcp_service.tools.registration import READ_ONLY, tool

logger = logging.getLogger(__name__)

SERVER_NAME = "kb-mcp"

INSTRUCTIONS = (
    "A knowledge base of notes and files kept in collections (e.g. 'documents', 'memory'). kb_search finds "
    "passages by meaning and exact words, optionally in one collection or with tags; kb_addnote stores a note "
    "(ingested in the background: follow kb_jobs); kb_update_note rewrites a note in place; kb_get reads a "
    "document. Files (PDF, Markdown, text) go up in base64 chunks: kb_upload_start, kb_upload_chunk per chunk, "
    "kb_upload_finish."
)


async def run_engine_tool(name: str, pending: Awaitable[dict[str, Any]]) -> CallToolResult:
    """Await ``pending`` and wrap its outcome in the envelope (``tools.envelope``'s contract, for coroutines)."""
    try:
        payload = await pending
    except KBError as exc:
        envelope = exc.envelope()
        logger.info("tool.failed tool=%s error_type=%s", name, envelope["error_type"])
        return error(envelope["error_type"], envelope["message"])
    except Exception:
        logger.exception("tool.crashed tool=%s", name)
        return error("internal", INTERNAL_MESSAGE)
    return success(payload)


async def run_engine_read(
    name: str, read: Callable[[], Awaitable[dict[str, Any]]], settings: SearchSettings
) -> CallToolResult:
    """``read()`` once this process's engine lane (``search_lane.engine_lane``) admits it; past its bounds the
    tool answers ``overloaded`` at once, the engine never called."""

    async def admitted() -> dict[str, Any]:
        async with engine_lane(settings).admit():
            return await read()

    return await run_engine_tool(name, admitted())


def register_tools(server: MCPServer, stores: KbStores) -> None:
    """Add the ``kb`` tools to ``server``, over the engine they call and the staging area uploads use."""
    engine, staging, search = stores.engine, stores.staging, stores.settings.search
    max_results = search.max_results
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
    updates = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)

    Collection = Annotated[
        str | None, Field(description="Only this collection (e.g. 'memory'), i.e. the tag collection:<name>")
    ]
    Tags = Annotated[list[str] | None, Field(description="Tags, e.g. ['feedback', 'email']")]
    DocumentId = Annotated[
        int, Strict(), Field(ge=1, description="Document id, as kb_search, kb_get or kb_jobs gave it")
    ]
    NoteText = Annotated[str, Field(min_length=1, description="The note's text (Markdown welcome)")]
    UploadId = Annotated[str, Field(description="The upload_id kb_upload_start returned")]

    @tool(server, READ_ONLY)
    async def kb_search(
        query: Annotated[str, Field(min_length=1, description="What to look for, e.g. 'pension revaluation'")],
        top: Annotated[
            int, Strict(), Field(ge=1, le=max_results, description="How many chunks to return, best first")
        ] = 10,
        collection: Collection = None,
        tags: Annotated[list[str] | None, Field(description="Only documents carrying every one of these tags")] = None,
        fts_only: Annotated[bool, Strict(), Field(description="Full-text (exact words, BM25) ranking only")] = False,
    ) -> Annotated[CallToolResult, SearchOutput]:
        """Search notes and files by meaning and exact words (hybrid), best first.

        collection adds the tag collection:<collection> to the tags filter. Each result has document_id,
        chunk_index, text, score (with dense_score and lexical_score), title, source_path, kind (note | file),
        filename, created_at, updated_at, collection and tags (without the collection tag)."""
        read = partial(work.search, engine, query, top, collection, tags, fts_only)
        return await run_engine_read("kb_search", read, search)

    @tool(server, writes)
    async def kb_addnote(
        text: NoteText,
        collection: Annotated[str, Field(description="Collection of the note, e.g. 'memory'")] = "documents",
        tags: Tags = None,
        title: Annotated[str | None, Field(description="A title; default: from the text")] = None,
        source_path: Annotated[
            str | None, Field(description="Where the note comes from, e.g. 'memory/feedback_testing.md' (kb_get)")
        ] = None,
    ) -> Annotated[CallToolResult, JobAccepted]:
        """Store a note in a collection (default 'documents'); it is chunked and embedded in the background.

        Returns job_id at once; kb_jobs shows it completed with its document_id. The note carries exactly one
        collection tag (collection:<collection>); collection:* among tags is replaced by it."""
        job = work.add_note(engine, text, collection, tags, title, source_path)
        return await run_engine_tool("kb_addnote", job)

    @tool(server, updates)
    async def kb_update_note(document_id: DocumentId, text: NoteText) -> Annotated[CallToolResult, DocumentOutput]:
        """Replace a note's text in place and return the updated document. Searches find the old text until
        the new chunks are stored, and never afterwards. Errors: document_not_found, not_a_note (an uploaded
        file cannot be updated)."""
        return await run_engine_tool("kb_update_note", work.update_note(engine, document_id, text))

    @tool(server, updates)
    async def kb_set_collection(
        document_id: DocumentId,
        collection: Annotated[str, Field(description="The collection the document moves to, e.g. 'memory'")],
    ) -> Annotated[CallToolResult, DocumentOutput]:
        """Move a document (note or file) to another collection: its old collection tag is removed first, then
        collection:<collection> added, so it belongs to exactly one. Errors: document_not_found."""
        return await run_engine_tool("kb_set_collection", work.set_collection(engine, document_id, collection))

    @tool(server, READ_ONLY)
    async def kb_get(
        document_id: Annotated[
            int | None, Strict(), Field(ge=1, description="A document id: that document, with chunks")
        ] = None,
        source_path: Annotated[
            str | None, Field(description="A source path, e.g. 'memory/feedback_testing.md': every match")
        ] = None,
    ) -> Annotated[CallToolResult, DocumentsOutput]:
        """A document by id: the document itself, its details and chunks. Or by source path: {count, documents},
        every document with it. Give exactly one. A document has collection and tags (without the collection
        tag). Errors: document_not_found."""
        return await run_engine_read("kb_get", partial(work.get_documents, engine, document_id, source_path), search)

    @tool(server, READ_ONLY)
    async def kb_status() -> Annotated[CallToolResult, StatusOutput]:
        """The engine's health and statistics: version, model and device, document and chunk counts, queue
        state (engine_status), plus this server's engine_url and uploads (in_progress and limits)."""
        return await run_engine_read("kb_status", partial(work.status, engine, staging), search)

    @tool(server, READ_ONLY)
    async def kb_jobs(
        status: Annotated[
            Literal["queued", "running", "completed", "failed"] | None, Field(description="Only jobs in this state")
        ] = None,
    ) -> Annotated[CallToolResult, JobsOutput]:
        """Recent ingestion jobs, newest first: job_id, status (failed ones with their error), created_at,
        started_at, finished_at, document_id once completed, kind, filename, collection and tags."""
        return await run_engine_read("kb_jobs", partial(work.jobs, engine, status), search)

    @tool(server, writes)
    async def kb_upload_start(
        filename: Annotated[str, Field(description="The file's name: .pdf, .md or .txt, e.g. 'report.pdf'")],
        total_size: Annotated[int, Strict(), Field(ge=1, description="The file's size in bytes (before base64)")],
        tags: Tags = None,
        collection: Annotated[str | None, Field(description="Collection of the file; default 'documents'")] = None,
        source_path: Annotated[
            str | None, Field(description="Where the file comes from, for kb_get(source_path=...); default filename")
        ] = None,
    ) -> Annotated[CallToolResult, UploadStartOutput]:
        """Start a chunked file upload (PDF, Markdown or plain text) and return its upload_id. Then send the
        file in order with kb_upload_chunk, and kb_upload_finish. Finish before expires_at (unix time), or the
        upload is abandoned and removed. The document keeps source_path (the filename as given unless told), so
        kb_get(source_path=...) finds it. Errors: unsupported_file_type, invalid_argument (size over the limit)."""
        job = work.start_upload(engine, staging, filename, total_size, tags, collection, source_path)
        return await run_engine_tool("kb_upload_start", job)

    @tool(server, writes)
    async def kb_upload_chunk(
        upload_id: UploadId,
        data: Annotated[str, Field(description=f"Base64 of the chunk's bytes, at most {MAX_CHUNK_BYTES} bytes")],
        chunk_index: Annotated[
            int, Strict(), Field(ge=0, description="0 for the first chunk, then 1, 2, ... in file order")
        ],
    ) -> Annotated[CallToolResult, UploadChunkOutput]:
        """Store one chunk of an upload (1 MiB chunks are a good size). Sending an index again with the same
        bytes is harmless (a retry); with other bytes it is an error. Errors: upload_not_found (unknown,
        finished or expired), invalid_argument (not base64, too large, past total_size)."""
        return await run_engine_tool("kb_upload_chunk", work.put_chunk(staging, upload_id, data, chunk_index))

    @tool(server, writes)
    async def kb_upload_finish(upload_id: UploadId) -> Annotated[CallToolResult, JobAccepted]:
        """Reassemble the chunks and submit the file for ingestion with the start's tags and collection; returns
        job_id (follow it with kb_jobs). Refused while a chunk is missing or the bytes do not add up to
        total_size. If the engine cannot take it, the upload stays staged and finish may be called again."""
        return await run_engine_tool("kb_upload_finish", work.finish_upload(engine, staging, upload_id))
