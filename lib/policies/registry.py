"""The policy registry in Redis: the source of truth for policies, revisions and their dates.

Key schema exactly as spec 000 FR-008::

    policy:{source}                          hash   policy metadata
    policy_revision:{source}:{revision_id}   hash   revision metadata
    policy_revisions:{source}                zset   revision ids scored by effective_from (epoch days)
    policies_all                             set    every source slug
    policy_registry:generation               string random token, replaced by every write (below)

Every write that touches a policy's revisions runs as an optimistic transaction: WATCH the policy,
its sorted set and every revision hash, read, decide, then MULTI/EXEC. A concurrent writer to the
same policy makes EXEC fail and the loser re-reads and re-decides, so two overlapping creations can
never both succeed and a supersession is never half applied.

Readers on the hot path (the resolver, hence every search) use a ``RegistrySnapshot``: every policy's
revisions, loaded once and reused while ``policy_registry:generation`` still holds the token it was
loaded under. Every write replaces the token in the same MULTI/EXEC as its data, so a reader checks
one key per request and sees each write on its next request, in every replica. A token rather than
a counter: after a flush or a restore the key is new and no old snapshot can match it. Edits made
behind the registry's back (``redis-cli``) do not replace it: a snapshot is therefore also reloaded
once it is ``snapshot_max_age_s`` (30 s) old, and ``DEL policy_registry:generation`` makes every
replica reload on its next read. (A reload costs a few milliseconds; a shorter age would make a
review agent asking one question every few seconds pay it on every question.)

Date rules (spec 000 FR-007/FR-008), with two decisions the specs leave open:

- Revisions in ``processing``, ``active`` or ``superseded`` occupy their date range: no two may
  overlap. A new revision starting after an open-ended one closes it (auto-supersession); one that
  ends before an existing open-ended revision starts is a historical insertion; anything else that
  intersects is a ``revision_overlap``.
- A ``failed`` revision occupies nothing, and failing or deleting a revision undoes the supersession
  it caused: the revision it closed is extended over the freed range. A corrupt upload therefore
  never takes the edition in force out of force.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, TypeVar

import redis

from lib.dates import day_before, epoch_days, iso, parse_date
from lib.errors import (
    CannotDeleteSoleRevisionError,
    InvalidDateError,
    InvalidRevisionIdError,
    InvalidSourceError,
    PolicyAlreadyExistsError,
    PolicyNotFoundError,
    RegistryUnavailableError,
    RevisionAlreadyExistsError,
    RevisionNotFoundError,
    RevisionOverlapError,
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
    is_valid_revision_id,
    is_valid_source,
)

logger = logging.getLogger(__name__)

POLICIES_ALL = "policies_all"
GENERATION_KEY = "policy_registry:generation"
_MAX_TRANSACTION_ATTEMPTS = 64
_OCCUPYING = frozenset({RevisionStatus.PROCESSING, RevisionStatus.ACTIVE, RevisionStatus.SUPERSEDED})

T = TypeVar("T")


def policy_key(source: str) -> str:
    return f"policy:{source}"


def revision_hash_key(source: str, revision_id: str) -> str:
    return f"policy_revision:{source}:{revision_id}"


def revisions_key(source: str) -> str:
    return f"policy_revisions:{source}"


def check_source(source: str) -> str:
    if not is_valid_source(source):
        raise InvalidSourceError(
            f"source must be an UPPER_SNAKE_CASE slug such as NPPF or LTN_1_20, got {source!r}", source=source
        )
    return source


def check_revision_id(revision_id: str) -> str:
    if not is_valid_revision_id(revision_id):
        raise InvalidRevisionIdError(
            f"revision_id may hold letters, digits, '_', '-' and '.', got {revision_id!r}", revision_id=revision_id
        )
    return revision_id


def _now() -> datetime:
    return datetime.now(UTC)


def _ranges_intersect(a_from: date, a_to: date | None, b_from: date, b_to: date | None) -> bool:
    return (a_to is None or b_from <= a_to) and (b_to is None or a_from <= b_to)


def _policy_to_hash(policy: Policy) -> dict[str, str]:
    return {
        "source": policy.source,
        "title": policy.title,
        "description": policy.description,
        "category": policy.category.value,
        "created_at": policy.created_at.isoformat(),
        "updated_at": policy.updated_at.isoformat(),
    }


def _revision_to_hash(rev: Revision, superseded_by: str = "") -> dict[str, str]:
    return {
        "revision_id": rev.revision_id,
        "source": rev.source,
        "version_label": rev.version_label,
        "effective_from": rev.effective_from.isoformat(),
        "effective_to": iso(rev.effective_to) or "",
        "status": rev.status.value,
        "file_path": rev.file_path,
        "file_sha256": rev.file_sha256,
        "file_size_bytes": str(rev.file_size_bytes),
        "page_count": str(rev.page_count),
        "chunk_count": str(rev.chunk_count),
        "extraction_method": rev.extraction_method,
        "notes": rev.notes,
        "created_at": rev.created_at.isoformat(),
        "ingested_at": rev.ingested_at.isoformat() if rev.ingested_at else "",
        "error": rev.error,
        "superseded_by": superseded_by,
        "progress_phase": rev.progress_phase,
        "progress_percent": f"{rev.progress_percent:g}",
    }


def _revision_from_hash(data: dict[str, str]) -> Revision:
    return Revision(
        revision_id=data["revision_id"],
        source=data["source"],
        version_label=data.get("version_label", ""),
        effective_from=parse_date(data["effective_from"]),
        effective_to=parse_date(data["effective_to"]) if data.get("effective_to") else None,
        status=RevisionStatus(data["status"]),
        file_path=data.get("file_path", ""),
        file_sha256=data.get("file_sha256", ""),
        file_size_bytes=int(data.get("file_size_bytes") or 0),
        page_count=int(data.get("page_count") or 0),
        chunk_count=int(data.get("chunk_count") or 0),
        extraction_method=data.get("extraction_method", ""),
        notes=data.get("notes", ""),
        created_at=datetime.fromisoformat(data["created_at"]),
        ingested_at=datetime.fromisoformat(data["ingested_at"]) if data.get("ingested_at") else None,
        error=data.get("error", ""),
        progress_phase=data.get("progress_phase", ""),
        progress_percent=float(data.get("progress_percent") or 0.0),
    )


@dataclass
class _PolicyState:
    """Everything a revision write decides on, read under WATCH."""

    source: str
    policy_exists: bool
    revisions: dict[str, Revision]
    superseded_by: dict[str, str]

    def occupying(self, exclude: str | None = None) -> list[Revision]:
        return [r for r in self.revisions.values() if r.status in _OCCUPYING and r.revision_id != exclude]

    def require(self, revision_id: str) -> Revision:
        if not self.policy_exists:
            raise PolicyNotFoundError(f"No policy document found with source '{self.source}'", source=self.source)
        try:
            return self.revisions[revision_id]
        except KeyError:
            raise RevisionNotFoundError(
                f"No revision '{revision_id}' of policy '{self.source}'", source=self.source, revision_id=revision_id
            ) from None


@dataclass(frozen=True)
class RegistrySnapshot:
    """Every registered policy's revisions, newest ``effective_from`` first, as of one registry generation."""

    generation: str
    revisions: Mapping[str, tuple[Revision, ...]]
    """By source slug, sorted; a policy without revisions maps to ``()``."""
    loaded_at: float = 0.0
    """``time.monotonic()`` when it was read."""

    @property
    def sources(self) -> list[str]:
        return list(self.revisions)


