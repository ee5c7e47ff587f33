"""The date rules of policy revisions (spec 000 FR-007/FR-008) as pure functions over revision records.

Nothing here reads or writes a store. The registry reads one policy's ``Timeline`` under WATCH, asks a
``plan_*`` function what a write changes, and stores the returned ``Plan`` in one MULTI/EXEC; the same
functions run in memory in the rules' property test, thousands of times a second.

The rules, with two decisions the specs leave open:

- Revisions in ``processing``, ``active`` or ``superseded`` occupy their date range: no two may
  overlap. A new revision starting after an open-ended one closes it the day before it starts and
  marks it ``superseded`` (auto-supersession); one that ends before an existing open-ended revision
  starts is a historical insertion; anything else that intersects is a ``revision_overlap``.
- A ``failed`` revision occupies nothing, and failing or deleting a revision undoes the supersession it
  caused: the revision it closed is extended over the freed range. A corrupt upload therefore never
  takes the edition in force out of force.
- The last ``active`` revision of a policy cannot be deleted (spec 001 TS-09).

Resolution: ranges of occupying revisions never overlap, so for a day at most one of them covers it:
among the revisions that started on or before the day, the latest non-failed one. Only ``active`` and
``superseded`` revisions are returned; a day covered by a revision still in ``processing`` has none yet.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date

from lib.dates import day_before, iso
from lib.errors import (
    CannotDeleteSoleRevisionError,
    InvalidDateError,
    RevisionAlreadyExistsError,
    RevisionNotFoundError,
    RevisionOverlapError,
)
from lib.policies.models import Resolution, Revision, RevisionStatus

OCCUPYING = frozenset({RevisionStatus.PROCESSING, RevisionStatus.ACTIVE, RevisionStatus.SUPERSEDED})
"""Statuses whose date range no other revision may share."""

REASON_NO_REVISIONS = "no_revisions"
REASON_BEFORE_FIRST = "date_before_first_revision"
REASON_IN_GAP = "date_in_gap"


@dataclass(frozen=True)
class RevisionRecord:
    """A revision as the registry stores it: the model and the id of the revision whose arrival closed it
    (``""`` if none), which is what a release gives the freed range back to."""

    revision: Revision
    superseded_by: str = ""


@dataclass(frozen=True)
class Plan:
    """What one write changes in a policy's timeline: whole records to store and revision ids to remove."""

    revision: Revision
    """The revision the write is about, as it is afterwards (as it was, for a deletion)."""
    store: tuple[RevisionRecord, ...] = ()
    remove: tuple[str, ...] = ()
    superseded: tuple[Revision, ...] = ()
    """Revisions this write closed (auto-supersession), as stored."""
    released: tuple[Revision, ...] = ()
    """Revisions this write extended over the range it freed, as stored."""


@dataclass(frozen=True)
class Timeline:
    """Every revision of one policy, by revision id, as read in one transaction."""

    source: str
    records: Mapping[str, RevisionRecord]

    @classmethod
    def of(cls, source: str, records: Iterable[RevisionRecord]) -> Timeline:
        return cls(source, {r.revision.revision_id: r for r in records})

    def occupying(self, *exclude: str) -> list[Revision]:
        return [
            r.revision
            for r in self.records.values()
            if r.revision.status in OCCUPYING and r.revision.revision_id not in exclude
        ]

    def require(self, revision_id: str) -> Revision:
        try:
            return self.records[revision_id].revision
        except KeyError:
            raise RevisionNotFoundError(
                f"No revision '{revision_id}' of policy '{self.source}'", source=self.source, revision_id=revision_id
            ) from None

    def superseded_by(self, revision_id: str) -> str:
        record = self.records.get(revision_id)
        return record.superseded_by if record else ""

    def newest_first(self) -> list[Revision]:
        """Revisions by ``effective_from``, latest first: the order ``resolve_revision`` expects."""
        return sorted((r.revision for r in self.records.values()), key=lambda r: r.effective_from, reverse=True)

    def after(self, plan: Plan) -> Timeline:
        """This timeline with ``plan`` applied: what the registry holds once the plan is stored."""
        records = {rid: r for rid, r in self.records.items() if rid not in plan.remove}
        records.update((r.revision.revision_id, r) for r in plan.store)
        return Timeline(self.source, records)


def settled_status(rev: Revision, others: Iterable[Revision]) -> RevisionStatus:
    """``superseded`` for a closed revision that a later one follows; ``active`` otherwise."""
    if rev.effective_to is not None and any(o.effective_from > rev.effective_from for o in others):
        return RevisionStatus.SUPERSEDED
    return RevisionStatus.ACTIVE


def plan_creation(timeline: Timeline, new: Revision) -> Plan:
    """Insert ``new``, closing any open-ended revision that started before it; refuse an overlap."""
    if new.revision_id in timeline.records:
        raise RevisionAlreadyExistsError(
            f"Revision '{new.revision_id}' of policy '{timeline.source}' already exists; pass another revision_id",
            source=timeline.source,
            revision_id=new.revision_id,
        )
    closed = _supersessions(timeline, new)
    return Plan(
        revision=new,
        store=(*(RevisionRecord(c, new.revision_id) for c in closed), RevisionRecord(new)),
        superseded=tuple(closed),
    )


