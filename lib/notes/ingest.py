"""Into the kb: a note's text or a stored file becomes chunks, vectors and a registered document.

Order, so that nothing is ever half there: a document id is allocated (INCR), its chunks are embedded and
written under generation 1, and only then is the document registered (one MULTI). If anything fails
before the registration, the chunks written are removed and the id is simply never used; a search never
meets a document without chunks, nor chunks without a document.

A note is rewritten (``update_note``) the same way beside its live text: the new generation's chunks are
written, the registry flips the document to them in one script, and the old generation is removed
afterwards. Searches read the live generation from the registry, so during the rewrite they find the old
text and from the flip on only the new one. Rewrites of one note are serialised by a lease lock.

Files: PDF (the text layer, OCR for scanned pages: ``lib.text.extraction``), Markdown and plain text, the
type decided by content (``lib.text.filetypes``). Chunking is ``lib.text.chunking``'s (800/200).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import PurePath

from lib.errors import IngestionInProgressError, InvalidArgumentError, NoChunksError, NotANoteError
from lib.models import PageText
from lib.notes.models import NoteDocument, utc_now
from lib.notes.registry import check_source_path, check_tags
from lib.notes.stores import NoteStores
from lib.observability.metrics import record_ingestion
from lib.stores.locks import LeaseLock
from lib.stores.objects.keys import sha256_bytes
from lib.text.chunking import chunk_pages
from lib.text.extraction import extract_document
from lib.text.filetypes import FileKind, FileType, detect_file_type

logger = logging.getLogger(__name__)

MAX_NOTE_CHARS = 1_000_000
MAX_TITLE_CHARS = 500
ACCEPTED_FILES = frozenset({FileKind.PDF, FileKind.TEXT})
UPDATE_WAIT_SECONDS = 120.0
Pieces = list[tuple[str, int | None]]
"""Chunk texts in order, each with the first page it touches (PDFs only)."""


def check_note_text(text: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise InvalidArgumentError("text must be a non-empty string")
    if len(text) > MAX_NOTE_CHARS:
        raise InvalidArgumentError(f"text is longer than {MAX_NOTE_CHARS} characters")
    return text


def check_title(title: str | None) -> str | None:
    if title is None:
        return None
    if len(title) > MAX_TITLE_CHARS or not title.strip():
        raise InvalidArgumentError(f"title must be 1 to {MAX_TITLE_CHARS} characters")
    return title.strip()


def file_type(data: bytes, filename: str) -> FileType:
    """What an upload is (PDF, or Markdown/plain text), by content; ``unsupported_file_type`` otherwise."""
    return detect_file_type(data, ACCEPTED_FILES, file_name=filename)


def file_object_key(data: bytes, detected: FileType, filename: str) -> str:
    """``kb/{sha256}{ext}``: content-addressed, so the same file uploaded twice is stored once."""
    suffix = PurePath(filename).suffix.lower()
    extension = suffix if detected.kind == FileKind.TEXT and suffix in {".md", ".markdown", ".txt"} else ""
    return f"kb/{sha256_bytes(data)}{extension or detected.extension}"


def text_pieces(text: str) -> Pieces:
    return [(chunk.text, None) for chunk in chunk_pages([PageText(page_number=1, text=text, method="text_layer")])]


def file_pieces(stores: NoteStores, data: bytes, filename: str) -> tuple[FileType, Pieces]:
    detected = file_type(data, filename)
    if detected.kind == FileKind.TEXT:
        return detected, text_pieces(data.decode("utf-8"))
    settings = stores.settings
    extracted = extract_document(
        data,
        file_name=filename,
        enable_ocr=settings.extraction.enable_ocr,
        ocr_workers=settings.extraction.ocr_workers,
        dpi=settings.extraction.ocr_dpi,
    )
    return detected, [(chunk.text, chunk.page_number) for chunk in chunk_pages(extracted.pages)]


def ingest_note(
    stores: NoteStores,
    text: str,
    tags: Sequence[str] = (),
    *,
    title: str | None = None,
    source_path: str | None = None,
) -> NoteDocument:
    """Register a note; the document as registered."""
    pieces = text_pieces(check_note_text(text))
    document = NoteDocument(
        document_id=0,
        kind="note",
        title=check_title(title),
        source_path=check_source_path(source_path),
        tags=check_tags(tags),
    )
    return _register(stores, document, pieces)


def ingest_file(
    stores: NoteStores,
    object_key: str,
    filename: str,
    tags: Sequence[str] = (),
    *,
    title: str | None = None,
    source_path: str | None = None,
) -> NoteDocument:
    """Register a file already kept in the object store under ``object_key``; the document as registered."""
    data = stores.objects.get_bytes(object_key)
    detected, pieces = file_pieces(stores, data, filename)
    document = NoteDocument(
        document_id=0,
        kind="file",
        title=check_title(title) or filename,
        source_path=check_source_path(source_path),
        filename=filename,
        content_type=detected.content_type,
        object_key=object_key,
        tags=check_tags(tags),
    )
    return _register(stores, document, pieces)


def _register(stores: NoteStores, document: NoteDocument, pieces: Pieces) -> NoteDocument:
    if not pieces:
        raise NoChunksError("The document has no text to index")
    document_id = stores.registry.allocate_id()
    generation = stores.registry.next_generation(document_id)
    now = utc_now()
    fields = {"document_id": document_id, "generation": generation, "chunk_count": len(pieces)}
    document = document.model_copy(update={**fields, "created_at": now, "updated_at": now})
    _write_generation(stores, document_id, generation, pieces, lambda: stores.registry.register(document))
    logger.info("notes.ingested document_id=%d kind=%s chunks=%d", document_id, document.kind, len(pieces))
    record_ingestion("notes", len(pieces), {})
    return document


def update_note(
    stores: NoteStores, document_id: int, text: str, *, before_flip: Callable[[], None] | None = None
) -> NoteDocument:
    """Replace a note's text in place: new chunks under a new generation, the registry flipped to them,
    the old ones removed. ``before_flip`` runs once the new chunks are stored and before the flip (the tests
    search there). ``not_a_note`` for a file, ``document_not_found`` for an unknown id."""
    _require_note(stores, document_id)
    pieces = text_pieces(check_note_text(text))
    lock = LeaseLock(stores.redis, f"kbn:update:{document_id}")
    if not lock.acquire(wait_seconds=UPDATE_WAIT_SECONDS):
        raise IngestionInProgressError(f"Note {document_id} is still being updated by another request")
    try:
        current = _require_note(stores, document_id)
        generation = stores.registry.next_generation(document_id)

        def flip() -> None:
            if before_flip is not None:
                before_flip()
            if not stores.registry.flip(document_id, current.generation, generation, len(pieces), utc_now()):
                raise IngestionInProgressError(f"Note {document_id} was changed by another writer meanwhile")

        _write_generation(stores, document_id, generation, pieces, flip)
        removed = stores.chunks.delete_generation(document_id, current.generation)
    finally:
        lock.release()
    logger.info(
        "notes.updated document_id=%d generation=%d chunks=%d old_chunks_removed=%d",
        document_id,
        generation,
        len(pieces),
        removed,
    )
    return stores.registry.require(document_id)


def _require_note(stores: NoteStores, document_id: int) -> NoteDocument:
    document = stores.registry.require(document_id)
    if document.kind != "note":
        raise NotANoteError(f"Document {document_id} is a {document.kind}; only notes can be updated")
    return document


def _write_generation(
    stores: NoteStores, document_id: int, generation: int, pieces: Pieces, commit: Callable[[], None]
) -> None:
    """Embed and store one generation of chunks, then ``commit`` (register or flip); on any failure the
    generation's chunks are removed again and the error raised."""
    chunks = stores.chunks
    texts = [text for text, _ in pieces]
    try:
        embeddings = stores.embedder.embed_batch(texts)
        chunks.write(document_id, generation, texts, [page for _, page in pieces], embeddings)
        commit()
    except BaseException:
        chunks.delete_generation(document_id, generation)
        raise
