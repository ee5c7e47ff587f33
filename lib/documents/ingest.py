"""Ingesting planning-application documents (spec 003 FR-001): the one way a document gets in.

The MCP tool, the Prefect flow, the audit's rebuild and the CLI all come here; nothing else writes the
application-document stores. An ingestion:

1. reads ``file_path`` only inside ``ALLOWED_FILE_ROOTS`` (after resolving symlinks and ``..``), and
   decides the type by content (``lib.text.filetypes``): a PDF or an image (spec 003 FR-005) whose name,
   if it has a known extension, agrees; anything else is ``unsupported_file_type`` and nothing is stored;
2. hashes the bytes: ``document_id`` is ``{sanitized_ref}_{sha256[:6]}``; a registered id answers
   ``already_ingested`` at once;
3. measures how much of each PDF page is covered by images, before any extraction: a document above
   ``IMAGE_RATIO_THRESHOLD`` on average is image-based (drawings, renders, raw scans) and is not OCR'd;
4. takes the document's claim in Redis, so a concurrent ingestion of the same file waits and then
   answers ``already_ingested`` instead of extracting and embedding a second time;
5. extracts (text layer, OCR of text-less pages on every core), chunks, classifies and embeds in memory;
6. writes the original to the object store, upserts the chunks, and registers the document last.

``progress(phase, percent)`` (``lib.progress``) is told each phase as an ingestion of a policy is; one that
raises stops the ingestion there, before any write or undoing them.

The registry decides what exists: search hides chunks of unregistered documents, so a crash between
step 6's writes leaves only orphans (the audit removes them), never a half document in results, and a
failure undoes the writes already made.

One deliberate reading of spec 003: an image-heavy PDF whose pages already carry a text layer (a scan
that went through OCR at the council, as most portal scans have) is ingested from that text layer with
``contains_drawings: true`` instead of being skipped. Only a document with nothing to read without OCR
is ``skipped`` as ``image_based``; the spec's purpose for the rule is not to waste OCR on drawings.

The entry points take the ``DocumentStores``: settings, registry, chunks, object store and embedder. The
steps below them take only what they use.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path, PurePath

from lib.config import Settings
from lib.documents.chunks import document_chunk_id, document_chunk_metadata
from lib.documents.classification import check_document_type, classify_document
from lib.documents.models import AlreadyIngested, IngestResult, IngestSuccess, SkippedDocument
from lib.documents.registry import DocumentRecord, check_application_ref, make_document_id, sanitize_ref
from lib.documents.stores import DocumentStores
from lib.errors import (
    DocumentIdConflictError,
    FileNotFoundInStoreError,
    NoChunksError,
    NoContentError,
    PathNotAllowedError,
)
from lib.models import ExtractedDocument
from lib.observability.metrics import record_ingestion
from lib.paths import read_allowed_file, resolve_allowed
from lib.progress import Progress, embed_with_progress, no_progress
from lib.stores.objects import ObjectStore, document_file_key, sha256_bytes
from lib.text.chunking import chunk_pages
from lib.text.extraction import MIN_TEXT_LAYER_CHARS, extract_document, image_ratios
from lib.text.filetypes import FileKind, FileType, detect_file_type
from lib.text.layout_rows import read_printed

logger = logging.getLogger(__name__)

DOCUMENT_KINDS = frozenset({FileKind.PDF, FileKind.IMAGE})
"""What an application document may be (spec 003 FR-005: PDFs, and images OCR'd whole)."""


def list_application_files(roots: Sequence[Path], folder: str | Path) -> list[Path]:
    """The files directly in ``folder`` (a folder inside ``roots``, the ``ALLOWED_FILE_ROOTS``), by name; hidden
    files left out.

    Every file is listed whatever its type, so an application's ``.docx`` shows up as
    ``unsupported_file_type`` in an outcome table instead of silently missing; each one is still checked
    against the roots when it is read (a symlink out of the folder is refused then).
    """
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
    stores: DocumentStores,
    file_path: str | Path,
    application_ref: str,
    document_type: str | None = None,
    progress: Progress | None = None,
) -> IngestResult:
    """Ingest one file of an application (spec 003 FR-001). Failures raise typed ``KBError``s."""
    ref = check_application_ref(application_ref)
    if document_type is not None:
        check_document_type(document_type)
    resolve_allowed(file_path, stores.settings.files.allowed_roots)  # the path rule first, before anything else is said
    report = progress or no_progress
    report("fetch", 0.0)
    data = read_allowed_file(stores.settings, file_path)
    name = PurePath(str(file_path)).name
    outcome = _ingest_bytes(stores, data, name, ref, document_type, str(file_path), report)
    report("done", 100.0)
    return outcome


