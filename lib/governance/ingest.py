"""Ingesting a folder of governance documents, incrementally by content hash.

For every file under the folder (``.md``, ``.markdown``, ``.rst``, ``.txt``; hidden files and folders left out):

- **unchanged** (same path, same SHA-256 as registered): skipped, nothing read beyond the bytes;
- **added** or **changed**: parsed, cut at its headings and then into 800/200 chunks, embedded, written as a new
  generation of chunks; then the registry record flips to that generation (one transaction), and only then
  are the old generation's chunks deleted. Until the flip every search sees the old chunks;
- **removed** (registered from a file under this folder that is gone): unregistered, then its chunks deleted.

One corpus ingestion writes at a time per collection: each holds the registry's ``ingest_lock`` (a second
waits up to ``INGEST_LOCK_WAIT_S``, then fails ``ingestion_in_progress``), which is also what tells the
consistency audit (``lib.governance.audit``) that a generation not registered yet may be about to be.

A file that cannot be read or parsed, or whose id another file already holds, is reported in ``failed``
with the reason and changes nothing (a changed file that now fails keeps its previous version searchable);
the other files go on. Files are embedded in batches across documents, so small files share a model call.
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass
from pathlib import Path

from lib.errors import IngestionInProgressError, InvalidArgumentError, KBError
from lib.governance.keys import governance_chunk_id, search_text
from lib.governance.models import CorpusIngestReport, FailedFile, GovernanceRecord, normalise_type
from lib.governance.parsing import ParsedDocument, UnreadableDocumentError, parse_document
from lib.governance.stores import GovernanceStores
from lib.observability.metrics import record_ingestion
from lib.text.chunking import make_splitter

logger = logging.getLogger(__name__)

SUFFIXES = frozenset({".md", ".markdown", ".rst", ".txt"})
INGEST_LOCK_WAIT_S = 600.0
"""How long an ingestion waits for another one of the same collection to finish."""
BATCH_CHUNKS = 256
"""Chunks embedded per model call (several small documents share one)."""


@dataclass
class _Pending:
    file: Path
    relative: str
    content_hash: str
    document: ParsedDocument
    texts: list[str]
    metadatas: list[dict[str, str | int]]
    previous: GovernanceRecord | None


def corpus_files(root: Path) -> list[Path]:
    """The governance files under ``root`` (or ``root`` itself when it is a file), in path order."""
    if root.is_file():
        return [root]
    return sorted(
        path
        for path in root.rglob("*")
        if path.suffix.lower() in SUFFIXES
        and path.is_file()
        and not any(part.startswith(".") for part in path.relative_to(root).parts)
    )


def ingest_governance_corpus_files(stores: GovernanceStores, path: str | Path) -> CorpusIngestReport:
    """Bring the index in line with the folder ``path``; see the module docstring for what happens per file."""
    root = Path(path).expanduser().resolve()
    if not root.exists():
        raise InvalidArgumentError(f"No such file or folder: {path}")
    lock = stores.registry.ingest_lock()
    if not lock.acquire(wait_seconds=INGEST_LOCK_WAIT_S):
        raise IngestionInProgressError(
            f"Another governance ingestion has been running for over {INGEST_LOCK_WAIT_S:.0f} s; try again when it ends"
        )
    try:
        return _ingest_under_lock(stores, root)
    finally:
        lock.release()


def _ingest_under_lock(stores: GovernanceStores, root: Path) -> CorpusIngestReport:
    started = time.perf_counter()
    base = root.parent if root.is_file() else root
    records = stores.registry.records()
    by_source = {record.source: record for record in records.values()}
    owners = {doc_id: record.source for doc_id, record in records.items()}
    report = CorpusIngestReport()
    batch: list[_Pending] = []
    files = corpus_files(root)
    for file in files:
        relative = file.relative_to(base).as_posix()
        try:
            pending = _prepare(file, relative, by_source.get(str(file)), owners)
        except (OSError, UnicodeDecodeError, UnreadableDocumentError, ValueError, KBError) as exc:
            report.failed.append(FailedFile(file=relative, error=f"{type(exc).__name__}: {exc}"))
            logger.warning("governance.ingest_failed file=%s error=%s", relative, exc)
            continue
        if pending is None:
            report.unchanged.append(relative)
            continue
        owners[pending.document.id] = str(file)
        batch.append(pending)
        if sum(len(p.texts) for p in batch) >= BATCH_CHUNKS:
            _write(stores, batch, report)
            batch = []
    _write(stores, batch, report)
    present = {str(file) for file in files}
    for record in records.values():
        source = Path(record.source)
        if (source == root or root in source.parents) and record.source not in present and not source.exists():
            stores.registry.remove(record.id)
            stores.chunks.delete_document(record.id)
            report.removed.append(record.file_path)
    report.seconds = round(time.perf_counter() - started, 3)
    logger.info(
        "governance.ingested root=%s added=%d changed=%d unchanged=%d removed=%d failed=%d chunks=%d seconds=%.1f",
        root,
        len(report.added),
        len(report.changed),
        len(report.unchanged),
        len(report.removed),
        len(report.failed),
        report.chunks_written,
        report.seconds,
    )
    record_ingestion("governance", report.chunks_written, {"total": report.seconds})
    return report


def _prepare(file: Path, relative: str, previous: GovernanceRecord | None, owners: dict[str, str]) -> _Pending | None:
    raw = file.read_bytes()
    content_hash = hashlib.sha256(raw).hexdigest()
    if previous is not None and previous.content_hash == content_hash:
        return None
    document = parse_document(file, raw.decode("utf-8"))
    owner = owners.get(document.id)
    if owner is not None and owner != str(file) and Path(owner).exists():
        raise UnreadableDocumentError(f"id {document.id} already belongs to {owner}")
    splitter = make_splitter()
    texts: list[str] = []
    metadatas: list[dict[str, str | int]] = []
    for section in document.sections:
        heading = section.heading or document.title
        for piece in splitter.split_text(section.text):
            if piece.strip():
                texts.append(piece)
                metadatas.append(
                    {"doc_id": document.id, "title": document.title, "heading": heading, "file_path": relative}
                )
    if not texts:
        raise UnreadableDocumentError("the document has no text to index")
    return _Pending(file, relative, content_hash, document, texts, metadatas, previous)


def _write(stores: GovernanceStores, batch: list[_Pending], report: CorpusIngestReport) -> None:
    if not batch:
        return
    vectors = stores.embedder.embed_batch(
        [search_text(m, t) for p in batch for t, m in zip(p.texts, p.metadatas, strict=True)]
    )
    offset = 0
    for pending in batch:
        count = len(pending.texts)
        doc = pending.document
        generation = stores.registry.allocate_generation()
        metadatas = [
            {
                **meta,
                "doc_gen": f"{doc.id}@{generation}",
                "generation": generation,
                "chunk_index": index,
                "type_key": normalise_type(doc.type),
            }
            for index, meta in enumerate(pending.metadatas)
        ]
        ids = [governance_chunk_id(doc.id, generation, index) for index in range(count)]
        stores.chunks.upsert(ids, pending.texts, vectors[offset : offset + count], metadatas)
        offset += count
        stores.registry.put(_record(pending, generation, count), doc.text)
        previous = pending.previous
        if previous is not None:
            if previous.id != doc.id:
                stores.registry.remove(previous.id)
                stores.chunks.delete_document(previous.id)
            else:
                stores.chunks.delete_generation(previous.id, previous.generation)
            report.changed.append(pending.relative)
        else:
            report.added.append(pending.relative)
        report.chunks_written += count


def _record(pending: _Pending, generation: int, chunk_count: int) -> GovernanceRecord:
    doc = pending.document
    return GovernanceRecord(
        id=doc.id,
        title=doc.title,
        type=doc.type,
        type_key=normalise_type(doc.type),
        status=doc.status,
        file_path=pending.relative,
        source=str(pending.file),
        content_hash=pending.content_hash,
        generation=generation,
        chunk_count=chunk_count,
        created=None if doc.created is None else doc.created.isoformat(),
        supported_until=None if doc.supported_until is None else doc.supported_until.isoformat(),
        version=doc.version,
        relates_to=doc.relates_to,
        superseded_by=doc.superseded_by,
        replaces=doc.replaces,
    )
