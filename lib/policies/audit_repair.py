"""Repairs for the consistency audit's findings (``lib.policies.audit`` lists them and what each repair does).

The audit's view is seconds old and writers do not stop for it, so every repair re-reads the registry
right before it writes and acts on what it finds then: a stuck revision that has finished, an orphan
whose revision is registered now, or a file a revision names now is left alone.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from pydantic import BaseModel

from lib.errors import InvalidArgumentError, KBError, PolicyNotFoundError, RevisionNotFoundError
from lib.policies.audit import AuditReport, Finding, FindingKind, audit_store, chunk_owner, stale_search_blocks
from lib.policies.chunks import revision_ref
from lib.policies.lifecycle import fail_revision, sync_policy_chunks
from lib.policies.models import RevisionStatus
from lib.policies.registry import PolicyRegistry
from lib.policies.reindex import reindex_revision
from lib.policies.stores import PolicyStores

logger = logging.getLogger(__name__)


class RepairAction(BaseModel):
    kind: FindingKind
    source: str = ""
    revision_id: str = ""
    key: str = ""
    ok: bool
    outcome: str


def repair_findings(stores: PolicyStores, findings: Iterable[Finding]) -> list[RepairAction]:
    """Fix what is safe to fix, in an order where one fix never undoes another; report each attempt.

    Stuck revisions are failed first (which drops their chunks), orphans go next, then counts are
    rebuilt by re-ingesting, then metadata is rewritten once per policy, and files are deleted last.
    A fix that fails is reported and the rest continue.
    """
    order = list(FindingKind)
    pending = sorted((f for f in findings if f.repairable), key=lambda f: order.index(f.kind))
    actions: list[RepairAction] = []
    synced: set[str] = set()
    for finding in pending:
        if finding.kind == FindingKind.STALE_METADATA:
            if finding.source in synced:
                continue
            synced.add(finding.source)
        try:
            outcome = _repair(stores, finding)
            ok = True
        except KBError as exc:
            outcome, ok = f"{exc.error_type}: {exc.message}", False
        actions.append(
            RepairAction(
                kind=finding.kind,
                source=finding.source,
                revision_id=finding.revision_id,
                key=finding.key,
                ok=ok,
                outcome=outcome,
            )
        )
        log = logger.info if ok else logger.warning
        log(
            "audit.repair kind=%s source=%s revision_id=%s key=%s ok=%s outcome=%s",
            finding.kind.value,
            finding.source or "-",
            finding.revision_id or "-",
            finding.key or "-",
            ok,
            outcome,
        )
    return actions


def _repair(stores: PolicyStores, finding: Finding) -> str:
    source, revision_id = finding.source, finding.revision_id
    match finding.kind:
        case FindingKind.STUCK_PROCESSING:
            current = stores.registry.get_revision(source, revision_id)
            if current.status != RevisionStatus.PROCESSING:
                return f"left alone: it is {current.status.value} now"
            removed = fail_revision(
                stores.registry,
                stores.vectors,
                source,
                revision_id,
                "stuck_processing: marked failed by the consistency audit",
            )
            return f"marked failed, {removed} chunks deleted"
        case FindingKind.ORPHAN_CHUNKS:
            if _registered(stores.registry, source, revision_id):
                return "left alone: the revision is registered now"
            ids = [cid for cid, meta in stores.vectors.iter_metadata() if chunk_owner(meta) == (source, revision_id)]
            return f"{stores.vectors.delete_ids(ids)} chunks deleted"
        case FindingKind.CHUNK_COUNT_MISMATCH:
            current = stores.registry.get_revision(source, revision_id)
            if current.status == RevisionStatus.FAILED:
                return f"{stores.vectors.delete_revision(source, revision_id)} chunks of the failed revision deleted"
            outcome = reindex_revision(stores, source, revision_id)
            return f"re-ingested: {outcome.chunks_created} chunks, {outcome.chunks_removed} stale removed"
        case FindingKind.STALE_METADATA:
            synced = sync_policy_chunks(stores.registry, stores.vectors, source)
            return f"metadata rewritten on {synced} chunks of {source}"
        case FindingKind.STALE_SEARCH_INDEX:
            key = revision_ref(source, revision_id)
            revisions = stores.registry.revisions_by_source([source])
            stale = [s for s in stale_search_blocks(stores.vectors, revisions) if s.block.key == key]
            if not stores.vectors.cache.evict_stale(stale):
                return "left alone: the block is in step with Chroma now, or no longer held"
            return f"search block evicted; the next search reloads its {stale[0].stored_rows} chunks from Chroma"
        case FindingKind.UNREFERENCED_FILE:
            if _file_referenced(stores.registry, finding.key):
                return "left alone: a revision refers to it now"
            return "deleted" if stores.objects.delete(finding.key) else "already gone"
        case _:
            return "no automatic repair"


def _registered(registry: PolicyRegistry, source: str, revision_id: str) -> bool:
    """Whether the registry has the revision now. An unreachable registry raises: never delete on a guess."""
    if not source or not revision_id:
        return False
    try:
        registry.get_revision(source, revision_id)
    except (RevisionNotFoundError, PolicyNotFoundError, InvalidArgumentError):
        return False
    return True


def _file_referenced(registry: PolicyRegistry, key: str) -> bool:
    revisions = registry.revisions_by_source(registry.list_sources())
    return any(r.file_path == key for revs in revisions.values() for r in revs)


def audit_and_repair(stores: PolicyStores) -> tuple[AuditReport, list[RepairAction], AuditReport]:
    """Audit, repair what is repairable, and audit again to show what is left (ideally nothing)."""
    before = audit_store(stores)
    actions = repair_findings(stores, before.findings)
    return before, actions, audit_store(stores)