def ingest_document_bytes(
    stores: DocumentStores,
    data: bytes,
    *,
    file_name: str,
    application_ref: str,
    document_type: str | None = None,
    file_path: str | None = None,
    progress: Progress | None = None,
) -> IngestResult:
    """Ingest a file already read (the path rule is the caller's business); see the module docstring.

    ``file_path`` is recorded as the path the document came from; without one (bytes that never had a
    path) the record's ``file_path`` is ``file_name``."""
    report = progress or no_progress
    report("fetch", 0.0)
    outcome = _ingest_bytes(stores, data, file_name, application_ref, document_type, file_path, report)
    report("done", 100.0)
    return outcome


def _ingest_bytes(
    stores: DocumentStores,
    data: bytes,
    file_name: str,
    application_ref: str,
    document_type: str | None,
    file_path: str | None,
    report: Progress,
) -> IngestResult:
    ref = check_application_ref(application_ref)
    if document_type is not None:
        check_document_type(document_type)
    file_type = detect_file_type(data, DOCUMENT_KINDS, file_name=file_name)
    sha = sha256_bytes(data)
    document_id = make_document_id(ref, sha)
    registry = stores.registry

    existing = registry.get(document_id)
    if existing is not None:
        return _already_ingested(existing, ref, sha)
    ratios = image_ratios(data)
    image_ratio = sum(ratios) / len(ratios)
    image_heavy = file_type.kind == FileKind.PDF and image_ratio > stores.settings.extraction.image_ratio_threshold

    with registry.claim(document_id):
        existing = registry.get(document_id)  # the worker we waited for may have finished it
        if existing is not None:
            return _already_ingested(existing, ref, sha)
        report("extract", 5.0)
        document = _extract(stores.settings, data, file_name, image_heavy=image_heavy)
        if document is None:
            logger.info(
                "documents.skipped application_ref=%s document_id=%s reason=image_based image_ratio=%.3f pages=%d",
                ref,
                document_id,
                image_ratio,
                len(ratios),
            )
            return SkippedDocument(image_ratio=round(image_ratio, 3), total_pages=len(ratios))
        return _store(
            stores,
            data,
            document,
            file_name=file_name,
            file_path=file_path or file_name,
            file_type=file_type,
            ref=ref,
            sha=sha,
            document_id=document_id,
            document_type=document_type,
            report=report,
        )


def _already_ingested(record: DocumentRecord, application_ref: str, sha: str) -> AlreadyIngested:
    if record.file_hash != sha or record.application_ref != application_ref:
        raise DocumentIdConflictError(
            f"Document id {record.document_id} already belongs to another file or application reference "
            f"({record.application_ref!r}); rename the reference or remove that document first"
        )
    logger.info("documents.already_ingested application_ref=%s document_id=%s", application_ref, record.document_id)
    return AlreadyIngested(document_id=record.document_id)


