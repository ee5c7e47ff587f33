"""The consistency audit of the governance corpus: its Redis registry against its Chroma collection.

- ``orphan_generation``: chunks of a document generation no registered record names: left by an ingestion
  that stopped between writing a document's new chunks and registering them (or between unregistering a
  removed document and deleting its chunks). Searches never see them (only a record's generation counts),
  but they take room and would be read by nothing. Repair deletes them.
- ``chunk_count_mismatch``: a record whose generation holds another number of chunks than its
  ``chunk_count``. Repair forgets the record's content hash, so the next ingestion of the folder re-chunks
  the file; until then the document stays searchable with the chunks it has.

A corpus ingestion holds the registry's ``ingest_lock`` while it writes, and it writes a document's new
generation before registering it. So while that lock is held, a generation newer than every registered one
may be the ingestion's next flip rather than damage: the audit leaves those out. Repair takes the lock
before it changes anything and re-reads the registry under it.
"""

from __future__ import annotations

import logging
from collections import Counter
from datetime import UTC, datetime
from enum import StrEnum

from pydantic import BaseModel, Field

from lib.governance.keys import generation_key
from lib.governance.stores import GovernanceStores
from lib.observability.metrics import record_audit

logger = logging.getLogger(__name__)

SCAN_ATTEMPTS = 3
"""Scans of the collection tried while the registry keeps changing under them (an ingestion's flips)."""
REPAIR_LOCK_WAIT_S = 30.0
"""How long repair waits for a running corpus ingestion to finish before it gives up for this run."""


class GovernanceFindingKind(StrEnum):
    ORPHAN_GENERATION = "orphan_generation"
    CHUNK_COUNT_MISMATCH = "chunk_count_mismatch"


class GovernanceFinding(BaseModel):
    kind: GovernanceFindingKind
    doc_id: str
    generation: int
    count: int = Field(description="Chunks stored in that generation")
    detail: str
    repair: str = Field(description="What repair does")


class GovernanceAuditReport(BaseModel):
    checked_at: datetime
    documents: int
    chunks: int
    ingestion_running: bool = Field(description="A corpus ingestion held the lock: its newest chunks were left out")
    findings: list[GovernanceFinding] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    def counts(self) -> dict[str, int]:
        """Findings per kind, zeros included, so dashboards see a stable shape."""
        counted = Counter(f.kind.value for f in self.findings)
        return {kind.value: counted.get(kind.value, 0) for kind in GovernanceFindingKind}


class GovernanceRepairAction(BaseModel):
    kind: GovernanceFindingKind
    doc_id: str
    generation: int
    ok: bool
    outcome: str


def audit_governance(stores: GovernanceStores) -> GovernanceAuditReport:
    """Compare the governance registry and collection and list every inconsistency (read-only)."""
    lock = stores.registry.ingest_lock()
    for _ in range(SCAN_ATTEMPTS):
        ingestion_running = lock.locked()
        version, records = stores.registry.snapshot()
        stored: Counter[tuple[str, int]] = Counter()
        for _, meta in stores.chunks.iter_metadata():
            stored[(str(meta.get("doc_id", "")), int(meta.get("generation", 0)))] += 1
        ingestion_running = ingestion_running or lock.locked()
        if stores.registry.version() == version:
            break
    total = sum(stored.values())
    newest = max((r.generation for r in records.values()), default=0)
    findings: list[GovernanceFinding] = []
    for doc_id, record in sorted(records.items()):
        count = stored.pop((doc_id, record.generation), 0)
        if count != record.chunk_count:
            findings.append(
                GovernanceFinding(
                    kind=GovernanceFindingKind.CHUNK_COUNT_MISMATCH,
                    doc_id=doc_id,
                    generation=record.generation,
                    count=count,
                    detail=f"{count} chunks stored, the registry says {record.chunk_count}",
                    repair="forget its content hash: the next corpus ingestion re-chunks the file",
                )
            )
    for (doc_id, generation), count in sorted(stored.items()):
        if ingestion_running and generation > newest:
            continue
        findings.append(
            GovernanceFinding(
                kind=GovernanceFindingKind.ORPHAN_GENERATION,
                doc_id=doc_id,
                generation=generation,
                count=count,
                detail=f"{count} chunks of {generation_key(doc_id, generation)}, a generation no record names",
                repair="delete the chunks",
            )
        )
    report = GovernanceAuditReport(
        checked_at=datetime.now(UTC),
        documents=len(records),
        chunks=total,
        ingestion_running=ingestion_running,
        findings=findings,
    )
    record_audit("governance", report.counts())
    return report


def repair_governance(stores: GovernanceStores, findings: list[GovernanceFinding]) -> list[GovernanceRepairAction]:
    """Apply each finding's repair under the ingestion lock, each re-checked against the registry first."""
    lock = stores.registry.ingest_lock()
    if not lock.acquire(wait_seconds=REPAIR_LOCK_WAIT_S):
        busy = "a corpus ingestion is running: audit again when it ends"
        return [
            GovernanceRepairAction(kind=f.kind, doc_id=f.doc_id, generation=f.generation, ok=False, outcome=busy)
            for f in findings
        ]
    try:
        return [_repair(stores, finding) for finding in findings]
    finally:
        lock.release()


def _repair(stores: GovernanceStores, finding: GovernanceFinding) -> GovernanceRepairAction:
    record = stores.registry.get(finding.doc_id)
    current = record is not None and record.generation == finding.generation
    if finding.kind is GovernanceFindingKind.ORPHAN_GENERATION:
        if current:
            ok, outcome = False, "the generation is registered now: nothing deleted"
        else:
            deleted = stores.chunks.delete_generation(finding.doc_id, finding.generation)
            ok, outcome = True, f"deleted {deleted} chunks"
    elif not current:
        ok, outcome = False, "the record changed since the audit: nothing done"
    else:
        ok = stores.registry.forget_hash(finding.doc_id)
        outcome = "content hash forgotten: the next corpus ingestion re-chunks the file" if ok else "unregistered"
    logger.info(
        "governance.audit_repair kind=%s doc_id=%s generation=%d ok=%s outcome=%r",
        finding.kind.value,
        finding.doc_id,
        finding.generation,
        ok,
        outcome,
    )
    return GovernanceRepairAction(
        kind=finding.kind, doc_id=finding.doc_id, generation=finding.generation, ok=ok, outcome=outcome
    )
