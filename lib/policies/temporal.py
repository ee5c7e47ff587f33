"""The date rules of policy revisions (spec 000 FR-007/FR-008) as pure functions over revision records.

Nothing here reads or writes a store. The registry reads one policy's ``Timeline`` under WATCH, asks a
``plan_*`` function what a write changes, and stores the returned ``Plan`` in one MULTI/EXEC; the same
functions run in memory in the rules' property test, thousands of times a second.

Every write ends in ``_settle``: the dates nobody gave are recomputed from the policy's revisions in order
of ``effective_from``. A revision's ``effective_to`` is either the user's (given at upload or by an edit,
``RevisionRecord.end_set``) or derived: the day before the next occupying revision starts, open when none
follows (auto-supersession, spec 000 FR-007). Moving, failing or deleting a revision therefore moves the
end of the one before it too, so no write leaves days that nothing covers, except after an end a user set.

The rules, with decisions the specs leave open (docs/decisions/0047-revision-dates-recomputed.md):

- Revisions in ``processing``, ``active`` or ``superseded`` occupy their date range; ``failed`` ones occupy
  nothing. Two occupying revisions may not start on the same day, and an end a user set must fall before
  the next revision's start (``revision_overlap``).
- A revision created or edited with no end ("in force now") must start after every other one; a
  historical insertion gives its end (spec 000 FR-008).
- A write may shorten or lengthen a derived range only by moving, adding or removing that range's
  successor, or by following an open-ended revision: a new revision never cuts into the middle of a
  revision that a later one has already closed (a "true overlap with a bounded revision").
- The last ``active`` revision of a policy cannot be deleted (spec 001 TS-09).

Resolution: ranges of occupying revisions never overlap, so for a day at most one of them covers it:
among the revisions that started on or before the day, the latest non-failed one. Only ``active`` and
``superseded`` revisions are returned; a day covered by a revision still in ``processing`` has none yet.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

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
    """A revision as the registry stores it, and whether its ``effective_to`` is the user's (``end_set``)
    or derived from the next revision's start."""

    revision: Revision
    end_set: bool


@dataclass(frozen=True)
class Plan:
    """What one write changes in a policy's timeline: whole records to store and revision ids to remove."""

    revision: Revision
    """The revision the write is about, as it is afterwards (as it was, for a deletion)."""
    store: tuple[RevisionRecord, ...] = ()
    remove: tuple[str, ...] = ()
    superseded: tuple[Revision, ...] = ()
    """Other revisions this write closed (auto-supersession), as stored."""
    released: tuple[Revision, ...] = ()
    """Other revisions this write extended over days it freed, as stored."""


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

    def ordered(self) -> list[RevisionRecord]:
        """Occupying records by ``effective_from`` (ties by id, which the rules refuse anyway)."""
        occupying = (r for r in self.records.values() if r.revision.status in OCCUPYING)
        return sorted(occupying, key=lambda r: (r.revision.effective_from, r.revision.revision_id))

    def successors(self) -> dict[str, str | None]:
        """For each occupying revision, the id of the next one by ``effective_from`` (None for the last)."""
        ids = [r.revision.revision_id for r in self.ordered()]
        return {rid: ids[i + 1] if i + 1 < len(ids) else None for i, rid in enumerate(ids)}

    def require(self, revision_id: str) -> Revision:
        try:
            return self.records[revision_id].revision
        except KeyError:
            raise RevisionNotFoundError(
                f"No revision '{revision_id}' of policy '{self.source}'", source=self.source, revision_id=revision_id
            ) from None

    def record(self, revision_id: str) -> RevisionRecord:
        self.require(revision_id)
        return self.records[revision_id]

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
    """Insert ``new``, closing the open-ended revision that started before it; refuse an overlap."""
    if new.revision_id in timeline.records:
        raise RevisionAlreadyExistsError(
            f"Revision '{new.revision_id}' of policy '{timeline.source}' already exists; pass another revision_id",
            source=timeline.source,
            revision_id=new.revision_id,
        )
    return _settle(timeline, RevisionRecord(new, new.effective_to is not None), open_claim=new.effective_to is None)


def plan_edit(timeline: Timeline, revision_id: str, changes: Mapping[str, Any]) -> Plan:
    """Apply ``changes`` (label, notes, dates) to a stored revision. ``effective_to`` among them sets the end
    (a date) or claims the revision is in force now (None); the other revisions' derived ends follow."""
    record = timeline.record(revision_id)
    edited = record.revision.model_copy(update=dict(changes))
    end_set = edited.effective_to is not None if "effective_to" in changes else record.end_set
    if not end_set:
        edited = edited.model_copy(update={"effective_to": None})
    return _settle(timeline, RevisionRecord(edited, end_set), open_claim="effective_to" in changes and not end_set)


def plan_ingested(timeline: Timeline, ingested: Revision) -> Plan:
    """Settle ``ingested`` (a stored revision with its ingestion figures) to ``active`` or ``superseded``.
    A revision that had failed occupied nothing: it takes its dates back, under the same rules as a new one."""
    record = timeline.record(ingested.revision_id)
    settled = ingested.model_copy(update={"status": RevisionStatus.ACTIVE})
    return _settle(timeline, RevisionRecord(settled, record.end_set))


