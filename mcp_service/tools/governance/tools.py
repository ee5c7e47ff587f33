"""The ``governance`` MCP tools (spec 004 F1/F2): retrieval over governance documents for agents, and the
two reads an agent needs to follow a citation (a whole document, the list of documents).

Each handler validates through its typed signature, runs its ``work`` function (one call into ``lib``) on a
worker thread and answers in the service's envelope (``envelope``) in the shape ``outputs`` declares.
``query_governance`` replaces the envelope's text with the citation rendering (``[id] (file_path) score``,
``lib.integrations.citations``), its quoted document lines in blocks marked as document content; its structured
content is the answer itself, marked as every tool's is. The corpus is written by the
ingestion flow only (``policy-kb governance ingest PATH``): every tool reads.

Every optional argument also accepts ``null`` meaning its default, so arguments shaped by the OpenAI
strict schemas made from these tools (``lib.integrations.openai``: optional properties become required
and nullable) are valid here as they are.

No ``from __future__ import annotations`` here: the SDK builds each tool's input schema from the
annotations at registration.
"""

from functools import partial
from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, ContentBlock, ToolAnnotations
from pydantic import Field, Strict

from lib.governance.search import MAX_TOP_K
from lib.governance.stores import GovernanceStores
from lib.integrations.citations import render_answer
from mcp_service.tools.document_content import marked_blocks
from mcp_service.tools.envelope import run_tool
from mcp_service.tools.governance import work
from mcp_service.tools.governance.outputs import DocumentListOutput, GovernanceDocumentOutput, QueryGovernanceOutput
from mcp_service.tools.registration import date_field, tool

SERVER_NAME = "governance-rag"
DEFAULT_TOP_K = 5

INSTRUCTIONS = (
    "Governance documents (ADRs, PRDs, policies, runbooks, Python Enhancement Proposals) with their status "
    "in time. query_governance finds passages among the documents in force today (or as_of a day, or every "
    "document with include_inactive); cite each result as [id] (file_path). A hit whose superseded_by is "
    "not empty has a successor: follow it with get_governance_document. list_governance_documents lists "
    "documents by type and status."
)

Question = Annotated[
    str,
    Field(
        min_length=1, description="The question, in plain words, e.g. 'How are inline script dependencies declared?'"
    ),
]
TopK = Annotated[
    int | None,
    Strict(),
    Field(
        ge=1,
        le=MAX_TOP_K,
        description=f"How many passages to return, best first, 1..{MAX_TOP_K}; null = {DEFAULT_TOP_K}",
    ),
]
DocTypes = Annotated[
    list[str] | None,
    Field(
        description="Only documents of these types, as the documents state them (case, '-' and '_' ignored), "
        "e.g. ['Standards Track'], ['adr'], ['prd']; null = every type"
    ),
]
AsOf = Annotated[
    str | None,
    date_field(
        "Search the documents in force that day (created by then, not replaced by a successor created by then, "
        "not past supported_until, not Rejected or Withdrawn); null = today"
    ),
]
IncludeInactive = Annotated[
    bool | None,
    Strict(),
    Field(description="true: search every document whatever its status or date (as_of is then ignored); null = false"),
]
Mode = Annotated[
    Literal["hybrid", "dense", "lexical"] | None,
    Field(
        description="Ranking: hybrid (meaning and exact terms fused), dense (meaning only) or lexical (BM25: "
        "best for an id such as 'PEP 723' or a rare term); null = hybrid"
    ),
]
DocId = Annotated[str, Field(min_length=1, description="Document id as a hit's metadata.id gives it, e.g. PEP-0723")]
Status = Annotated[
    str | None, Field(description="Only documents with this status as stated, e.g. 'Final', 'Superseded'; null = any")
]


def register_tools(server: MCPServer, stores: GovernanceStores, *, interface: str = "mcp") -> None:
    """Add the three governance tools to ``server``, over the governance stores; they touch ``stores`` only when
    called. ``interface`` names the transport in the query log (``mcp``, ``stdio``)."""
    read_only = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

    @tool(server, read_only)
    async def query_governance(
        question: Question,
        top_k: TopK = DEFAULT_TOP_K,
        doc_types: DocTypes = None,
        as_of: AsOf = None,
        include_inactive: IncludeInactive = False,
        mode: Mode = "hybrid",
    ) -> Annotated[CallToolResult, QueryGovernanceOutput]:
        """Search governance documents (ADRs, PRDs, policies, runbooks, PEPs) for passages that answer a
        question. Use it for questions about platform policies, architecture decisions, standards and
        operational procedures.

        Returns question, top_k, as_of, mode and results, best first: text, score (0..1), dense_score,
        lexical_score and metadata (id, title, type, status, file_path, heading, created, superseded_by,
        replaces). The text content lists each hit as '[id] (file_path) score', then the document's own words quoted
        ('> ' lines: title, heading, passage).
        Errors: index_not_built (nothing ingested yet: the message names the command), invalid_date,
        invalid_argument."""
        job = partial(
            work.query,
            stores,
            interface,
            question,
            top_k=top_k or DEFAULT_TOP_K,
            doc_types=doc_types or None,
            as_of=as_of,
            include_inactive=bool(include_inactive),
            mode=mode or "hybrid",
        )
        result = await run_tool("query_governance", job, search=stores.settings.search)
        if not result.is_error and result.structured_content is not None:
            # The passages quoted on lines of their own, in blocks annotated as document content (as every tool's).
            blocks: list[ContentBlock] = [*marked_blocks(render_answer(result.structured_content))]
            result.content = blocks
        return result

    @tool(server, read_only)
    async def get_governance_document(id: DocId) -> Annotated[CallToolResult, GovernanceDocumentOutput]:
        """One whole governance document by id, under document: its text as ingested (front matter and
        headers left out) and metadata (title, type, status, file_path, created, supported_until, version,
        relates_to, superseded_by, replaces, chunk_count). Errors: document_not_found, index_not_built."""
        return await run_tool("get_governance_document", partial(work.document, stores, id))

    @tool(server, read_only)
    async def list_governance_documents(
        doc_types: DocTypes = None, status: Status = None
    ) -> Annotated[CallToolResult, DocumentListOutput]:
        """The ingested governance documents, sorted by id, optionally of some types or one status: id,
        title, type, status, file_path, created, supported_until, superseded_by, replaces, chunk_count.
        Errors: index_not_built."""
        return await run_tool("list_governance_documents", partial(work.document_list, stores, doc_types, status))
