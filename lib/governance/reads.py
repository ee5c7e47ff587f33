"""Reading the governance registry: one whole document, the list of documents, and the index's state."""

from __future__ import annotations

from collections.abc import Sequence

from lib.errors import DocumentNotFoundError, InvalidArgumentError
from lib.governance.models import GovernanceDocument, GovernanceDocumentSummary, IndexState, normalise_type
from lib.governance.parsing import canonical_id
from lib.governance.stores import GovernanceStores


def get_governance_document(stores: GovernanceStores, doc_id: str) -> GovernanceDocument:
    """The whole text and metadata of ``doc_id`` (``PEP 513``, ``pep-0513`` and ``513`` all name ``PEP-0513``).
    Raises ``DocumentNotFoundError``."""
    if not isinstance(doc_id, str) or not doc_id.strip():
        raise InvalidArgumentError("id must be a non-empty string")
    registry = stores.registry
    wanted = canonical_id(doc_id)
    record = registry.get(wanted)
    text = registry.text(wanted) if record is not None else None
    if record is None or text is None:
        raise DocumentNotFoundError(f"No governance document '{doc_id}' is indexed", doc_id=doc_id)
    return GovernanceDocument.model_validate({**record.model_dump(), "text": text})


def list_governance_documents(
    stores: GovernanceStores, *, doc_types: Sequence[str] | None = None, status: str | None = None
) -> list[GovernanceDocumentSummary]:
    """Every indexed document, by id, of ``doc_types`` and ``status`` when given (both compared
    case-insensitively; types also ignore ``-``/``_`` versus spaces)."""
    types = {normalise_type(t) for t in doc_types} if doc_types else None
    wanted_status = status.strip().lower() if status else None
    records = stores.registry.records()
    return [
        record.summary()
        for _, record in sorted(records.items())
        if (types is None or record.type_key in types)
        and (wanted_status is None or record.status.lower() == wanted_status)
    ]


def governance_index_state(stores: GovernanceStores) -> IndexState:
    registry = stores.registry
    records = registry.records()
    return IndexState(
        built=bool(records),
        documents=len(records),
        chunks=sum(r.chunk_count for r in records.values()),
        last_updated=registry.last_updated(),
    )
