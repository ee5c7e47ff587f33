"""The consistency audit (spec 000 NFR-003, spec 001 ITS-08): registry, Chroma and object store compared.

What it reports, and what ``repair_findings`` (``lib.policies.audit_repair``) does about each:

- ``stuck_processing``: a revision ``processing`` for longer than ``PROCESSING_TIMEOUT_SECONDS``
  (its ingestion died). Repair marks it ``failed`` and drops its chunks; re-running the ingestion
  then succeeds.
- ``orphan_chunks``: chunks of a revision the registry does not have. Repair deletes them.
- ``chunk_count_mismatch``: chunks stored differ from the revision's ``chunk_count`` (a ``failed``
  revision should have none). Repair re-ingests from the stored file (a failed one: deletes).
- ``stale_metadata``: chunk dates, label or title disagree with the registry. Repair rewrites them.
- ``missing_file``: an ``active``/``superseded`` revision whose original is not in the object store.
  No repair: an operator re-uploads it or removes the revision.
- ``unreferenced_file``: a file under ``policies/`` that no revision names. Repair deletes it.
- ``stale_search_index``: a revision block this process holds for search (its vectors and its lexical
  index, ``lib.retrieval.corpus``), still served under the registry's stamp, whose chunk ids or texts
  differ from what Chroma stores now (rewritten behind the pipeline's back). Repair evicts it; the next
  search reloads it from Chroma. Only the process that runs the audit is checked: each process derives
  its own blocks from Chroma, and the service's blocks are checked when the service runs the audit.

Reads are ordered so that work in flight is not mistaken for damage. Chroma is read before the
registry: every writer creates the registry entry before its chunks, so a chunk seen first has its
revision visible by the time the registry is read. Files are written *before* their revision, so an
unreferenced file may be an upload a millisecond from registration; repair re-reads the registry right
before deleting anything, which leaves only that millisecond. Revisions in ``processing`` are in flight
and only judged by their age.

The audit reads the three stores and never changes them, so the nightly flow, the CLI and the service's deep
health check can all run it. The one thing it writes is its outcome, the last audit's record in Redis
(``lib.policies.audit_record``), which the web page's Ingestion view shows.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from pydantic import BaseModel, Field

from lib.dates import to_int
from lib.observability.metrics import record_audit
from lib.policies.audit_record import save_last_audit
from lib.policies.chunks import PolicyVectorStore, policy_lexical_text, revision_ref, revision_stamp
from lib.policies.models import Policy, Revision, RevisionStatus
from lib.policies.stores import PolicyStores
from lib.retrieval import StaleIndex
from lib.stores.objects import ObjectStore

logger = logging.getLogger(__name__)

POLICY_FILES_PREFIX = "policies/"


class FindingKind(StrEnum):
    """In the order repairs are applied (``repair_findings`` sorts by it)."""

    STUCK_PROCESSING = "stuck_processing"
    ORPHAN_CHUNKS = "orphan_chunks"
    CHUNK_COUNT_MISMATCH = "chunk_count_mismatch"
    STALE_METADATA = "stale_metadata"
    MISSING_FILE = "missing_file"
    UNREFERENCED_FILE = "unreferenced_file"
    STALE_SEARCH_INDEX = "stale_search_index"


class Finding(BaseModel):
    kind: FindingKind
    source: str = ""
    revision_id: str = ""
    key: str = Field(default="", description="Object key, for file findings")
    count: int = Field(default=0, description="Chunks or bytes concerned, as the detail says")
    detail: str
    repair: str = Field(default="", description="What repair does; empty when it needs an operator")

    @property
    def repairable(self) -> bool:
        return bool(self.repair)


class AuditReport(BaseModel):
    checked_at: datetime
    revisions: int
    chunks: int
    files: int
    findings: list[Finding] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    def counts(self) -> dict[str, int]:
        """Findings per kind, every kind present (zeros included) so dashboards see a stable shape."""
        counted = Counter(f.kind.value for f in self.findings)
        return {kind.value: counted.get(kind.value, 0) for kind in FindingKind}


@dataclass
class _RevisionChunks:
    ids: list[str] = field(default_factory=list)
    metadata: Counter[tuple[int, int, str, str]] = field(default_factory=Counter)


def _expected_metadata(policy: Policy, revision: Revision) -> tuple[int, int, str, str]:
    return to_int(revision.effective_from), to_int(revision.effective_to), revision.version_label, policy.title


def chunk_owner(meta: Mapping[str, object]) -> tuple[str, str]:
    """The ``(source, revision_id)`` a chunk belongs to, from its ``revision_ref`` (or, on chunks written
    before that field existed, from ``source`` and ``revision_id``)."""
    if meta.get("revision_ref"):
        source, _, revision_id = str(meta["revision_ref"]).partition(":")
        return source, revision_id
    return str(meta.get("source", "")), str(meta.get("revision_id", ""))


def _read_chunks(vectors: PolicyVectorStore) -> dict[tuple[str, str], _RevisionChunks]:
    groups: dict[tuple[str, str], _RevisionChunks] = {}
    for chunk_id, meta in vectors.iter_metadata():
        group = groups.setdefault(chunk_owner(meta), _RevisionChunks())
        group.ids.append(chunk_id)
        group.metadata[
            (
                int(meta.get("effective_from", 0)),
                int(meta.get("effective_to", 0)),
                str(meta.get("version_label", "")),
                str(meta.get("source_title", "")),
            )
        ] += 1
    return groups


def audit_store(stores: PolicyStores, *, now: datetime | None = None) -> AuditReport:
    """Compare the three stores and list every inconsistency found (read-only), and keep the outcome as the last
    audit (``save_last_audit``)."""
    now = now or datetime.now(UTC)
    stuck_before = now - timedelta(seconds=stores.settings.jobs.processing_timeout_seconds)
    chunks = _read_chunks(stores.vectors)
    total_chunks = sum(len(group.ids) for group in chunks.values())
    files = set(stores.objects.list(POLICY_FILES_PREFIX))
    policies = {p.source: p for p in stores.registry.list_policies()}
    revisions = stores.registry.revisions_by_source(list(policies))
    findings: list[Finding] = []
    referenced: set[str] = set()

    for source, policy in policies.items():
        for rev in revisions.get(source, []):
            if rev.file_path:
                referenced.add(rev.file_path)
            stored = chunks.pop((source, rev.revision_id), _RevisionChunks())
            findings.extend(_revision_findings(stores.objects, policy, rev, stored, files, stuck_before))

    for (source, revision_id), stored in sorted(chunks.items()):
        findings.append(
            Finding(
                kind=FindingKind.ORPHAN_CHUNKS,
                source=source,
                revision_id=revision_id,
                count=len(stored.ids),
                detail=f"{len(stored.ids)} chunks belong to no registered revision",
                repair="delete the chunks",
            )
        )
    for key in sorted(files - referenced):
        findings.append(
            Finding(
                kind=FindingKind.UNREFERENCED_FILE,
                key=key,
                detail="no revision refers to this file",
                repair="delete the file",
            )
        )
    for stale in stale_search_blocks(stores.vectors, revisions):
        source, revision_id = chunk_owner({"revision_ref": stale.block.key})
        findings.append(
            Finding(
                kind=FindingKind.STALE_SEARCH_INDEX,
                source=source,
                revision_id=revision_id,
                count=len(stale.block.ids),
                detail=f"this process's search block (vectors and lexical index) is out of step with Chroma: "
                f"{stale.detail}",
                repair="evict the block; the next search reloads it from Chroma",
            )
        )
    report = AuditReport(
        checked_at=now,
        revisions=sum(len(r) for r in revisions.values()),
        chunks=total_chunks,
        files=len(files),
        findings=findings,
    )
    logger.info(
        "audit.done revisions=%d chunks=%d files=%d findings=%d",
        report.revisions,
        report.chunks,
        report.files,
        len(findings),
    )
    record_audit("policies", report.counts())
    save_last_audit(stores.registry, report)
    return report


def stale_search_blocks(vectors: PolicyVectorStore, revisions: Mapping[str, list[Revision]]) -> list[StaleIndex]:
    """The revision blocks this process would serve (stamp as the registry's ``revisions`` say) whose chunks
    differ from Chroma's now."""
    served = {
        revision_ref(source, rev.revision_id): revision_stamp(rev)
        for source, revs in revisions.items()
        for rev in revs
        if rev.resolvable
    }

    def stored(key: str) -> tuple[list[str], list[str]]:
        found = vectors.collection.get(where={"revision_ref": key}, include=["documents", "metadatas"])
        rows = zip(found["documents"] or [], found["metadatas"] or [], strict=True)
        return list(found["ids"]), [policy_lexical_text(meta or {}, text or "") for text, meta in rows]

    return vectors.cache.stale(served, stored)


def _revision_findings(
    objects: ObjectStore,
    policy: Policy,
    rev: Revision,
    stored: _RevisionChunks,
    files: set[str],
    stuck_before: datetime,
) -> Iterable[Finding]:
    source, revision_id = policy.source, rev.revision_id
    if rev.status == RevisionStatus.PROCESSING:
        if rev.created_at <= stuck_before:
            yield Finding(
                kind=FindingKind.STUCK_PROCESSING,
                source=source,
                revision_id=revision_id,
                count=len(stored.ids),
                detail=f"processing since {rev.created_at:%Y-%m-%d %H:%M:%S}Z "
                f"(last phase {rev.progress_phase or 'none'}), {len(stored.ids)} chunks written",
                repair="mark it failed and delete its chunks",
            )
        return
    expected = rev.chunk_count if rev.resolvable else 0
    file_present = bool(rev.file_path) and (rev.file_path in files or objects.exists(rev.file_path))
    if len(stored.ids) != expected:
        if not rev.resolvable:
            repair = "delete the chunks of the failed revision"
        elif file_present:
            repair = "re-ingest from the stored file"
        else:
            repair = ""
        yield Finding(
            kind=FindingKind.CHUNK_COUNT_MISMATCH,
            source=source,
            revision_id=revision_id,
            count=len(stored.ids),
            detail=f"{len(stored.ids)} chunks stored, registry says {expected} ({rev.status.value})",
            repair=repair,
        )
    if rev.resolvable:
        want = _expected_metadata(policy, rev)
        stale = sum(n for meta, n in stored.metadata.items() if meta != want)
        if stale:
            yield Finding(
                kind=FindingKind.STALE_METADATA,
                source=source,
                revision_id=revision_id,
                count=stale,
                detail=f"{stale} chunks carry dates, label or title that differ from the registry",
                repair="rewrite chunk metadata from the registry",
            )
        if not file_present:
            yield Finding(
                kind=FindingKind.MISSING_FILE,
                source=source,
                revision_id=revision_id,
                key=rev.file_path,
                detail="the original file is not in the object store; reindex is impossible",
            )
