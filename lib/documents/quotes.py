"""``verify_document_quote``: is a quoted passage in an application's documents, and how faithfully
(``lib.quotes``: exact, normalised, close, altered), in which document, on which page?

An application's documents are read from its slice of the corpus index (``lib.documents.index``, served under
the application's generation), one passage per document, and that reading is kept with the slice
(``CorpusIndex.derived``), so a document ingested or deleted since is seen on the next call.
"""

from __future__ import annotations

from functools import partial

from pydantic import BaseModel, Field

from lib.citation import format_citation
from lib.documents.registry import check_application_ref
from lib.documents.stores import DocumentStores
from lib.quotes.classify import Quote, Verdict, check_quote, rank
from lib.quotes.passages import Passages
from lib.quotes.report import MatchFields, describe, match_fields
from lib.retrieval import CorpusIndex


class DocumentQuoteLocation(MatchFields):
    application_ref: str
    document_id: str
    source_file: str
    document_type: str


class DocumentQuoteVerification(BaseModel):
    verdict: str = Field(description="exact | normalised | close | altered | not_found")
    quote: str
    application_ref: str | None
    match: DocumentQuoteLocation | None
    message: str


def _read(index: CorpusIndex) -> Passages:
    return Passages.read(
        index.texts,
        index.metadatas,
        key=lambda m: str(m.get("document_id", "")),
        order=lambda m: (str(m.get("document_id", "")), int(m.get("chunk_index", 0))),
    )


def _key(location: DocumentQuoteLocation) -> tuple[int, float]:
    return rank(location.verdict), location.similarity if location.similarity is not None else 0.0


def verify_document_quote(
    stores: DocumentStores, quote: str, *, application_ref: str | None = None
) -> DocumentQuoteVerification:
    """Is ``quote`` in the documents of ``application_ref`` (default: every application)? The best match: exact,
    else normalised, else close or altered, with its document, page and the sentence around it."""
    quote = check_quote(quote)
    ref = check_application_ref(application_ref) if application_ref is not None else None
    registry = stores.registry
    refs = [ref] if ref is not None else stores.index.application_refs(registry.generation(), registry.application_refs)
    read = Quote.read(quote)
    best: DocumentQuoteLocation | None = None
    for index in stores.index.held(dict(zip(refs, registry.application_generations(refs), strict=True))):
        meta = {str(m.get("document_id", "")): m for m in index.metadatas}
        hit = index.derived("quotes", partial(_read, index)).best(read, close=True)
        if hit is None:
            continue
        passage, found = hit
        first = meta[passage.key]
        here = DocumentQuoteLocation(
            **match_fields(passage, found),
            application_ref=str(first.get("application_ref", index.key)),
            document_id=passage.key,
            source_file=str(first.get("source_file", "")),
            document_type=str(first.get("document_type", "")),
        )
        if best is None or _key(here) > _key(best):
            best = here
    verdict = best.verdict if best is not None else Verdict.NOT_FOUND.value
    if best is None:
        message = f"Not found in the documents of {ref}" if ref else "Not found in any application's documents"
    else:
        where = format_citation(
            document=f"{best.source_file} ({best.application_ref})",
            page_number=best.page_number,
            printed_page=best.printed_page,
        )
        message = describe(best, where)
    return DocumentQuoteVerification(verdict=verdict, quote=quote, application_ref=ref, match=best, message=message)
