"""``verify_document_quote`` (issue 26): is a quoted passage in an application's documents, word for word,
normalised or close (``lib.text.quotes``), and in which document, on which page?

An application's documents are read from its slice of the corpus index (``lib.documents.index``, served under
the application's generation), one passage per document, and that reading is kept with the slice
(``CorpusIndex.derived``), so a document ingested or deleted since is seen on the next call.
"""

from __future__ import annotations

from functools import partial

from pydantic import BaseModel, Field

from lib.documents.registry import check_application_ref
from lib.documents.stores import DocumentStores
from lib.retrieval.corpus_index import CorpusIndex
from lib.text.quotes import Passages, Verdict, check_quote, rank


class DocumentQuoteLocation(BaseModel):
    verdict: str = Field(description="exact | normalised | close")
    application_ref: str
    document_id: str
    source_file: str
    document_type: str
    page_number: int
    context: str = Field(description="The passage around the match, cut at sentence ends")
    matched_text: str = Field(description="The document's own text where the quote matched")
    similarity: float = Field(description="1.0 for exact and normalised; for close, how alike (0.85..1)")
    differences: list[str] = Field(default_factory=list, description="For close: 'quoted' -> 'text' per change")


class DocumentQuoteVerification(BaseModel):
    verdict: str = Field(description="exact | normalised | close | not_found")
    quote: str
    application_ref: str | None
    match: DocumentQuoteLocation | None
    message: str


def _read(index: CorpusIndex) -> Passages:
    return Passages.read(index.texts, index.metadatas, key=lambda m: str(m.get("document_id", "")),
                         order=lambda m: (str(m.get("document_id", "")), int(m.get("chunk_index", 0))))  # fmt: skip


def verify_document_quote(
    stores: DocumentStores, quote: str, *, application_ref: str | None = None
) -> DocumentQuoteVerification:
    """Is ``quote`` in the documents of ``application_ref`` (default: every application)? The best match: exact,
    else normalised, else close, with its document, page and the sentence around it."""
    quote = check_quote(quote)
    ref = check_application_ref(application_ref) if application_ref is not None else None
    registry = stores.registry
    refs = [ref] if ref is not None else stores.index.application_refs(registry.generation(), registry.application_refs)
    best: DocumentQuoteLocation | None = None
    for index in stores.index.held(dict(zip(refs, registry.application_generations(refs), strict=True))):
        meta = {str(m.get("document_id", "")): m for m in index.metadatas}
        hit = index.derived("quotes", partial(_read, index)).best(quote, close=True)
        if hit is None:
            continue
        passage, found = hit
        first = meta[passage.key]
        here = DocumentQuoteLocation(
            verdict=found.verdict.value, application_ref=str(first.get("application_ref", index.key)),
            document_id=passage.key, source_file=str(first.get("source_file", "")),
            document_type=str(first.get("document_type", "")), page_number=passage.page_at(found.start),
            context=passage.context(found.start, found.end),
            matched_text=" ".join(passage.text[found.start : found.end].split()), similarity=found.similarity,
            differences=found.differences,
        )  # fmt: skip
        if best is None or (rank(here.verdict), here.similarity) > (rank(best.verdict), best.similarity):
            best = here
    verdict = best.verdict if best is not None else Verdict.NOT_FOUND.value
    if best is None:
        message = f"Not found in the documents of {ref}" if ref else "Not found in any application's documents"
    else:
        where = f"{best.source_file} ({best.application_ref}), page {best.page_number}"
        message = {
            "exact": f"Found word for word in {where}",
            "normalised": f"Found in {where}, differing only in spacing, hyphenation or typography",
            "close": f"Not verbatim: the closest passage is in {where} ({best.similarity:.0%} alike; "
            + "; ".join(best.differences[:3]) + ")",
        }[verdict]  # fmt: skip
    return DocumentQuoteVerification(verdict=verdict, quote=quote, application_ref=ref, match=best, message=message)
