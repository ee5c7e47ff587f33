"""The one ingestion pipeline: a registered revision and its stored file → chunks in Chroma.

Flows, MCP tools and the CLI all call ``ingest_revision``; nothing else extracts, chunks, embeds or
upserts policy text. The steps are ordered so that a crash at any point leaves a state the audit
detects and a re-run repairs:

1. read the original from the object store (content-addressed key in the registry), or, for a reindex
   with another file (``replacement``), store that file first under its own content-addressed key;
2. extract → sections → chunks → embeddings, all in memory;
3. upsert the chunks under deterministic ids (a re-run overwrites, never duplicates);
4. delete the revision's chunks that the new set no longer has (a reindex never has a window
   without chunks: new first, then old);
5. record page and chunk counts in the registry and settle the status; a replacement original becomes
   the revision's file (path and hash) in this same write, and the old one is deleted after it unless
   another revision uses it. Until then the registry and the chunks searches find are the old file's.

A permanent failure (unreadable, encrypted or empty PDF, missing file) of a first ingestion removes
the revision's chunks and marks it ``failed``; transient store errors propagate untouched so the
caller can retry them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from lib.errors import ExtractionFailedError, FileNotFoundInStoreError, NoChunksError, WorkCancelledError
from lib.models import Chunk
from lib.observability.metrics import record_ingestion
from lib.policies.chunks import PolicyVectorStore, chunk_id, chunk_metadata, section_metadata
from lib.policies.lifecycle import fail_revision, sync_policy_chunks
from lib.policies.models import IngestOutcome, Revision, RevisionStatus
from lib.policies.page_images import drop_renders
from lib.policies.registry import PolicyRegistry
from lib.policies.stores import PolicyStores
from lib.policies.xrefs import chunk_citations, citation_metadata
from lib.progress import Progress, embed_with_progress, no_progress
from lib.stores.objects import policy_file_key, sha256_bytes
from lib.text.chunking import chunk_sections
from lib.text.extraction import extract_document
from lib.text.section_report import report_reading
from lib.text.sections import read_sections

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Original:
    """A replacement original, stored under ``key`` before its chunks are made."""

    key: str
    sha256: str


@dataclass(frozen=True)
class StoredChunks:
    ids: list[str]
    chunks_removed: int
    revision: Revision


def store_chunks(
    registry: PolicyRegistry,
    vectors: PolicyVectorStore,
    source: str,
    revision_id: str,
    chunks: Sequence[Chunk],
    embeddings: Sequence[Sequence[float]],
    *,
    page_count: int,
    file_size_bytes: int,
    extraction_method: str,
    original: Original | None = None,
    reading: str = "",
) -> StoredChunks:
    """Steps 3-5: upsert, drop the revision's chunks the new set lacks, record counts, re-sync dates.

    Metadata is written from the registry as read now; if the registry changed the policy's dates
    meanwhile (or settling the status closed another revision), the final re-sync brings every
    chunk of the policy back in step.
    """
    policy = registry.get_policy(source)
    revision = registry.get_revision(source, revision_id)
    ids = [chunk_id(source, revision_id, c.section_ref, c.chunk_index) for c in chunks]
    previous = set(vectors.revision_chunk_ids(source, revision_id))
    cites = chunk_citations(chunks)
    metadatas = [
        chunk_metadata(c, policy, revision) | section_metadata(c) | citation_metadata(cites.get(c.section_ref))
        for c in chunks
    ]
    vectors.upsert(ids, [c.text for c in chunks], embeddings, metadatas)
    removed = vectors.delete_ids(sorted(previous - set(ids)))
    settled = registry.mark_ingested(
        source,
        revision_id,
        page_count=page_count,
        chunk_count=len(ids),
        file_size_bytes=file_size_bytes,
        extraction_method=extraction_method,
        file_path=original.key if original else None,
        file_sha256=original.sha256 if original else None,
        reading=reading,
    )
    sync_policy_chunks(registry, vectors, source)
    return StoredChunks(ids=ids, chunks_removed=removed, revision=settled)


def _store_replacement(stores: PolicyStores, source: str, revision_id: str, content: bytes) -> Original:
    sha = sha256_bytes(content)
    stored = stores.objects.put_bytes(
        policy_file_key(source, revision_id, sha), content, content_type="application/pdf"
    )
    return Original(key=stored.key, sha256=sha)


def _drop_unused_file(stores: PolicyStores, source: str, key: str) -> bool:
    """Delete an original no revision of ``source`` names any more (a replaced or abandoned file)."""
    if not key or any(r.file_path == key for r in stores.registry.list_revisions(source)):
        return False
    drop_renders(stores.objects, key)
    return stores.objects.delete(key)


def ingest_revision(
    stores: PolicyStores,
    source: str,
    revision_id: str,
    *,
    progress: Progress | None = None,
    replacement: bytes | None = None,
) -> IngestOutcome:
    """Ingest (or re-ingest) one revision from its stored file; return counts, pages and method.

    With ``replacement`` (the bytes of another PDF, already checked to be one) the revision is ingested
    from that file instead, which then replaces the stored original in the object store and the
    registry (``file_path``, ``file_sha256``) in the write that records the new chunks; if the run fails
    first, the stored original stays and the replacement is deleted. Callers serialise reindexes
    (``lib.policies.reindex``).

    Progress goes to the registry (``progress_phase``/``progress_percent`` on the revision, for status
    readers in other processes) and to ``progress`` if given.
    """
    if replacement is None:
        return _ingest(stores, source, revision_id, progress, None)
    previous = stores.registry.get_revision(source, revision_id).file_path
    original = _store_replacement(stores, source, revision_id, replacement)
    try:
        outcome = _ingest(stores, source, revision_id, progress, (original, replacement))
    except BaseException:
        _drop_unused_file(stores, source, original.key)
        raise
    if previous != original.key:
        _drop_unused_file(stores, source, previous)
    return outcome


def _ingest(
    stores: PolicyStores,
    source: str,
    revision_id: str,
    progress: Progress | None,
    replacement: tuple[Original, bytes] | None,
) -> IngestOutcome:
    """The steps, and what a cancellation (``progress`` raising ``WorkCancelledError`` before the store step's
    writes) leaves: a first ingestion ``failed`` (ingest it again to retry), a reindex as it was before."""
    first_time = stores.registry.get_revision(source, revision_id).status in (
        RevisionStatus.PROCESSING,
        RevisionStatus.FAILED,
    )
    try:
        return _ingest_steps(stores, source, revision_id, progress, replacement)
    except WorkCancelledError as exc:
        if first_time:
            fail_revision(stores.registry, stores.vectors, source, revision_id, f"{exc.error_type}: {exc.message}")
        else:
            stores.registry.set_progress(source, revision_id, "done", 100.0)
        logger.info("ingest.cancelled source=%s revision_id=%s first_time=%s", source, revision_id, first_time)
        raise


def _ingest_steps(
    stores: PolicyStores,
    source: str,
    revision_id: str,
    progress: Progress | None,
    replacement: tuple[Original, bytes] | None,
) -> IngestOutcome:

    def report(phase: str, percent: float) -> None:
        stores.registry.set_progress(source, revision_id, phase, percent)
        (progress or no_progress)(phase, percent)

    stores.registry.get_policy(source)
    revision = stores.registry.get_revision(source, revision_id)
    first_time = revision.status in (RevisionStatus.PROCESSING, RevisionStatus.FAILED)
    seconds: dict[str, float] = {}
    started = clock = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[stage] = round(now - clock, 3)
        clock = now

    original = replacement[0] if replacement else None
    try:
        report("fetch", 0.0)
        if replacement is not None:
            data = replacement[1]
        elif not revision.file_path:
            raise FileNotFoundInStoreError(f"Revision '{revision_id}' of '{source}' has no stored file")
        else:
            data = stores.objects.get_bytes(revision.file_path)
        lap("fetch")
        report("extract", 5.0)
        document = extract_document(
            data,
            file_name=PurePosixPath(original.key if original else revision.file_path).name,
            enable_ocr=stores.settings.extraction.enable_ocr,
            ocr_workers=stores.settings.extraction.ocr_workers,
            dpi=stores.settings.extraction.ocr_dpi,
        )
        lap("extract")
        report("chunk", 30.0)
        reading = read_sections(document)
        section_report = report_reading(reading)
        chunks = chunk_sections(reading.sections, printed=reading.printed)
        if not chunks:
            raise NoChunksError(f"No text chunks could be made from revision '{revision_id}' of '{source}'")
        lap("chunk")
    except (ExtractionFailedError, FileNotFoundInStoreError) as exc:
        if first_time:
            removed = fail_revision(
                stores.registry, stores.vectors, source, revision_id, f"{exc.error_type}: {exc.message}"
            )
            logger.warning(
                "ingest.failed source=%s revision_id=%s error_type=%s chunks_removed=%d",
                source,
                revision_id,
                exc.error_type,
                removed,
            )
        raise

    embeddings = embed_with_progress(stores.embedder, [c.text for c in chunks], report)
    lap("embed")

    report("store", 85.0)
    stored = store_chunks(
        stores.registry,
        stores.vectors,
        source,
        revision_id,
        chunks,
        embeddings,
        page_count=document.page_count,
        file_size_bytes=len(data),
        extraction_method=document.method,
        original=original,
        reading=section_report.summary(),
    )
    removed = stored.chunks_removed
    ids = stored.ids
    lap("store")
    seconds["total"] = round(time.perf_counter() - started, 3)
    report("done", 100.0)
    record_ingestion("policies", len(ids), seconds)

    per_section: dict[str, int] = {}
    for c in chunks:
        per_section[c.section_ref] = per_section.get(c.section_ref, 0) + 1
    if section_report.missing_policies:
        logger.warning(
            "ingest.policies_not_found source=%s revision_id=%s listed=%d missing=%s",
            source,
            revision_id,
            section_report.listed_policies,
            ",".join(section_report.missing_policies),
        )
    logger.info(
        "ingest.done source=%s revision_id=%s pages=%d chunks=%d removed=%d method=%s seconds=%.2f",
        source,
        revision_id,
        document.page_count,
        len(ids),
        removed,
        document.method,
        seconds["total"],
    )
    return IngestOutcome(
        source=source,
        revision_id=revision_id,
        chunks_created=len(ids),
        chunks_removed=removed,
        page_count=document.page_count,
        extraction_method=document.method,
        file_size_bytes=len(data),
        seconds=seconds,
        sections=per_section,
        reading=section_report,
    )
