"""The policy registry in Redis: the source of truth for policies, revisions and their dates.

Where things are kept is ``lib.policies.keys``, how records become hashes ``lib.policies.codec``, the date
rules ``lib.policies.temporal`` and the in-memory copy for readers ``lib.policies.snapshot``.

Every write is an optimistic transaction (``lib.policies.transaction``): a concurrent writer to the same
policy makes the loser re-read and re-decide, so two overlapping creations can never both succeed and a
supersession is never half applied. Every write also replaces the generation token that readers'
snapshots are keyed by, in the same MULTI/EXEC as its data.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, date, datetime
from typing import Any

import redis
from redis.client import Pipeline

from lib.dates import parse_date
from lib.errors import PolicyAlreadyExistsError, RevisionNotFoundError
from lib.policies.codec import CHUNKS_GENERATION_FIELD, policy_to_hash, revision_from_hash
from lib.policies.keys import (
    GENERATION_KEY,
    LAST_AUDIT_KEY,
    POLICIES_ALL,
    check_revision_id,
    check_source,
    policy_key,
    revision_hash_key,
    revisions_key,
)
from lib.policies.models import (
    CreatedRevision,
    Policy,
    PolicyCreate,
    PolicyUpdate,
    Revision,
    RevisionCreate,
    RevisionStatus,
    RevisionUpdate,
)
from lib.policies.snapshot import RegistrySnapshot, SnapshotCache
from lib.policies.temporal import (
    Plan,
    Timeline,
    plan_creation,
    plan_deletion,
    plan_edit,
    plan_failure,
    plan_ingested,
    resolve_revision,
)
from lib.policies.transaction import apply_plan, policy_not_found, redis_call, transact

logger = logging.getLogger(__name__)


def _now() -> datetime:
    return datetime.now(UTC)


class PolicyRegistry:
    """CRUD and date rules for policies and revisions. Construct with a ``decode_responses=True`` client.

    ``snapshot_max_age_s`` bounds how late edits made behind the registry's back are seen (writes through
    it are seen at once); ``clock`` measures that age (``time.monotonic``; tests pass their own).
    """

    def __init__(
        self, client: redis.Redis, *, snapshot_max_age_s: float = 30.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._r = client
        self._snapshots = SnapshotCache(max_age_s=snapshot_max_age_s, clock=clock)

    # -- policies ---------------------------------------------------------------------------------

    def ping(self) -> bool:
        return bool(redis_call(self._r.ping))

    def create_policy(self, data: PolicyCreate) -> Policy:
        now = _now()
        policy = Policy(**data.model_dump(), created_at=now, updated_at=now)
        key = policy_key(data.source)

        def write(pipe: Pipeline) -> Policy:
            if pipe.exists(key):
                raise PolicyAlreadyExistsError(
                    f"A policy with source '{data.source}' already exists", source=data.source
                )
            pipe.multi()
            pipe.hset(key, mapping=policy_to_hash(policy))
            pipe.sadd(POLICIES_ALL, data.source)
            return policy

        created = transact(self._r, data.source, write, key)
        logger.info("registry.policy_created source=%s", data.source)
        return created

    def get_policy(self, source: str) -> Policy:
        check_source(source)
        data = redis_call(self._r.hgetall, policy_key(source))
        if not data:
            raise policy_not_found(source)
        return Policy.model_validate(data)

    def policy_exists(self, source: str) -> bool:
        return bool(redis_call(self._r.exists, policy_key(check_source(source))))

    def update_policy(self, source: str, data: PolicyUpdate) -> Policy:
        changes = data.model_dump(exclude_unset=True, exclude_none=True)
        key = policy_key(check_source(source))

        def write(pipe: Pipeline) -> Policy:
            current = pipe.hgetall(key)
            if not current:
                raise policy_not_found(source)
            updated = Policy.model_validate(current).model_copy(update={**changes, "updated_at": _now()})
            pipe.multi()
            pipe.hset(key, mapping=policy_to_hash(updated))
            return updated

        return transact(self._r, source, write, key)

    def list_sources(self) -> list[str]:
        return sorted(redis_call(self._r.smembers, POLICIES_ALL))

    def list_policies(self) -> list[Policy]:
        sources = self.list_sources()
        pipe = self._r.pipeline(transaction=False)
        for source in sources:
            pipe.hgetall(policy_key(source))
        rows = redis_call(pipe.execute)
        return [Policy.model_validate(row) for row in rows if row]

    # -- revisions: reads -------------------------------------------------------------------------

    def get_revision(self, source: str, revision_id: str) -> Revision:
        check_source(source)
        check_revision_id(revision_id)
        data = redis_call(self._r.hgetall, revision_hash_key(source, revision_id))
        if not data:
            if not redis_call(self._r.exists, policy_key(source)):
                raise policy_not_found(source)
            raise RevisionNotFoundError(
                f"No revision '{revision_id}' of policy '{source}'", source=source, revision_id=revision_id
            )
        return revision_from_hash(data)

    def list_revisions(self, source: str) -> list[Revision]:
        """All revisions of a policy, newest ``effective_from`` first (spec 000 FR-004)."""
        return self.revisions_by_source([check_source(source)])[source]

    def revisions_by_source(self, sources: Iterable[str]) -> dict[str, list[Revision]]:
        """Every revision of several policies, newest first, in two round trips (snapshots, undated search)."""
        sources = list(sources)
        pipe = self._r.pipeline(transaction=False)
        for source in sources:
            pipe.zrevrange(revisions_key(source), 0, -1)
        id_lists = redis_call(pipe.execute)
        pipe = self._r.pipeline(transaction=False)
        for source, ids in zip(sources, id_lists, strict=True):
            for rid in ids:
                pipe.hgetall(revision_hash_key(source, rid))
        rows = iter(redis_call(pipe.execute))
        result: dict[str, list[Revision]] = {}
        for source, ids in zip(sources, id_lists, strict=True):
            result[source] = [revision_from_hash(row) for row in (next(rows) for _ in ids) if row]
        return result

    def generation(self) -> str:
        """The token of the registry's current content (one GET); set first if missing (a flushed database)."""
        token = redis_call(self._r.get, GENERATION_KEY)
        if token is None:
            redis_call(self._r.set, GENERATION_KEY, uuid.uuid4().hex, nx=True)
            token = redis_call(self._r.get, GENERATION_KEY)
        return str(token)

    def snapshot(self) -> RegistrySnapshot:
        """Every policy's revisions as of now: one round trip when nothing was written since the last call."""
        return self._snapshots.get(self.generation(), lambda: self.revisions_by_source(self.list_sources()))

    def get_effective_revision(self, source: str, day: date | str) -> Revision | None:
        """The revision in force on ``day`` (spec 001 PolicyRegistry TS-10/11), from the snapshot."""
        check_source(source)
        day = parse_date(day, field="effective_date")
        return resolve_revision(source, self.snapshot().revisions.get(source, ()), day).revision

    # -- revisions: writes ------------------------------------------------------------------------

    def create_revision(
        self, source: str, data: RevisionCreate, *, status: RevisionStatus = RevisionStatus.PROCESSING
    ) -> CreatedRevision:
        """Register a revision (normally ``processing`` until its chunks are stored).

        Closes an open-ended revision that started earlier (auto-supersession) in the same transaction.
        """
        check_source(source)
        revision_id = check_revision_id(data.resolved_revision_id(source))
        new = Revision(
            revision_id=revision_id,
            source=source,
            version_label=data.version_label,
            effective_from=data.effective_from,
            effective_to=data.effective_to,
            status=status,
            file_path=data.file_path,
            file_sha256=data.file_sha256,
            file_size_bytes=data.file_size_bytes,
            notes=data.notes,
            created_at=_now(),
        )
        plan = apply_plan(self._r, source, lambda timeline: plan_creation(timeline, new))
        logger.info(
            "registry.revision_created source=%s revision_id=%s from=%s to=%s superseded=%s",
            source,
            revision_id,
            new.effective_from,
            new.effective_to,
            ",".join(r.revision_id for r in plan.superseded) or "-",
        )
        return CreatedRevision(revision=plan.revision, superseded=list(plan.superseded))

    def update_revision(self, source: str, revision_id: str, data: RevisionUpdate) -> Revision:
        """Change label, notes or dates. New dates are re-checked for overlap; the ends of the other revisions
        that follow the next one's start are recomputed in the same transaction (``plan_edit``)."""
        check_source(source)
        check_revision_id(revision_id)
        changes = {
            field: value
            for field, value in data.model_dump(exclude_unset=True).items()
            if value is not None or field == "effective_to"
        }
        plan = apply_plan(self._r, source, lambda timeline: plan_edit(timeline, revision_id, changes))
        logger.info(
            "registry.revision_updated source=%s revision_id=%s fields=%s", source, revision_id, *[sorted(changes)]
        )
        return plan.revision

    def mark_ingested(
        self,
        source: str,
        revision_id: str,
        *,
        page_count: int,
        chunk_count: int,
        file_size_bytes: int,
        extraction_method: str,
        file_path: str | None = None,
        file_sha256: str | None = None,
        reading: str = "",
    ) -> Revision:
        """Record a completed ingestion and settle the status to ``active`` or ``superseded``; ``file_path`` and
        ``file_sha256``, when given, record the original it was ingested from (a reindex with a new file);
        ``reading`` says how well the document was read (``lib.text.section_report``)."""
        figures: dict[str, object] = {
            "reading": reading,
            "page_count": page_count,
            "chunk_count": chunk_count,
            "file_size_bytes": file_size_bytes,
            "extraction_method": extraction_method,
            "error": "",
        }
        if file_path is not None and file_sha256 is not None:
            figures |= {"file_path": file_path, "file_sha256": file_sha256}

        def decide(timeline: Timeline) -> Plan:
            ingested = timeline.require(revision_id).model_copy(update={**figures, "ingested_at": _now()})
            return plan_ingested(timeline, ingested)

        return apply_plan(self._r, check_source(source), decide).revision

    def mark_failed(self, source: str, revision_id: str, error: str) -> Revision:
        """Record a failed ingestion and give the dates it occupied back to the revision it superseded."""
        plan = apply_plan(
            self._r, check_source(source), lambda timeline: plan_failure(timeline, revision_id, error[:2000])
        )
        logger.warning("registry.revision_failed source=%s revision_id=%s error=%s", source, revision_id, error[:200])
        return plan.revision

    def delete_revision(self, source: str, revision_id: str) -> Revision:
        """Remove a revision's registry entry; the revision before it covers its days again. Chunks and file are
        the caller's (``lib.policies.lifecycle``). Refuses to remove the last ``active`` revision (spec 001 TS-09).
        """
        check_source(source)
        check_revision_id(revision_id)
        plan = apply_plan(self._r, source, lambda timeline: plan_deletion(timeline, revision_id))
        logger.info("registry.revision_deleted source=%s revision_id=%s", source, revision_id)
        return plan.revision

    def set_progress(self, source: str, revision_id: str, phase: str, percent: float) -> bool:
        """Record ingestion progress for status readers; a no-op (False) if the revision is gone.

        A single HSET guarded by EXISTS in one Lua call, so a late progress report can never
        resurrect the hash of a revision deleted meanwhile.
        """
        written = redis_call(
            self._set_progress_script, [revision_hash_key(source, revision_id)], [phase, f"{percent:g}"]
        )
        return bool(written)

    def chunks_changed(self, revisions: Iterable[tuple[str, str]]) -> None:
        """Record that the chunks of ``revisions`` (source, revision_id) were written or deleted: each one's
        ``chunks_generation`` goes up and the generation token is replaced, in one atomic script, so every
        replica's next search reads the new stamp and never serves an index loaded before the write.

        Called after the write to Chroma: a search that read the old stamp began before the write ended. A
        revision whose record is gone (deleted, or chunks of no revision) is skipped: no search can name it.
        """
        keys = sorted({revision_hash_key(check_source(s), check_revision_id(r)) for s, r in revisions})
        if keys:
            token = uuid.uuid4().hex
            redis_call(self._chunks_changed_script, [GENERATION_KEY, *keys], [CHUNKS_GENERATION_FIELD, token])

    def put_last_audit(self, record: str) -> None:
        """Replace the last audit's record (``lib.policies.audit_record``): one SET, so a reader sees the old
        record or the new one, never a mix of two audits."""
        redis_call(self._r.set, LAST_AUDIT_KEY, record)

    def get_last_audit(self) -> str | None:
        found = redis_call(self._r.get, LAST_AUDIT_KEY)
        return str(found) if found is not None else None

    @property
    def client(self) -> redis.Redis:
        """The registry's Redis client, for keys outside its schema (the reindex lock, ``lib.stores.locks``)."""
        return self._r

    @property
    def _chunks_changed_script(self) -> Callable[..., Any]:
        return self._r.register_script(
            "local bumped = 0 "
            "for i = 2, #KEYS do "
            "if redis.call('EXISTS', KEYS[i]) == 1 then "
            "redis.call('HINCRBY', KEYS[i], ARGV[1], 1) bumped = bumped + 1 "
            "end end "
            "redis.call('SET', KEYS[1], ARGV[2]) return bumped"
        )

    @property
    def _set_progress_script(self) -> Callable[..., Any]:
        return self._r.register_script(
            "if redis.call('EXISTS', KEYS[1]) == 1 then "
            "redis.call('HSET', KEYS[1], 'progress_phase', ARGV[1], 'progress_percent', ARGV[2]) return 1 end "
            "return 0"
        )
