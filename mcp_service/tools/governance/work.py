"""What each ``governance-rag`` tool does: one call into ``lib`` over the server's ``GovernanceStores``, its
result in the tool's output shape (``outputs``). A query goes through ``lib.integrations.query_log.logged_query``
(one log line per query, naming the interface). The handlers in ``tools`` run these on a worker thread through
the envelope; nothing here knows about MCP."""

from __future__ import annotations

from typing import Any

from lib.governance.models import GovernanceAnswer
from lib.governance.reads import get_governance_document, list_governance_documents
from lib.governance.stores import GovernanceStores
from lib.integrations.query_log import logged_query


def query(stores: GovernanceStores, interface: str, question: str, **filters: Any) -> GovernanceAnswer:
    return logged_query(stores, question, interface=interface, **filters)


def document_list(stores: GovernanceStores, doc_types: list[str] | None, status: str | None) -> dict[str, Any]:
    documents = list_governance_documents(stores, doc_types=doc_types, status=status)
    return {"total": len(documents), "documents": [d.model_dump(mode="json") for d in documents]}


def document(stores: GovernanceStores, doc_id: str) -> dict[str, Any]:
    return {"document": get_governance_document(stores, doc_id).model_dump(mode="json")}
