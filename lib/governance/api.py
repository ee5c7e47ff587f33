"""The operations the governance interfaces call (MCP tools, REST ``/query``, LangChain, OpenAI, flow, CLI),
and their results, in one namespace: ``from lib.governance import api as governance``.

A plain re-export: ``lib/governance/__init__.py`` cannot hold it, because ``lib.kb`` imports this package's
stores and these operations import ``lib.kb``.
"""

from __future__ import annotations

from lib.governance.ingest import ingest_governance_corpus_files
from lib.governance.models import (
    CorpusIngestReport,
    FailedFile,
    GovernanceAnswer,
    GovernanceDocument,
    GovernanceDocumentSummary,
    GovernanceHit,
    GovernanceMetadata,
    IndexState,
)
from lib.governance.parsing import canonical_id
from lib.governance.reads import get_governance_document, governance_index_state, list_governance_documents
from lib.governance.search import INGEST_COMMAND, MAX_TOP_K, query_governance, warm_catalog

__all__ = [
    "INGEST_COMMAND",
    "MAX_TOP_K",
    "CorpusIngestReport",
    "FailedFile",
    "GovernanceAnswer",
    "GovernanceDocument",
    "GovernanceDocumentSummary",
    "GovernanceHit",
    "GovernanceMetadata",
    "IndexState",
    "canonical_id",
    "get_governance_document",
    "governance_index_state",
    "ingest_governance_corpus_files",
    "list_governance_documents",
    "query_governance",
    "warm_catalog",
]
