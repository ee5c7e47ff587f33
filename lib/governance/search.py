"""``query_governance``: the one retrieval function every governance interface calls (spec 004 F1-F4, issue 12).

Both legs search exactly the chunks of the documents that pass the filters: in force on ``as_of`` (today by
default; ``lib.governance.in_force``) unless ``include_inactive``, and of the ``doc_types`` asked for (the
catalog works each filter out once per version: ``Catalog.view``). The dense leg scores every row of the
process's stacked matrix (``lib.retrieval.DocumentsIndex``: exact cosine, one BLAS thread) and masks the
disallowed rows before the top is taken, or, for a filter asked for again, a kept copy of just its rows
(``Catalog.rows_of``: the same scores, bit for bit); the lexical leg runs BM25 over the allowed documents'
chunks only (so IDF comes from them); ``lib.retrieval.search`` ranks, keeping at most ``PER_DOCUMENT``
chunks of one document. Hits carry status and chain links from the registry, and each leg's score on the scale
the other stores report: ``dense_score`` the cosine relevance, ``lexical_score`` the raw BM25 score.

Per query, besides the encoder and the two legs, the catalog costs one Redis GET (the registry's version),
so a document another process ingests or removes is searched, or not, from the next query on.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime

from lib.dates import parse_date
from lib.errors import IndexNotBuiltError, InvalidArgumentError
from lib.governance.catalog import Catalog, CatalogView
from lib.governance.models import (
    GovernanceAnswer,
    GovernanceHit,
    GovernanceMetadata,
    GovernanceRecord,
    normalise_type,
)
from lib.governance.stores import GovernanceStores
from lib.observability.metrics import searches
from lib.retrieval import LexicalAnswer, Query, check_mode, check_query, check_result_count, search
from lib.stores.chroma import StoredChunk

MAX_TOP_K = 20
PER_DOCUMENT = 3
"""At most this many chunks of one document in a top k: a long PEP's many sections near a question otherwise
crowd out the one that answers it ("single-file script dependencies": PEP 751 took 7 of the top 10 and the
answering PEP 723 came 8th). Three, not two: a question naming one document ("PEP 723") still gets that
document's three best passages, and the tool's default top 5 still shows at least two documents."""
INGEST_COMMAND = "policy-kb governance ingest PATH"


def index_not_built() -> IndexNotBuiltError:
    return IndexNotBuiltError(
        f"The governance index is not built yet: run `{INGEST_COMMAND}` with the folder of governance documents "
        "(or the ingest_governance_corpus flow), then ask again"
    )


def today() -> date:
    return datetime.now(UTC).date()


def query_governance(
    stores: GovernanceStores,
    question: str,
    *,
    top_k: int = 5,
    doc_types: Sequence[str] | None = None,
    as_of: str | None = None,
    include_inactive: bool = False,
    mode: str = "hybrid",
    per_document: int | None = PER_DOCUMENT,
) -> GovernanceAnswer:
    """The ``top_k`` best chunks for ``question`` among the documents in force on ``as_of`` (ISO date; today
    when omitted) or among all with ``include_inactive``, of ``doc_types`` when given (compared normalised:
    ``Standards Track`` = ``standards-track``), at most ``per_document`` of one document (``None``: no limit).
    Raises ``InvalidArgumentError``, ``InvalidDateError``, or
    ``IndexNotBuiltError`` naming the ingest command when nothing is indexed."""
    check_query(question, "question")
    check_result_count(top_k, MAX_TOP_K, "top_k")
    search_mode = check_mode(mode)
    day = today() if as_of is None else parse_date(as_of, field="as_of")
    types = frozenset(normalise_type(t) for t in doc_types) if doc_types else None
    if doc_types is not None and any(not isinstance(t, str) or not t.strip() for t in doc_types):
        raise InvalidArgumentError("doc_types must be non-empty strings")

    catalog = stores.catalog.current(stores.registry, stores.chunks)
    if not catalog.records:
        raise index_not_built()
    view = catalog.view(day, types, include_inactive)
    searches.labels("governance", search_mode.value).inc()
    ranked = search(
        Query(question, top_k, search_mode, per_document=per_document, document_fields=("doc_id",)),
        lambda depth: _dense(stores, catalog, view, question, depth),
        lambda depth: _lexical(catalog, view, question, depth),
    )
    results = [
        GovernanceHit(
            text=hit.chunk.text,
            score=round(hit.relevance, 4),
            dense_score=None if hit.dense_score is None else round(hit.dense_score, 4),
            lexical_score=None if hit.lexical_score is None else round(hit.lexical_score, 4),
            metadata=hit_metadata(catalog.records[str(hit.chunk.metadata["doc_id"])], hit.chunk),
        )
        for hit in ranked
    ]
    return GovernanceAnswer(
        question=question, top_k=top_k, as_of=day.isoformat(), mode=search_mode.value, results=results
    )


def warm_catalog(stores: GovernanceStores) -> int:
    """Load this process's catalog (vectors, lexical index, today's in-force view) now, so a server's first
    query does not pay for it (seconds at the scale of the PEPs); the number of documents indexed."""
    catalog = stores.catalog.current(stores.registry, stores.chunks)
    if catalog.records:
        catalog.view(today(), None, False)
    return len(catalog.records)


def hit_metadata(record: GovernanceRecord, chunk: StoredChunk) -> GovernanceMetadata:
    return GovernanceMetadata(
        id=record.id,
        title=record.title,
        type=record.type,
        status=record.status,
        file_path=record.file_path,
        heading=str(chunk.metadata.get("heading") or record.title),
        created=record.created,
        superseded_by=record.superseded_by,
        replaces=record.replaces,
    )


def _dense(
    stores: GovernanceStores, catalog: Catalog, view: CatalogView, question: str, depth: int
) -> list[tuple[StoredChunk, float]]:
    if not view.rows:
        return []
    vector = stores.embedder.embed_queries([question])[0]
    kept = catalog.rows_of(view)
    if kept is not None:
        return catalog.index.dense(vector, depth, columns=kept, shown=view.shown)
    return catalog.index.dense(vector, depth, view.hidden)


def _lexical(catalog: Catalog, view: CatalogView, question: str, depth: int) -> LexicalAnswer:
    if not len(view.documents):
        return LexicalAnswer([], 0.0)
    return LexicalAnswer(*catalog.index.ranked_lexical(question, depth, view.lexical))