def _extract(settings: Settings, data: bytes, file_name: str, *, image_heavy: bool) -> ExtractedDocument | None:
    """The document's pages, or None when it is image-based with nothing readable without OCR."""
    if not image_heavy:
        return extract_document(
            data,
            file_name=file_name,
            enable_ocr=settings.extraction.enable_ocr,
            ocr_workers=settings.extraction.ocr_workers,
            dpi=settings.extraction.ocr_dpi,
        )
    try:
        document = extract_document(data, file_name=file_name, enable_ocr=False)
    except NoContentError:
        return None
    readable = [p for p in document.pages if sum(not ch.isspace() for ch in p.text) >= MIN_TEXT_LAYER_CHARS]
    return document if readable else None


def _store(
    stores: DocumentStores,
    data: bytes,
    document: ExtractedDocument,
    *,
    file_name: str,
    file_path: str,
    file_type: FileType,
    ref: str,
    sha: str,
    document_id: str,
    document_type: str | None,
    report: Progress,
) -> IngestResult:
    started = time.perf_counter()
    report("chunk", 30.0)
    chunks = chunk_pages(document.pages, printed=read_printed(document.pages))
    if not chunks:
        raise NoChunksError("No text chunks could be made from the document")
    full_text = "\n\n".join(page.text for page in document.pages if page.text)
    classification = classify_document(file_name, full_text)
    doc_type = document_type or classification.document_type
    threshold = stores.settings.extraction.image_ratio_threshold
    contains_drawings = any(page.image_ratio > threshold for page in document.pages)
    embeddings = embed_with_progress(stores.embedder, [chunk.text for chunk in chunks], report)

    ids = [document_chunk_id(document_id, chunk.page_numbers[0], chunk.chunk_index) for chunk in chunks]
    metadatas = [
        document_chunk_metadata(
            chunk,
            application_ref=ref,
            document_id=document_id,
            source_file=file_name,
            document_type=doc_type,
            total_chunks=len(chunks),
            extraction_method=document.method,
        )
        for chunk in chunks
    ]
    key = document_file_key(sanitize_ref(ref), sha, file_type.extension)
    record = DocumentRecord(
        document_id=document_id,
        application_ref=ref,
        file_path=file_path,
        object_key=key,
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
    report("store", 85.0)
    try:
        stores.objects.put_bytes(key, data, content_type=file_type.content_type)
        stores.chunks.upsert(ids, [chunk.text for chunk in chunks], embeddings, metadatas)
        registered = stores.registry.register(record)
    except BaseException:
        _undo(stores, stores.objects, document_id, ids, key)
        raise
    if not registered:  # our claim lapsed and another worker registered the same content: same ids, same key
        return _already_ingested(stores.registry.get(document_id) or record, ref, sha)
    logger.info(
        "documents.ingested application_ref=%s document_id=%s document_type=%s classified_by=%s chunks=%d pages=%d "
        "ocr_pages=%d method=%s contains_drawings=%s store_seconds=%.2f",
        ref,
        document_id,
        doc_type,
        "argument" if document_type else classification.method,
        len(chunks),
        document.page_count,
        sum(page.method == "ocr" for page in document.pages),
        document.method,
        contains_drawings,
        time.perf_counter() - started,
    )
    record_ingestion("documents", len(chunks), {"store": time.perf_counter() - started})
    return IngestSuccess(
        document_id=document_id,
        chunks_created=len(chunks),
        extraction_method=document.method,
        contains_drawings=contains_drawings,
        total_chars=record.total_chars,
        total_words=record.total_words,
        document_type=doc_type,
    )


def _undo(stores: DocumentStores, objects: ObjectStore, document_id: str, ids: Sequence[str], key: str) -> None:
    """Remove what a failed ingestion wrote, unless another worker registered the same document meanwhile."""
    try:
        if stores.registry.get(document_id) is not None:
            return
        stores.chunks.delete_ids(ids)
        objects.delete(key)
        logger.warning("documents.ingest_undone document_id=%s chunks=%d", document_id, len(ids))
    except Exception:  # the audit finds and removes whatever is left
        logger.exception("documents.undo_failed document_id=%s", document_id)