def settled_status(rev: Revision, others: Iterable[Revision]) -> RevisionStatus:
    """``superseded`` for a closed revision that a later one follows; ``active`` otherwise."""
    if rev.effective_to is not None and any(o.effective_from > rev.effective_from for o in others):
        return RevisionStatus.SUPERSEDED
    return RevisionStatus.ACTIVE


class PolicyRegistry:
    """CRUD and date rules for policies and revisions. Construct with a ``decode_responses=True`` client."""

    snapshot_max_age_s = 30.0
    """How long a snapshot may be reused while the generation is unchanged: the bound on how late edits made
    behind the registry's back are seen. Writes through this class are seen on the next read."""

    def __init__(self, client: redis.Redis) -> None:
        self._r = client
        self._snapshot: RegistrySnapshot | None = None
        self._snapshot_lock = threading.Lock()

    # -- policies ---------------------------------------------------------------------------------

    def ping(self) -> bool:
        try:
            return bool(self._r.ping())
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise RegistryUnavailableError(f"Redis is not reachable: {exc}") from exc

    def create_policy(self, data: PolicyCreate) -> Policy:
        now = _now()
        policy = Policy(**data.model_dump(), created_at=now, updated_at=now)

        def write(pipe: redis.client.Pipeline, state: _PolicyState) -> Policy:
            if state.policy_exists:
                raise PolicyAlreadyExistsError(
                    f"A policy with source '{data.source}' already exists", source=data.source
                )
            pipe.multi()
            pipe.hset(policy_key(data.source), mapping=_policy_to_hash(policy))
            pipe.sadd(POLICIES_ALL, data.source)
            return policy

        created = self._transact(data.source, write)
        logger.info("registry.policy_created source=%s", data.source)
        return created

    def get_policy(self, source: str) -> Policy:
        check_source(source)
        data = self._call(self._r.hgetall, policy_key(source))
        if not data:
            raise PolicyNotFoundError(f"No policy document found with source '{source}'", source=source)
        return Policy.model_validate(data)

    def policy_exists(self, source: str) -> bool:
        return bool(self._call(self._r.exists, policy_key(check_source(source))))

    def update_policy(self, source: str, data: PolicyUpdate) -> Policy:
        changes = data.model_dump(exclude_unset=True, exclude_none=True)

        def write(pipe: redis.client.Pipeline, state: _PolicyState) -> Policy:
            if not state.policy_exists:
                raise PolicyNotFoundError(f"No policy document found with source '{source}'", source=source)
            current = Policy.model_validate(pipe.hgetall(policy_key(source)))
            updated = current.model_copy(update={**changes, "updated_at": _now()})
            pipe.multi()
            pipe.hset(policy_key(source), mapping=_policy_to_hash(updated))
            return updated

        return self._transact(check_source(source), write)

    def list_sources(self) -> list[str]:
        return sorted(self._call(self._r.smembers, POLICIES_ALL))

    def list_policies(self) -> list[Policy]:
        sources = self.list_sources()
        pipe = self._r.pipeline(transaction=False)
        for source in sources:
            pipe.hgetall(policy_key(source))
        rows = self._call(pipe.execute)
        return [Policy.model_validate(row) for row in rows if row]

    # -- revisions: reads -------------------------------------------------------------------------

    def get_revision(self, source: str, revision_id: str) -> Revision:
        check_source(source)
        check_revision_id(revision_id)
        data = self._call(self._r.hgetall, revision_hash_key(source, revision_id))
        if not data:
            if not self._call(self._r.exists, policy_key(source)):
                raise PolicyNotFoundError(f"No policy document found with source '{source}'", source=source)
            raise RevisionNotFoundError(
                f"No revision '{revision_id}' of policy '{source}'", source=source, revision_id=revision_id
            )
        return _revision_from_hash(data)

    def list_revisions(self, source: str) -> list[Revision]:
        """All revisions of a policy, newest ``effective_from`` first (spec 000 FR-004)."""
        check_source(source)
        ids = self._call(self._r.zrevrange, revisions_key(source), 0, -1)
        return self._load_revisions(source, ids)

    def revisions_by_source(self, sources: Iterable[str]) -> dict[str, list[Revision]]:
        """Every revision of several policies in two round trips (snapshots, search without a date)."""
        sources = list(sources)
        pipe = self._r.pipeline(transaction=False)
        for source in sources:
            pipe.zrevrange(revisions_key(source), 0, -1)
        id_lists = self._call(pipe.execute)
        pipe = self._r.pipeline(transaction=False)
        for source, ids in zip(sources, id_lists, strict=True):
            for rid in ids:
                pipe.hgetall(revision_hash_key(source, rid))
        rows = iter(self._call(pipe.execute))
        result: dict[str, list[Revision]] = {}
        for source, ids in zip(sources, id_lists, strict=True):
            result[source] = [_revision_from_hash(row) for row in (next(rows) for _ in ids) if row]
        return result

    def generation(self) -> str:
        """The token of the registry's current content (one GET); set first if missing (a flushed database)."""
        token = self._call(self._r.get, GENERATION_KEY)
        if token is None:
            self._call(self._r.set, GENERATION_KEY, uuid.uuid4().hex, nx=True)
            token = self._call(self._r.get, GENERATION_KEY)
        return str(token)

    def snapshot(self) -> RegistrySnapshot:
        """Every policy's revisions as of now: one round trip when nothing was written since the last call.

        The generation is read before the data, so a write racing the load leaves the snapshot labelled
        with the older token and the next call reloads; a snapshot is never newer-labelled than its data.
        """
        generation = self.generation()
        if (cached := self._snapshot) is not None and self._is_current(cached, generation):
            return cached
        with self._snapshot_lock:
            if (cached := self._snapshot) is not None and self._is_current(cached, generation):
                return cached
            loaded_at = time.monotonic()
            by_source = self.revisions_by_source(self.list_sources())
            snapshot = RegistrySnapshot(generation, {s: tuple(r) for s, r in by_source.items()}, loaded_at)
            self._snapshot = snapshot
        logger.debug("registry.snapshot_loaded generation=%s policies=%d", generation, len(by_source))
        return snapshot

    def _is_current(self, snapshot: RegistrySnapshot, generation: str) -> bool:
        return snapshot.generation == generation and time.monotonic() - snapshot.loaded_at < self.snapshot_max_age_s

    def get_effective_revision(self, source: str, day: date | str) -> Revision | None:
        """The revision in force on ``day`` (spec 001 PolicyRegistry TS-10/11); see ``lib.policies.temporal``."""
        from lib.policies.temporal import EffectiveDateResolver

        return EffectiveDateResolver(self).resolve_for_policy(source, day).revision

    def _load_revisions(self, source: str, ids: list[str]) -> list[Revision]:
        pipe = self._r.pipeline(transaction=False)
        for rid in ids:
            pipe.hgetall(revision_hash_key(source, rid))
        return [_revision_from_hash(row) for row in self._call(pipe.execute) if row]

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

        def write(pipe: redis.client.Pipeline, state: _PolicyState) -> CreatedRevision:
            if not state.policy_exists:
                raise PolicyNotFoundError(f"No policy document found with source '{source}'", source=source)
            if revision_id in state.revisions:
                raise RevisionAlreadyExistsError(
                    f"Revision '{revision_id}' of policy '{source}' already exists; pass another revision_id",
                    source=source,
                    revision_id=revision_id,
                )
            to_close = self._plan_insertion(state, new, exclude=None)
            pipe.multi()
            superseded = self._queue_supersessions(pipe, state, new, to_close)
            pipe.hset(revision_hash_key(source, revision_id), mapping=_revision_to_hash(new))
            pipe.zadd(revisions_key(source), {revision_id: epoch_days(new.effective_from)})
            return CreatedRevision(revision=new, superseded=superseded)

        created = self._transact(source, write)
        logger.info(
            "registry.revision_created source=%s revision_id=%s from=%s to=%s superseded=%s",
            source,
            revision_id,
            new.effective_from,
            new.effective_to,
            ",".join(r.revision_id for r in created.superseded) or "-",
        )
        return created

    def update_revision(self, source: str, revision_id: str, data: RevisionUpdate) -> Revision:
        """Change label, notes or dates. New dates are re-checked for overlap (no auto-supersession)."""
        check_source(source)
        check_revision_id(revision_id)
        changes = {
            field: value
            for field, value in data.model_dump(exclude_unset=True).items()
            if value is not None or field == "effective_to"
        }

        def write(pipe: redis.client.Pipeline, state: _PolicyState) -> Revision:
            current = state.require(revision_id)
            updated = current.model_copy(update=changes)
            if updated.effective_to is not None and updated.effective_to < updated.effective_from:
                raise InvalidDateError(
                    "effective_to must be on or after effective_from", source=source, revision_id=revision_id
                )
            if updated.status in _OCCUPYING:
                for other in state.occupying(exclude=revision_id):
                    if _ranges_intersect(
                        updated.effective_from, updated.effective_to, other.effective_from, other.effective_to
                    ):
                        raise self._overlap(source, updated, other)
            if updated.resolvable:
                updated.status = settled_status(updated, state.occupying(exclude=revision_id))
            pipe.multi()
            pipe.hset(
                revision_hash_key(source, revision_id),
                mapping=_revision_to_hash(updated, state.superseded_by.get(revision_id, "")),
            )
            pipe.zadd(revisions_key(source), {revision_id: epoch_days(updated.effective_from)})
            return updated

        updated = self._transact(source, write)
        logger.info(
            "registry.revision_updated source=%s revision_id=%s fields=%s", source, revision_id, *[sorted(changes)]
        )
        return updated

    def mark_ingested(
        self,
        source: str,
        revision_id: str,
        *,
        page_count: int,
        chunk_count: int,
        file_size_bytes: int,
        extraction_method: str,
    ) -> Revision:
        """Record a completed ingestion and settle the status to ``active`` or ``superseded``."""

        def write(pipe: redis.client.Pipeline, state: _PolicyState) -> Revision:
            current = state.require(revision_id)
            updated = current.model_copy(
                update={
                    "page_count": page_count,
                    "chunk_count": chunk_count,
                    "file_size_bytes": file_size_bytes,
                    "extraction_method": extraction_method,
                    "ingested_at": _now(),
                    "error": "",
                }
            )
            if current.status == RevisionStatus.FAILED:
                to_close = self._plan_insertion(state, updated, exclude=revision_id)
            else:
                to_close = []
            updated.status = settled_status(updated, state.occupying(exclude=revision_id))
            pipe.multi()
            self._queue_supersessions(pipe, state, updated, to_close)
            pipe.hset(
                revision_hash_key(source, revision_id),
                mapping=_revision_to_hash(updated, state.superseded_by.get(revision_id, "")),
            )
            return updated

        return self._transact(check_source(source), write)

    def mark_failed(self, source: str, revision_id: str, error: str) -> Revision:
        """Record a failed ingestion and give the dates it occupied back to the revision it superseded."""

        def write(pipe: redis.client.Pipeline, state: _PolicyState) -> Revision:
            current = state.require(revision_id)
            failed = current.model_copy(update={"status": RevisionStatus.FAILED, "error": error[:2000]})
            pipe.multi()
            self._queue_release(pipe, state, current)
            pipe.hset(revision_hash_key(source, revision_id), mapping=_revision_to_hash(failed))
            return failed

        failed = self._transact(check_source(source), write)
        logger.warning("registry.revision_failed source=%s revision_id=%s error=%s", source, revision_id, error[:200])
        return failed

    def delete_revision(self, source: str, revision_id: str) -> Revision:
        """Remove a revision's registry entry. Chunks and file are the caller's (``lib.policies.lifecycle``).

        Refuses to remove the last ``active`` revision of a policy (spec 001 TS-09).
        """
        check_source(source)
        check_revision_id(revision_id)

        def write(pipe: redis.client.Pipeline, state: _PolicyState) -> Revision:
            target = state.require(revision_id)
            if target.status == RevisionStatus.ACTIVE:
                reopened = {rid for rid, by in state.superseded_by.items() if by == revision_id}
                others_active = [
                    r
                    for r in state.revisions.values()
                    if r.revision_id != revision_id and (r.status == RevisionStatus.ACTIVE or r.revision_id in reopened)
                ]
                if not others_active:
                    raise CannotDeleteSoleRevisionError(
                        f"Revision '{revision_id}' is the only active revision of '{source}'; "
                        "upload its replacement first",
                        source=source,
                        revision_id=revision_id,
                    )
            pipe.multi()
            if target.status in _OCCUPYING:
                self._queue_release(pipe, state, target)
            pipe.delete(revision_hash_key(source, revision_id))
            pipe.zrem(revisions_key(source), revision_id)
            return target

        deleted = self._transact(source, write)
        logger.info("registry.revision_deleted source=%s revision_id=%s", source, revision_id)
        return deleted

    def set_progress(self, source: str, revision_id: str, phase: str, percent: float) -> bool:
        """Record ingestion progress for status readers; a no-op (False) if the revision is gone.

        A single HSET guarded by EXISTS in one Lua call, so a late progress report can never
        resurrect the hash of a revision deleted meanwhile.
        """
        written = self._call(
            self._set_progress_script, [revision_hash_key(source, revision_id)], [phase, f"{percent:g}"]
        )
        return bool(written)

    def try_lock(self, name: str, ttl_ms: int) -> str | None:
        """Take the lock ``name`` (SET NX PX) for ``ttl_ms``; return its token, or None if someone holds it.

        The expiry frees the lock of a process that died holding it; the token makes sure only the
        holder releases it (``unlock``).
        """
        token = uuid.uuid4().hex
        taken = self._call(self._r.set, name, token, nx=True, px=max(1, ttl_ms))
        return token if taken else None

    def unlock(self, name: str, token: str) -> bool:
        """Release ``name`` if ``token`` still holds it (compare-and-delete in one Lua call)."""
        released = self._call(self._unlock_script, [name], [token])
        return bool(released)

    @property
    def _unlock_script(self) -> Callable[..., Any]:
        return self._r.register_script(
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
        )

    @property
    def _set_progress_script(self) -> Callable[..., Any]:
        return self._r.register_script(
            "if redis.call('EXISTS', KEYS[1]) == 1 then "
            "redis.call('HSET', KEYS[1], 'progress_phase', ARGV[1], 'progress_percent', ARGV[2]) return 1 end "
            "return 0"
        )

    # -- internals --------------------------------------------------------------------------------

    def _plan_insertion(self, state: _PolicyState, new: Revision, exclude: str | None) -> list[Revision]:
        """Revisions that ``new`` auto-supersedes; raise on any true overlap (spec 000 FR-008)."""
        to_close: list[Revision] = []
        for other in state.occupying(exclude=exclude):
            if other.effective_to is None and other.effective_from < new.effective_from:
                to_close.append(other)
            elif _ranges_intersect(new.effective_from, new.effective_to, other.effective_from, other.effective_to):
                raise self._overlap(state.source, new, other)
        return to_close

    def _queue_supersessions(
        self, pipe: redis.client.Pipeline, state: _PolicyState, new: Revision, to_close: list[Revision]
    ) -> list[Revision]:
        closed = []
        for old in to_close:
            updated = old.model_copy(update={"effective_to": day_before(new.effective_from)})
            if updated.status == RevisionStatus.ACTIVE:
                updated.status = RevisionStatus.SUPERSEDED
            pipe.hset(
                revision_hash_key(state.source, old.revision_id), mapping=_revision_to_hash(updated, new.revision_id)
            )
            closed.append(updated)
        return closed

    def _queue_release(self, pipe: redis.client.Pipeline, state: _PolicyState, leaving: Revision) -> None:
        """Extend the revision ``leaving`` had closed over the range ``leaving`` frees."""
        for rid, by in state.superseded_by.items():
            prior = state.revisions.get(rid)
            if by != leaving.revision_id or prior is None or prior.effective_to != day_before(leaving.effective_from):
                continue
            reopened = prior.model_copy(update={"effective_to": leaving.effective_to})
            if reopened.resolvable:
                remaining = [r for r in state.occupying(exclude=rid) if r.revision_id != leaving.revision_id]
                reopened.status = settled_status(reopened, remaining)
            pipe.hset(
                revision_hash_key(state.source, rid),
                mapping=_revision_to_hash(reopened, state.superseded_by.get(leaving.revision_id, "")),
            )
            logger.info(
                "registry.supersession_released source=%s revision_id=%s effective_to=%s",
                state.source,
                rid,
                reopened.effective_to,
            )

    @staticmethod
    def _overlap(source: str, new: Revision, other: Revision) -> RevisionOverlapError:
        return RevisionOverlapError(
            f"Dates {new.effective_from}..{iso(new.effective_to) or 'open'} overlap revision "
            f"'{other.revision_id}' ({other.effective_from}..{iso(other.effective_to) or 'open'}) of '{source}'",
            source=source,
            revision_id=new.revision_id,
            conflicting_revision_id=other.revision_id,
        )

    def _transact(self, source: str, write: Callable[[redis.client.Pipeline, _PolicyState], T]) -> T:
        """Run ``write`` under WATCH of the policy's keys, retrying when another writer got in first.

        ``write`` reads through the pipeline (immediate mode), calls ``pipe.multi()`` and queues its
        writes; anything it raises before EXEC leaves Redis untouched. The new generation token is
        queued after its writes, so readers' snapshots see the change with the data.
        """
        zkey, pkey = revisions_key(source), policy_key(source)
        try:
            with self._r.pipeline(transaction=True) as pipe:
                for _ in range(_MAX_TRANSACTION_ATTEMPTS):
                    try:
                        pipe.watch(pkey, zkey)
                        ids = pipe.zrange(zkey, 0, -1)
                        if ids:
                            pipe.watch(*(revision_hash_key(source, rid) for rid in ids))
                        revisions: dict[str, Revision] = {}
                        superseded_by: dict[str, str] = {}
                        for rid in ids:
                            row = pipe.hgetall(revision_hash_key(source, rid))
                            if row:
                                revisions[rid] = _revision_from_hash(row)
                                if row.get("superseded_by"):
                                    superseded_by[rid] = row["superseded_by"]
                        state = _PolicyState(source, bool(pipe.exists(pkey)), revisions, superseded_by)
                        result = write(pipe, state)
                        pipe.set(GENERATION_KEY, uuid.uuid4().hex)
                        pipe.execute()
                        return result
                    except redis.WatchError:
                        continue
                    finally:
                        pipe.reset()
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise RegistryUnavailableError(f"Redis is not reachable: {exc}") from exc
        raise RegistryUnavailableError(f"Too much contention writing policy '{source}'; try again")

    @staticmethod
    def _call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise RegistryUnavailableError(f"Redis is not reachable: {exc}") from exc