def plan_failure(timeline: Timeline, revision_id: str, error: str) -> Plan:
    """Mark a revision ``failed``: it occupies nothing, so the revision before it covers its days again."""
    record = timeline.record(revision_id)
    failed = record.revision.model_copy(update={"status": RevisionStatus.FAILED, "error": error})
    return _settle(timeline, RevisionRecord(failed, record.end_set), checked=False)


def plan_deletion(timeline: Timeline, revision_id: str) -> Plan:
    """Remove a revision, the one before it covering its days again; never the last ``active`` one."""
    target = timeline.require(revision_id)
    plan = _settle(timeline, None, remove=revision_id, checked=False)
    after = timeline.after(plan)
    if target.status == RevisionStatus.ACTIVE and not any(
        r.revision.status == RevisionStatus.ACTIVE for r in after.records.values()
    ):
        raise CannotDeleteSoleRevisionError(
            f"Revision '{revision_id}' is the only active revision of '{timeline.source}'; "
            "upload its replacement first",
            source=timeline.source,
            revision_id=revision_id,
        )
    return Plan(revision=target, store=plan.store, remove=plan.remove, released=plan.released)


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


def _settle(
    before: Timeline,
    subject: RevisionRecord | None,
    *,
    remove: str = "",
    open_claim: bool = False,
    checked: bool = True,
) -> Plan:
    """The plan that stores ``subject`` (or removes ``remove``) with every derived end and every status
    recomputed from the revisions in order; with ``checked``, refuse what breaks the rules above."""
    records = {rid: r for rid, r in before.records.items() if rid != remove}
    if subject is not None:
        records[subject.revision.revision_id] = subject
    draft = Timeline(before.source, records)
    if checked and subject is not None:
        _check(before, draft, subject, open_claim)
    after = _recomputed(draft)
    changed = tuple(r for rid, r in after.records.items() if before.records.get(rid) != r)
    others = [r.revision for r in changed if subject is None or r.revision.revision_id != subject.revision.revision_id]
    old_end = {rid: r.revision.effective_to for rid, r in before.records.items()}
    superseded = tuple(r for r in others if old_end.get(r.revision_id) is None and r.effective_to is not None)
    released = tuple(r for r in others if _later(r.effective_to, old_end.get(r.revision_id)))
    revision = after.records[subject.revision.revision_id].revision if subject else before.require(remove)
    return Plan(
        revision=revision, store=changed, remove=(remove,) if remove else (), superseded=superseded, released=released
    )


def _recomputed(timeline: Timeline) -> Timeline:
    """Every derived end set from the next occupying revision's start, every resolvable status settled."""
    ordered = timeline.ordered()
    occupying = [r.revision for r in ordered]
    records = dict(timeline.records)
    for rid, record in timeline.records.items():
        if record.revision.status not in OCCUPYING and not record.end_set and record.revision.effective_to:
            records[rid] = RevisionRecord(record.revision.model_copy(update={"effective_to": None}), False)
    for i, record in enumerate(ordered):
        rev = record.revision
        end = rev.effective_to
        if not record.end_set:
            end = day_before(ordered[i + 1].revision.effective_from) if i + 1 < len(ordered) else None
        status = rev.status
        if rev.resolvable:
            status = settled_status(rev.model_copy(update={"effective_to": end}), occupying)
        if (end, status) != (rev.effective_to, rev.status):
            rev = rev.model_copy(update={"effective_to": end, "status": status})
        records[rev.revision_id] = RevisionRecord(rev, record.end_set)
    return Timeline(timeline.source, records)


def _check(before: Timeline, draft: Timeline, subject: RevisionRecord, open_claim: bool) -> None:
    """Refuse ``subject`` in ``draft`` when it breaks a date rule (``InvalidDateError``, ``RevisionOverlapError``)."""
    new = subject.revision
    if subject.end_set and new.effective_to is not None and new.effective_to < new.effective_from:
        raise InvalidDateError(
            "effective_to must be on or after effective_from", source=draft.source, revision_id=new.revision_id
        )
    if new.status not in OCCUPYING:
        return
    ordered = draft.ordered()
    for a, b in itertools.pairwise(ordered):
        clash = a.revision.effective_from == b.revision.effective_from or (
            a.end_set and a.revision.effective_to is not None and a.revision.effective_to >= b.revision.effective_from
        )
        later_than_open = open_claim and a.revision.revision_id == new.revision_id
        if clash or later_than_open:
            other = b.revision if a.revision.revision_id == new.revision_id else a.revision
            raise _overlap(draft.source, new, other)
    was, now = before.successors(), draft.successors()
    for rid, following in was.items():
        record = draft.records.get(rid)
        if rid == new.revision_id or record is None or record.end_set or rid not in now:
            continue
        if following not in (None, new.revision_id) and now[rid] != following:
            raise _overlap(draft.source, new, record.revision)


def _later(end: date | None, old: date | None) -> bool:
    """Whether ``end`` reaches further than ``old`` (None being open, the furthest)."""
    if end == old:
        return False
    return end is None or (old is not None and end > old)


def _overlap(source: str, new: Revision, other: Revision) -> RevisionOverlapError:
    return RevisionOverlapError(
        f"Dates {new.effective_from}..{iso(new.effective_to) or 'open'} overlap revision "
        f"'{other.revision_id}' ({other.effective_from}..{iso(other.effective_to) or 'open'}) of '{source}'",
        source=source,
        revision_id=new.revision_id,
        conflicting_revision_id=other.revision_id,
    )
