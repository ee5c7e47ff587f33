"""Planning-application documents (spec 003): ingest, search, full text, list and delete.

The MCP tools, the Prefect flow and the CLI all call these functions; nothing else writes the
application-document stores. An ingestion:

1. reads ``file_path`` only inside ``ALLOWED_FILE_ROOTS`` (after resolving symlinks and ``..``);
2. hashes the bytes: ``document_id`` is ``{sanitized_ref}_{sha256[:6]}``; a registered id answers
   ``already_ingested`` at once;
3. measures how much of each PDF page is covered by images, before any extraction: a document above
   ``IMAGE_RATIO_THRESHOLD`` on average is image-based (drawings, renders, raw scans) and is not OCR'd;
4. takes the document's claim in Redis, so a concurrent ingestion of the same file waits and then
   answers ``already_ingested`` instead of extracting and embedding a second time;
5. extracts (text layer, OCR of text-less pages on every core), chunks, classifies and embeds in memory;
6. writes the original to the object store, upserts the chunks, and registers the document last.

The registry decides what exists: search hides chunks of unregistered documents, so a crash between
steps 6's writes leaves only orphans, never a half document in results, and a failure undoes the
writes already made. Deletion runs the other way round: registry entry first, then chunks, then file.

One deliberate reading of spec 003: an image-heavy PDF whose pages already carry a text layer (a scan
that went through OCR at the council, as most portal scans have) is ingested from that text layer with
``contains_drawings: true`` instead of being skipped. Only a document with nothing to read without OCR
is ``skipped`` as ``image_based``; the spec's purpose for the rule is not to waste OCR on drawings.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import Any, Literal

from pydantic import BaseModel

from lib.documents.chunks import document_chunk_id, document_chunk_metadata
from lib.documents.classification import DOCUMENT_TYPES, classify_document
from lib.documents.registry import (
    DocumentRecord,
    check_application_ref,
    make_document_id,
    sanitize_ref,
)
from lib.errors import (
    DocumentIdConflictError,
    DocumentNotFoundError,
    FileNotFoundInStoreError,
    InvalidArgumentError,
    NoChunksError,
    NoContentError,
    PathNotAllowedError,
    UnsupportedFileTypeError,
)
from lib.kb import KnowledgeBase
from lib.models import ExtractedDocument
from lib.paths import resolve_allowed
from lib.policies.lifecycle import read_allowed_file
from lib.policies.search import MAX_QUERY_CHARS, merge_chunk_texts
from lib.stores.chroma import relevance
from lib.stores.objects import document_file_key, sha256_bytes
from lib.text.chunking import chunk_pages
from lib.text.extraction import MIN_TEXT_LAYER_CHARS, SUPPORTED_EXTENSIONS, extract_document, image_ratios

logger = logging.getLogger(__name__)

DEFAULT_MAX_RESULTS = 10
MAX_DOCUMENT_ID_CHARS = 200
ALREADY_INGESTED_MESSAGE = "Document has already been ingested with the same content"
_CONTENT_TYPES = {".pdf": "application/pdf", ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
                  ".tiff": "image/tiff", ".tif": "image/tiff", ".bmp": "image/bmp"}  # fmt: skip


# --- results (the spec 003 tool outputs) --------------------------------------------------------------


class IngestSuccess(BaseModel):
    status: Literal["success"] = "success"
    document_id: str
    chunks_created: int
    extraction_method: str
    contains_drawings: bool
    total_chars: int
    total_words: int
    document_type: str


class AlreadyIngested(BaseModel):
    status: Literal["already_ingested"] = "already_ingested"
    document_id: str
    message: str = ALREADY_INGESTED_MESSAGE


class SkippedDocument(BaseModel):
    status: Literal["skipped"] = "skipped"
    reason: Literal["image_based"] = "image_based"
    image_ratio: float
    total_pages: int


IngestResult = IngestSuccess | AlreadyIngested | SkippedDocument


class DocumentHit(BaseModel):
    chunk_id: str
    text: str
    relevance_score: float
    metadata: dict[str, Any]


class DocumentSearchResult(BaseModel):
    status: Literal["success"] = "success"
    query: str
    results_count: int
    results: list[DocumentHit]


class DocumentText(BaseModel):
    status: Literal["success"] = "success"
    document_id: str
    application_ref: str
    file_path: str
    source_file: str
    document_type: str
    chunk_count: int
    text: str


class DocumentSummary(BaseModel):
    document_id: str
    file_path: str
    source_file: str
    document_type: str
    chunk_count: int
    ingested_at: str
    extraction_method: str
    contains_drawings: bool


class DocumentList(BaseModel):
    status: Literal["success"] = "success"
    application_ref: str
    document_count: int
    documents: list[DocumentSummary]


class DeletedDocument(BaseModel):
    document_id: str
    application_ref: str
    chunks_removed: int
    file_removed: bool


# --- validation ---------------------------------------------------------------------------------------


def check_document_type(document_type: str) -> str:
    if document_type not in DOCUMENT_TYPES:
        raise InvalidArgumentError(f"document_type must be one of {', '.join(DOCUMENT_TYPES)}, got {document_type!r}")
    return document_type


def check_document_id(document_id: str) -> str:
    if not isinstance(document_id, str) or not document_id.strip() or len(document_id) > MAX_DOCUMENT_ID_CHARS:
        raise InvalidArgumentError("document_id must be an id such as '25_01178_REM_a1b2c3'")
    return document_id.strip()


def _check_extension(file_name: str) -> str:
    suffix = PurePath(file_name).suffix.lower()
    if suffix not in SUPPORTED_EXTENSIONS:
        raise UnsupportedFileTypeError(
            f"Unsupported file type {suffix or '(no extension)'!r}: expected one of {', '.join(SUPPORTED_EXTENSIONS)}"
        )
    return suffix


# --- ingestion ----------------------------------------------------------------------------------------


def list_application_files(kb: KnowledgeBase, folder: str | Path) -> list[Path]:
    """The files directly in ``folder`` (a folder inside ``ALLOWED_FILE_ROOTS``), by name; hidden files left out.

    Every file is listed whatever its type, so an application's ``.docx`` shows up as
    ``unsupported_file_type`` in an outcome table instead of silently missing; each one is still checked
    against the roots when it is read (a symlink out of the folder is refused then).
    """
    roots = kb.settings.allowed_file_roots
    if not roots:
        raise PathNotAllowedError("Reading files from disk is disabled: set ALLOWED_FILE_ROOTS")
    real = Path(str(folder)).expanduser().resolve()
    if not any(real == root or real.is_relative_to(root) for root in roots):
        raise PathNotAllowedError("folder is outside the allowed file roots")
    if not real.is_dir():
        raise FileNotFoundInStoreError(f"No folder at {str(folder)!r} inside the allowed roots")
    return sorted(
        (entry for entry in real.iterdir() if not entry.name.startswith(".") and entry.is_file()),
        key=lambda entry: entry.name,
    )


def ingest_document(
    kb: KnowledgeBase, file_path: str | Path, application_ref: str, document_type: str | None = None
) -> IngestResult:
    """Ingest one file of an application (spec 003 FR-001). Failures raise typed ``KBError``s."""
    ref = check_application_ref(application_ref)
    if document_type is not None:
        check_document_type(document_type)
    resolve_allowed(file_path, kb.settings.allowed_file_roots)  # the path rule first, before anything else is said
    file_name = PurePath(str(file_path)).name
    _check_extension(file_name)
    data = read_allowed_file(kb, file_path)
    return ingest_document_bytes(kb, data, file_name=file_name, application_ref=ref, document_type=document_type)


def ingest_document_bytes(
    kb: KnowledgeBase, data: bytes, *, file_name: str, application_ref: str, document_type: str | None = None
) -> IngestResult:
    """Ingest a file already read (the path rule is the caller's business); see the module docstring."""
    ref = check_application_ref(application_ref)
    if document_type is not None:
        check_document_type(document_type)
    suffix = _check_extension(file_name)
    sha = sha256_bytes(data)
    document_id = make_document_id(ref, sha)
    registry = kb.documents.registry

    existing = registry.get(document_id)
    if existing is not None:
        return _already_ingested(existing, ref, sha)
    ratios = _image_ratios(data, file_name)
    image_ratio = sum(ratios) / len(ratios)
    image_heavy = suffix == ".pdf" and image_ratio > kb.settings.image_ratio_threshold

    with registry.claim(document_id):
        existing = registry.get(document_id)  # the worker we waited for may have finished it
        if existing is not None:
            return _already_ingested(existing, ref, sha)
        document = _extract(kb, data, file_name, image_heavy=image_heavy)
        if document is None:
            logger.info(
                "documents.skipped application_ref=%s document_id=%s reason=image_based image_ratio=%.3f pages=%d",
                ref, document_id, image_ratio, len(ratios),
            )  # fmt: skip
            return SkippedDocument(image_ratio=round(image_ratio, 3), total_pages=len(ratios))
        return _store(kb, data, document, file_name=file_name, suffix=suffix, ref=ref, sha=sha,
                      document_id=document_id, document_type=document_type)  # fmt: skip


def _already_ingested(record: DocumentRecord, application_ref: str, sha: str) -> AlreadyIngested:
    if record.file_hash != sha or record.application_ref != application_ref:
        raise DocumentIdConflictError(
            f"Document id {record.document_id} already belongs to another file or application reference "
            f"({record.application_ref!r}); rename the reference or remove that document first"
        )
    logger.info("documents.already_ingested application_ref=%s document_id=%s", application_ref, record.document_id)
    return AlreadyIngested(document_id=record.document_id)


def _image_ratios(data: bytes, file_name: str) -> list[float]:
    """Per-page image cover; refuses empty, encrypted and unreadable files before any work is done."""
    try:
        return image_ratios(data)
    except UnsupportedFileTypeError:
        # The bytes are of no known type, but the name says PDF or image: extraction words that error
        # ("not a readable PDF") from the name, without reading further.
        extract_document(data, file_name=file_name, enable_ocr=False)
        raise


def _extract(kb: KnowledgeBase, data: bytes, file_name: str, *, image_heavy: bool) -> ExtractedDocument | None:
    """The document's pages, or None when it is image-based with nothing readable without OCR."""
    settings = kb.settings
    if not image_heavy:
        return extract_document(
            data, file_name=file_name, enable_ocr=settings.enable_ocr, ocr_workers=settings.ocr_workers,
            dpi=settings.ocr_dpi,
        )  # fmt: skip
    try:
        document = extract_document(data, file_name=file_name, enable_ocr=False)
    except NoContentError:
        return None
    readable = [p for p in document.pages if sum(not ch.isspace() for ch in p.text) >= MIN_TEXT_LAYER_CHARS]
    return document if readable else None


def _store(
    kb: KnowledgeBase,
    data: bytes,
    document: ExtractedDocument,
    *,
    file_name: str,
    suffix: str,
    ref: str,
    sha: str,
    document_id: str,
    document_type: str | None,
) -> IngestResult:
    started = time.perf_counter()
    stores = kb.documents
    chunks = chunk_pages(document.pages)
    if not chunks:
        raise NoChunksError("No text chunks could be made from the document")
    full_text = "\n\n".join(page.text for page in document.pages if page.text)
    classification = classify_document(file_name, full_text)
    doc_type = document_type or classification.document_type
    contains_drawings = any(page.image_ratio > kb.settings.image_ratio_threshold for page in document.pages)
    embeddings = kb.embedder.embed_batch([chunk.text for chunk in chunks])

    ids = [document_chunk_id(document_id, chunk.page_numbers[0], chunk.chunk_index) for chunk in chunks]
    metadatas = [
        document_chunk_metadata(
            chunk, application_ref=ref, document_id=document_id, source_file=file_name, document_type=doc_type,
            total_chunks=len(chunks), extraction_method=document.method,
        )
        for chunk in chunks
    ]  # fmt: skip
    key = document_file_key(sanitize_ref(ref), sha, suffix)
    record = DocumentRecord(
        document_id=document_id,
        application_ref=ref,
        file_path=key,
        source_file=file_name,
        file_hash=sha,
        file_size_bytes=len(data),
        document_type=doc_type,
        chunk_count=len(chunks),
        page_count=document.page_count,
        total_chars=document.total_chars,
        total_words=sum(len(page.text.split()) for page in document.pages),
        extraction_method=document.method,
        contains_drawings=contains_drawings,
    )
    try:
        kb.objects.put_bytes(key, data, content_type=_CONTENT_TYPES[suffix])
        stores.chunks.upsert(ids, [chunk.text for chunk in chunks], embeddings, metadatas)
        registered = stores.registry.register(record)
    except BaseException:
        _undo(kb, document_id, ids, key)
        raise
    if not registered:  # our claim lapsed and another worker registered the same content: same ids, same key
        return _already_ingested(stores.registry.get(document_id) or record, ref, sha)
    logger.info(
        "documents.ingested application_ref=%s document_id=%s document_type=%s classified_by=%s chunks=%d pages=%d "
        "ocr_pages=%d method=%s contains_drawings=%s store_seconds=%.2f",
        ref, document_id, doc_type, "argument" if document_type else classification.method, len(chunks),
        document.page_count, sum(page.method == "ocr" for page in document.pages), document.method,
        contains_drawings, time.perf_counter() - started,
    )  # fmt: skip
    return IngestSuccess(
        document_id=document_id,
        chunks_created=len(chunks),
        extraction_method=document.method,
        contains_drawings=contains_drawings,
        total_chars=record.total_chars,
        total_words=record.total_words,
        document_type=doc_type,
    )


def _undo(kb: KnowledgeBase, document_id: str, ids: Sequence[str], key: str) -> None:
    """Remove what a failed ingestion wrote, unless another worker registered the same document meanwhile."""
    try:
        if kb.documents.registry.get(document_id) is not None:
            return
        kb.documents.chunks.delete_ids(ids)
        kb.objects.delete(key)
        logger.warning("documents.ingest_undone document_id=%s chunks=%d", document_id, len(ids))
    except Exception:  # the audit finds and removes whatever is left
        logger.exception("documents.undo_failed document_id=%s", document_id)


# --- reads --------------------------------------------------------------------------------------------


def search_application_docs(
    kb: KnowledgeBase,
    query: str,
    application_ref: str | None = None,
    document_types: Sequence[str] | None = None,
    max_results: int = DEFAULT_MAX_RESULTS,
) -> DocumentSearchResult:
    """Semantic search over application chunks, filtered by application and/or types (spec 003 FR-002)."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidArgumentError("query must be a non-empty string")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidArgumentError(f"query is longer than {MAX_QUERY_CHARS} characters")
    maximum = kb.settings.max_results
    if isinstance(max_results, bool) or not isinstance(max_results, int) or not 1 <= max_results <= maximum:
        raise InvalidArgumentError(f"max_results must be an integer from 1 to {maximum}, got {max_results!r}")
    filters: list[dict[str, Any]] = []
    if application_ref is not None:
        filters.append({"application_ref": check_application_ref(application_ref)})
    if document_types:
        types = list(dict.fromkeys(check_document_type(t) for t in document_types))
        filters.append({"document_type": {"$in": types}})
    where = filters[0] if len(filters) == 1 else ({"$and": filters} if filters else None)

    hits = kb.documents.chunks.query(kb.embedder.embed_queries([query])[0].tolist(), max_results, where)
    owners = [str(hit.metadata.get("document_id", "")) for hit in hits]
    visible = kb.documents.registry.registered(owners)
    if not all(visible):
        logger.warning("documents.unregistered_chunks_hidden count=%d", visible.count(False))
    results = [
        DocumentHit(
            chunk_id=hit.id,
            text=hit.text,
            relevance_score=round(relevance(hit.distance or 0.0), 4),
            metadata=hit.metadata,
        )
        for hit, shown in zip(hits, visible, strict=True)
        if shown
    ]
    results.sort(key=lambda hit: -hit.relevance_score)
    return DocumentSearchResult(query=query, results_count=len(results), results=results)


def _record(kb: KnowledgeBase, document_id: str) -> DocumentRecord:
    record = kb.documents.registry.get(check_document_id(document_id))
    if record is None:
        raise DocumentNotFoundError(f"Document not found: {document_id}")
    return record


def get_document_text(kb: KnowledgeBase, document_id: str) -> DocumentText:
    """The document's text from its chunks in ``chunk_index`` order, overlaps removed (spec 003 FR-003)."""
    record = _record(kb, document_id)
    chunks = kb.documents.chunks.document_chunks(record.document_id)
    if not chunks:
        raise NoChunksError(f"Document {record.document_id} has no stored chunks")
    return DocumentText(
        document_id=record.document_id,
        application_ref=record.application_ref,
        file_path=record.file_path,
        source_file=record.source_file,
        document_type=record.document_type,
        chunk_count=len(chunks),
        text=merge_chunk_texts([chunk.text for chunk in chunks]),
    )


def list_ingested_documents(kb: KnowledgeBase, application_ref: str) -> DocumentList:
    """Every document of one application, oldest first; an empty list when there are none (FR-004)."""
    ref = check_application_ref(application_ref)
    records = kb.documents.registry.list_application(ref)
    documents = [
        DocumentSummary(
            document_id=r.document_id,
            file_path=r.file_path,
            source_file=r.source_file,
            document_type=r.document_type,
            chunk_count=r.chunk_count,
            ingested_at=r.ingested_at.isoformat(),
            extraction_method=r.extraction_method,
            contains_drawings=r.contains_drawings,
        )
        for r in records
    ]
    return DocumentList(application_ref=ref, document_count=len(documents), documents=documents)


# --- deletion -----------------------------------------------------------------------------------------


def delete_document(kb: KnowledgeBase, document_id: str) -> DeletedDocument:
    """Remove a document everywhere: registry entry (so searches stop seeing it), chunks, original file."""
    record = _record(kb, document_id)
    if not kb.documents.registry.remove(record):
        raise DocumentNotFoundError(f"Document not found: {document_id}")
    chunks_removed = kb.documents.chunks.delete_document(record.document_id)
    file_removed = kb.objects.delete(record.file_path)
    logger.info(
        "documents.deleted application_ref=%s document_id=%s chunks=%d file_removed=%s",
        record.application_ref, record.document_id, chunks_removed, file_removed,
    )  # fmt: skip
    return DeletedDocument(
        document_id=record.document_id,
        application_ref=record.application_ref,
        chunks_removed=chunks_removed,
        file_removed=file_removed,
    )
