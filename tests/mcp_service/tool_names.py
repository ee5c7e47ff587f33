"""Each server's tools by name, as the specs and this service publish them: the reads, and the writes a read-only
key may not call. Tests compare what a server lists against these."""

from __future__ import annotations

POLICY_READS = frozenset(
    {
        "search_policy",
        "search_policy_batch",
        "get_policy_section",
        "list_policy_sections",
        "find_citing_sections",
        "compare_policy_section",
        "get_policy_snapshot",
        "list_policy_documents",
        "list_policy_revisions",
        "verify_quote",
        "get_page_image",
    }
)
POLICY_WRITES = frozenset({"ingest_policy_revision", "remove_policy_revision"})

DOCUMENT_READS = frozenset(
    {"search_application_docs", "get_document_text", "list_ingested_documents", "verify_document_quote"}
)
DOCUMENT_WRITES = frozenset({"ingest_document"})

KB_READS = frozenset({"kb_search", "kb_get", "kb_status", "kb_jobs"})
KB_WRITES = frozenset(
    {"kb_addnote", "kb_update_note", "kb_set_collection", "kb_upload_start", "kb_upload_chunk", "kb_upload_finish"}
)

GOVERNANCE_READS = frozenset({"query_governance", "get_governance_document", "list_governance_documents"})
GOVERNANCE_WRITES: frozenset[str] = frozenset()
"""None: the corpus is written by the ingestion flow only (``policy-kb governance ingest PATH``)."""

SERVER_TOOLS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "policy-kb": (POLICY_READS, POLICY_WRITES),
    "document-store": (DOCUMENT_READS, DOCUMENT_WRITES),
    "kb": (KB_READS, KB_WRITES),
    "governance": (GOVERNANCE_READS, GOVERNANCE_WRITES),
}
"""Server name (as ``mcp_service.__main__.SERVERS`` names it) -> (read tools, write tools)."""