def plan_edit(timeline: Timeline, edited: Revision) -> Plan:
    """Store ``edited`` (a stored revision with new label, notes or dates): new dates are re-checked for
    overlap, without auto-supersession, and a resolvable revision's status is settled again."""
    if edited.effective_to is not None and edited.effective_to < edited.effective_from:
        raise InvalidDateError(
            "effective_to must be on or after effective_from", source=timeline.source, revision_id=edited.revision_id
        )
    others = timeline.occupying(edited.revision_id)
    if edited.status in OCCUPYING:
        for other in others:
            if _intersect(edited, other):
                raise _overlap(timeline.source, edited, other)
    if edited.resolvable:
        edited = edited.model_copy(update={"status": settled_status(edited, others)})
    return Plan(revision=edited, store=(RevisionRecord(edited, timeline.superseded_by(edited.revision_id)),))


def plan_ingested(timeline: Timeline, ingested: Revision) -> Plan:
    """Settle ``ingested`` (a stored revision with its ingestion figures) to ``active`` or ``superseded``.
    A revision that had failed occupied nothing: it is inserted again, with auto-supersession."""
    rid = ingested.revision_id
    was_failed = timeline.require(rid).status == RevisionStatus.FAILED
    closed = _supersessions(timeline, ingested, exclude=rid) if was_failed else []
    settled = ingested.model_copy(update={"status": settled_status(ingested, timeline.occupying(rid))})
    return Plan(
        revision=settled,
        store=(*(RevisionRecord(c, rid) for c in closed), RevisionRecord(settled, timeline.superseded_by(rid))),
        superseded=tuple(closed),
    )


def plan_failure(timeline: Timeline, revision_id: str, error: str) -> Plan:
    """Mark a revision ``failed`` and give the dates it occupied back to the revision it had closed."""
    current = timeline.require(revision_id)
    failed = current.model_copy(update={"status": RevisionStatus.FAILED, "error": error})
    released = _release(timeline, current)
    return Plan(
        revision=failed,
        store=(*released, RevisionRecord(failed)),
        released=tuple(r.revision for r in released),
    )


def plan_deletion(timeline: Timeline, revision_id: str) -> Plan:
    """Remove a revision, giving its dates back to the revision it had closed; never the last ``active`` one."""
    target = timeline.require(revision_id)
    if target.status == RevisionStatus.ACTIVE:
        reopened = {rid for rid, r in timeline.records.items() if r.superseded_by == revision_id}
        if not any(
            rid != revision_id and (r.revision.status == RevisionStatus.ACTIVE or rid in reopened)
            for rid, r in timeline.records.items()
        ):
            raise CannotDeleteSoleRevisionError(
                f"Revision '{revision_id}' is the only active revision of '{timeline.source}'; "
                "upload its replacement first",
                source=timeline.source,
                revision_id=revision_id,
            )
    released = _release(timeline, target) if target.status in OCCUPYING else []
    return Plan(
        revision=target, store=tuple(released), remove=(revision_id,), released=tuple(r.revision for r in released)
    )


def resolve_revision(source: str, revisions: Sequence[Revision], day: date) -> Resolution:
    """The revision of ``source`` in force on ``day``, from all its ``revisions`` newest ``effective_from``
    first; when there is none, the reason (no revisions, before the first, in a gap)."""
    for rev in revisions:
        if rev.effective_from > day or rev.status == RevisionStatus.FAILED:
            continue
        if rev.resolvable and rev.covers(day):
            return Resolution(source=source, effective_date=day, revision=rev)
        break
    return Resolution(source=source, effective_date=day, reason=_reason(revisions, day))


def _reason(revisions: Sequence[Revision], day: date) -> str:
    resolvable = [r for r in revisions if r.resolvable]
    if not resolvable:
        return REASON_NO_REVISIONS
    if day < min(r.effective_from for r in resolvable):
        return REASON_BEFORE_FIRST
    return REASON_IN_GAP


def _supersessions(timeline: Timeline, new: Revision, exclude: str = "") -> list[Revision]:
    """The revisions ``new`` closes, as closed; raise on any true overlap (spec 000 FR-008)."""
    closed: list[Revision] = []
    for other in timeline.occupying(exclude):
        if other.effective_to is None and other.effective_from < new.effective_from:
            status = RevisionStatus.SUPERSEDED if other.status == RevisionStatus.ACTIVE else other.status
            closed.append(other.model_copy(update={"effective_to": day_before(new.effective_from), "status": status}))
        elif _intersect(new, other):
            raise _overlap(timeline.source, new, other)
    return closed


def _release(timeline: Timeline, leaving: Revision) -> list[RevisionRecord]:
    """The revision ``leaving`` had closed, extended over the range ``leaving`` frees."""
    released: list[RevisionRecord] = []
    for rid, record in timeline.records.items():
        prior = record.revision
        if record.superseded_by != leaving.revision_id or prior.effective_to != day_before(leaving.effective_from):
            continue
        reopened = prior.model_copy(update={"effective_to": leaving.effective_to})
        if reopened.resolvable:
            status = settled_status(reopened, timeline.occupying(rid, leaving.revision_id))
            reopened = reopened.model_copy(update={"status": status})
        released.append(RevisionRecord(reopened, timeline.superseded_by(leaving.revision_id)))
    return released


def _intersect(a: Revision, b: Revision) -> bool:
    return (a.effective_to is None or b.effective_from <= a.effective_to) and (
        b.effective_to is None or a.effective_from <= b.effective_to
    )


def _overlap(source: str, new: Revision, other: Revision) -> RevisionOverlapError:
    return RevisionOverlapError(
        f"Dates {new.effective_from}..{iso(new.effective_to) or 'open'} overlap revision "
        f"'{other.revision_id}' ({other.effective_from}..{iso(other.effective_to) or 'open'}) of '{source}'",
        source=source,
        revision_id=new.revision_id,
        conflicting_revision_id=other.revision_id,
    )
