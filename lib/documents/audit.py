"""The consistency audit of application documents: Redis registry, ``application_docs`` and object store.

The same invariants as the policy audit (spec 000 NFR-003), for spec 003's documents:

- ``orphan_chunks``: chunks of a ``document_id`` the registry does not have. Repair deletes them.
- ``chunk_count_mismatch``: a registered document whose stored chunks differ from its ``chunk_count``.
  Repair rebuilds it from its stored original (entry and chunks dropped, the file ingested again).
- ``missing_file``: a registered document whose original is not in the object store. No repair: an
  operator deletes the document and ingests the file again.
- ``unreferenced_file``: a file under ``applications/`` that no registered document names. Repair deletes it.

An ingestion writes the file, then the chunks, then the registry entry, and holds the document's claim
(``lib.documents.registry``) throughout; so chunks or a file without an entry are only damage if nobody
holds that document's claim. Candidates are re-checked (entry and claim) right before repair deletes
anything. A deletion drops the entry first, so its chunks may show up as orphans for a moment: deleting
them is what the deletion was about to do anyway.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import PurePosixPath

from pydantic import BaseModel, Field

from lib.documents.ingest import ingest_document_bytes
from lib.documents.models import IngestSuccess
from lib.documents.registry import DocumentRecord, DocumentRegistry
from lib.documents.stores import DocumentStores
from lib.errors import KBError
from lib.observability.metrics import record_audit

logger = logging.getLogger(__name__)

DOCUMENT_FILES_PREFIX = "applications/"


class DocumentFindingKind(StrEnum):
    ORPHAN_CHUNKS = "orphan_chunks"
    CHUNK_COUNT_MISMATCH = "chunk_count_mismatch"
    MISSING_FILE = "missing_file"
    UNREFERENCED_FILE = "unreferenced_file"


class DocumentFinding(BaseModel):
    kind: DocumentFindingKind
    application_ref: str = ""
    document_id: str = ""
    key: str = Field(default="", description="Object key, for file findings")
    count: int = 0
    detail: str
    repair: str = Field(default="", description="What repair does; empty when it needs an operator")

    @property
    def repairable(self) -> bool:
        return bool(self.repair)


class DocumentAuditReport(BaseModel):
    checked_at: datetime
    documents: int
    chunks: int
    files: int
    findings: list[DocumentFinding] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    def counts(self) -> dict[str, int]:
        """Findings per kind, zeros included, so dashboards see a stable shape."""
        counted = Counter(f.kind.value for f in self.findings)
        return {kind.value: counted.get(kind.value, 0) for kind in DocumentFindingKind}


class DocumentRepairAction(BaseModel):
    kind: DocumentFindingKind
    document_id: str = ""
    key: str = ""
    ok: bool
    outcome: str


def _file_owner(key: str) -> str:
    """``applications/{ref}/{sha256}{suffix}`` → the document id that file would belong to."""
    path = PurePosixPath(key)
    return f"{path.parent.name}_{path.stem[:6]}"


def audit_documents(stores: DocumentStores, *, now: datetime | None = None) -> DocumentAuditReport:
    """Compare the three stores for application documents and list every inconsistency (read-only)."""
    records = {r.document_id: r for r in stores.registry.get_many(sorted(stores.registry.all_ids()))}
    stored = Counter(str(meta.get("document_id", "")) for _, meta in stores.chunks.iter_metadata())
    files = set(stores.objects.list(DOCUMENT_FILES_PREFIX))
    findings: list[DocumentFinding] = []

    for document_id, record in sorted(records.items()):
        count = stored.pop(document_id, 0)
        if count != record.chunk_count:
            findings.append(
                DocumentFinding(
                    kind=DocumentFindingKind.CHUNK_COUNT_MISMATCH,
                    application_ref=record.application_ref,
                    document_id=document_id,
                    count=count,
                    detail=f"{count} chunks stored, the registry says {record.chunk_count}",
                    repair="re-ingest from the stored original" if record.object_key in files else "",
                )
            )
        if record.object_key not in files:
            findings.append(
                DocumentFinding(
                    kind=DocumentFindingKind.MISSING_FILE,
                    application_ref=record.application_ref,
                    document_id=document_id,
                    key=record.object_key,
                    detail="the original file is not in the object store",
                )
            )
    in_flight = {d for d in [*stored, *map(_file_owner, files)] if stores.registry.claim_held(d)}
    for document_id, count in sorted(stored.items()):
        if document_id not in in_flight and document_id not in records:
            findings.append(
                DocumentFinding(
                    kind=DocumentFindingKind.ORPHAN_CHUNKS,
                    document_id=document_id,
                    count=count,
                    detail=f"{count} chunks belong to no registered document",
                    repair="delete the chunks",
                )
            )
    referenced = {record.object_key for record in records.values()}
    for key in sorted(files - referenced):
        if _file_owner(key) not in in_flight:
            findings.append(
                DocumentFinding(
                    kind=DocumentFindingKind.UNREFERENCED_FILE,
                    key=key,
                    detail="no registered document refers to this file",
                    repair="delete the file",
                )
            )
    report = DocumentAuditReport(
        checked_at=now or datetime.now(UTC),
        documents=len(records),
        chunks=sum(stored.values()) + sum(r.chunk_count for r in records.values()),
        files=len(files),
        findings=findings,
    )
    logger.info(
        "documents.audit_done documents=%d chunks=%d files=%d findings=%d",
        report.documents,
        report.chunks,
        report.files,
        len(findings),
    )
    record_audit("documents", report.counts())
    return report


def repair_document_findings(stores: DocumentStores, findings: Iterable[DocumentFinding]) -> list[DocumentRepairAction]:
    """Apply the safe repairs (orphans, then rebuilds, then files); a failed one is reported, the rest go on."""
    order = list(DocumentFindingKind)
    actions: list[DocumentRepairAction] = []
    for finding in sorted((f for f in findings if f.repairable), key=lambda f: order.index(f.kind)):
        try:
            outcome, ok = _repair(stores, finding), True
        except KBError as exc:
            outcome, ok = f"{exc.error_type}: {exc.message}", False
        actions.append(
            DocumentRepairAction(
                kind=finding.kind, document_id=finding.document_id, key=finding.key, ok=ok, outcome=outcome
            )
        )
        (logger.info if ok else logger.warning)(
            "documents.audit_repair kind=%s application_ref=%s document_id=%s key=%s ok=%s outcome=%s",
            finding.kind.value,
            finding.application_ref or "-",
            finding.document_id or "-",
            finding.key or "-",
            ok,
            outcome,
        )
    return actions


def _busy(registry: DocumentRegistry, document_id: str) -> bool:
    """Registered now, or being ingested: never delete on a guess."""
    return registry.get(document_id) is not None or registry.claim_held(document_id)


def _repair(stores: DocumentStores, finding: DocumentFinding) -> str:
    match finding.kind:
        case DocumentFindingKind.ORPHAN_CHUNKS:
            if _busy(stores.registry, finding.document_id):
                return "left alone: the document is registered or being ingested now"
            return f"{stores.chunks.delete_document(finding.document_id)} chunks deleted"
        case DocumentFindingKind.CHUNK_COUNT_MISMATCH:
            record = stores.registry.get(finding.document_id)
            if record is None:
                return "left alone: the document is gone now"
            return _rebuild(stores, record)
        case DocumentFindingKind.UNREFERENCED_FILE:
            if _busy(stores.registry, _file_owner(finding.key)):
                return "left alone: a document refers to it or is being ingested now"
            return "deleted" if stores.objects.delete(finding.key) else "already gone"
        case _:
            return "no automatic repair"


def _rebuild(stores: DocumentStores, record: DocumentRecord) -> str:
    """Drop the entry and chunks, keep the original, and ingest it again under the same id, type and path."""
    data = stores.objects.get_bytes(record.object_key)
    stores.registry.remove(record)
    stores.chunks.delete_document(record.document_id)
    result = ingest_document_bytes(
        stores,
        data,
        file_name=record.source_file,
        application_ref=record.application_ref,
        document_type=record.document_type,
        file_path=record.file_path,
    )
    if isinstance(result, IngestSuccess):
        return f"re-ingested: {result.chunks_created} chunks"
    return f"re-ingested: {result.status}"


def audit_and_repair_documents(
    stores: DocumentStores,
) -> tuple[DocumentAuditReport, list[DocumentRepairAction], DocumentAuditReport]:
    """Audit, repair what is repairable, and audit again to show what is left."""
    before = audit_documents(stores)
    actions = repair_document_findings(stores, before.findings)
    return before, actions, audit_documents(stores)
