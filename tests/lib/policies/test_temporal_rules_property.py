"""Property: the pure date rules, driven by random operation sequences with no store behind them, never
put two revisions over one day and always resolve a day as a brute-force oracle does.

The operations are the registry's writes as the flows call them: creations (open-ended, bounded,
auto-superseding, historical insertions, overlaps that must be refused), ingestion of a ``processing``
revision, re-ingestion of a ``failed`` or live one (the ingest and reindex flows), failure of a
``processing`` or ``failed`` one (the ingest flow's clean-up), date edits (valid or not) and deletions.
Each step's plan is applied in memory (``Timeline.after``) and checked after every step, thousands of
sequences per run; ``test_temporal_property.py`` checks the same oracle end to end through Redis and Chroma.

Besides agreeing with the oracle, every state must leave no day uncovered that the user did not leave
uncovered: from the first occupying revision's start to the last one's end, each day is covered by exactly
one occupying revision, unless it falls after an end date the user set (spec 000 FR-007 allows such gaps).
"""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime, timedelta

from hypothesis import example, given, settings
from hypothesis import strategies as st

from lib.errors import (
    CannotDeleteSoleRevisionError,
    InvalidDateError,
    RevisionAlreadyExistsError,
    RevisionOverlapError,
)
from lib.policies.models import Revision, RevisionStatus
from lib.policies.temporal import (
    OCCUPYING,
    REASON_BEFORE_FIRST,
    REASON_IN_GAP,
    REASON_NO_REVISIONS,
    Plan,
    Timeline,
    plan_creation,
    plan_deletion,
    plan_edit,
    plan_failure,
    plan_ingested,
    resolve_revision,
)

BASE = date(2024, 1, 1)
SOURCE = "NPPF"
CREATED = datetime(2024, 1, 1, tzinfo=UTC)
REFUSED = (RevisionOverlapError, CannotDeleteSoleRevisionError, RevisionAlreadyExistsError, InvalidDateError)
LIVE = (RevisionStatus.ACTIVE, RevisionStatus.SUPERSEDED)

KINDS = ["create", "create", "ingest", "fail", "edit_to", "edit_from", "delete"]
"""Creations twice as likely as each other operation: more revisions to supersede and release."""
Op = tuple[str, int, int, int | None]
"""(kind, which created revision, a day after ``BASE``, a span in days or None). A creation runs from the
day for the span (open-ended for None); ``edit_to`` moves ``effective_to`` to the day (re-opens for None);
``edit_from`` moves ``effective_from`` to the day."""


def oracle(revisions: list[Revision], day: date) -> tuple[str | None, str | None]:
    """Which resolvable revision covers the day, else why none does; no cleverness."""
    covering = [
        r.revision_id
        for r in revisions
        if r.status in LIVE and r.effective_from <= day and (r.effective_to is None or day <= r.effective_to)
    ]
    assert len(covering) <= 1, f"two revisions in force on {day}: {covering}"
    if covering:
        return covering[0], None
    live = [r for r in revisions if r.status in LIVE]
    if not live:
        return None, REASON_NO_REVISIONS
    if all(day < r.effective_from for r in live):
        return None, REASON_BEFORE_FIRST
    return None, REASON_IN_GAP


def days_of(revisions: list[Revision]) -> list[date]:
    """Every day where an answer can change: each edge, the days either side, and one outside the lot."""
    days = {BASE - timedelta(days=1), BASE + timedelta(days=200)}
    for rev in revisions:
        for edge in (rev.effective_from, rev.effective_to):
            if edge is not None:
                days.update({edge - timedelta(days=1), edge, edge + timedelta(days=1)})
    return sorted(days)


def plan_for(timeline: Timeline, op: Op, created: list[str]) -> Plan | None:
    """The plan the registry would store for ``op``, or None where the flows would not call it."""
    kind, target, day, span = op
    if kind == "create":
        frm = BASE + timedelta(days=day)
        new = Revision(
            revision_id=f"r{len(created)}",
            source=SOURCE,
            version_label="x",
            effective_from=frm,
            effective_to=None if span is None else frm + timedelta(days=span),
            status=RevisionStatus.PROCESSING,
            created_at=CREATED,
        )
        created.append(new.revision_id)
        return plan_creation(timeline, new)
    if not created or (rid := created[target % len(created)]) not in timeline.records:
        return None
    rev = timeline.require(rid)
    if kind == "ingest":
        return plan_ingested(timeline, rev.model_copy(update={"chunk_count": 2, "error": ""}))
    if kind == "fail" and rev.status in (RevisionStatus.PROCESSING, RevisionStatus.FAILED):
        return plan_failure(timeline, rid, "extraction_failed")
    if kind == "edit_to":
        to = None if span is None else BASE + timedelta(days=day)
        return plan_edit(timeline, rid, {"effective_to": to})
    if kind == "edit_from":
        return plan_edit(timeline, rid, {"effective_from": BASE + timedelta(days=day)})
    if kind == "delete":
        return plan_deletion(timeline, rid)
    return None


def check(timeline: Timeline) -> None:
    revisions = list(timeline.records.values())
    occupying = [r.revision for r in revisions if r.revision.status in OCCUPYING]
    for a, b in itertools.combinations(occupying, 2):
        assert (a.effective_to is not None and a.effective_to < b.effective_from) or (
            b.effective_to is not None and b.effective_to < a.effective_from
        ), f"{a.revision_id} and {b.revision_id} occupy the same days"
    for rec in revisions:
        rev = rec.revision
        assert rev.effective_to is None or rev.effective_from <= rev.effective_to, rev.revision_id
    newest_first = timeline.newest_first()
    for day in days_of(newest_first):
        resolution = resolve_revision(SOURCE, newest_first, day)
        got = (resolution.revision.revision_id if resolution.revision else None, resolution.reason)
        assert got == oracle(newest_first, day), day
        check_covered(timeline, day)


def check_covered(timeline: Timeline, day: date) -> None:
    """Exactly one occupying revision covers ``day`` if it lies between the first start and the last end,
    unless the revision that started last before it has an end the user set, and the day is after it."""
    ordered = [r for r in timeline.records.values() if r.revision.status in OCCUPYING]
    started = sorted((r for r in ordered if r.revision.effective_from <= day), key=lambda r: r.revision.effective_from)
    if not started:
        return
    latest = started[-1]
    if latest.end_set and latest.revision.effective_to is not None and day > latest.revision.effective_to:
        return  # a gap the user made
    covering = [r.revision.revision_id for r in ordered if r.revision.covers(day)]
    assert len(covering) == 1, f"{day} is covered by {covering or 'nothing'}"


operations = st.lists(
    st.tuples(
        st.sampled_from(KINDS),
        st.integers(0, 7),
        st.integers(0, 90),
        st.one_of(st.none(), st.integers(0, 30)),
    ),
    min_size=1,
    max_size=20,
)


@settings(max_examples=2000, deadline=None)
@given(ops=operations)
@example(ops=[("create", 0, 0, None), ("ingest", 0, 0, None), ("create", 0, 10, None), ("fail", 1, 0, None)])
@example(
    ops=[
        ("create", 0, 0, None),
        ("ingest", 0, 0, None),
        ("create", 0, 10, None),
        ("ingest", 1, 0, None),
        ("delete", 1, 0, None),
    ]
)
@example(
    ops=[
        ("create", 0, 5, None),
        ("ingest", 0, 0, None),
        ("edit_from", 0, 1, None),
        ("edit_to", 0, 9, 0),
        ("edit_to", 0, 0, None),
    ]
)
@example(
    ops=[
        ("create", 0, 0, None),
        ("ingest", 0, 0, None),
        ("create", 0, 10, None),
        ("fail", 1, 0, None),
        ("ingest", 1, 0, None),
    ]
)
@example(  # issue 46: the newer revision moved later, then deleted; the older one's end must follow both times
    ops=[
        ("create", 0, 0, None),
        ("ingest", 0, 0, None),
        ("create", 0, 10, None),
        ("ingest", 1, 0, None),
        ("edit_from", 1, 40, None),
        ("delete", 1, 0, None),
    ]
)
def test_the_pure_rules_resolve_every_day_as_the_oracle_does(ops: list[Op]) -> None:
    timeline = Timeline(SOURCE, {})
    created: list[str] = []
    for op in ops:
        try:
            plan = plan_for(timeline, op, created)
        except REFUSED:
            continue
        if plan is not None:
            timeline = timeline.after(plan)
            check(timeline)
