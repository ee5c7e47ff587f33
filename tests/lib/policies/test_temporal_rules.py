"""The pure date rules one case at a time: what each plan stores, closes, releases or refuses (no Redis)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from lib.errors import (
    CannotDeleteSoleRevisionError,
    InvalidDateError,
    RevisionAlreadyExistsError,
    RevisionNotFoundError,
    RevisionOverlapError,
)
from lib.policies.models import Revision, RevisionStatus
from lib.policies.temporal import (
    REASON_BEFORE_FIRST,
    REASON_IN_GAP,
    REASON_NO_REVISIONS,
    RevisionRecord,
    Timeline,
    plan_creation,
    plan_deletion,
    plan_edit,
    plan_failure,
    plan_ingested,
    resolve_revision,
)

ACTIVE, SUPERSEDED, PROCESSING, FAILED = (
    RevisionStatus.ACTIVE,
    RevisionStatus.SUPERSEDED,
    RevisionStatus.PROCESSING,
    RevisionStatus.FAILED,
)


def rev(rid: str, start: str, end: str | None = None, status: RevisionStatus = ACTIVE) -> Revision:
    return Revision(
        revision_id=rid,
        source="NPPF",
        version_label=rid,
        effective_from=date.fromisoformat(start),
        effective_to=date.fromisoformat(end) if end else None,
        status=status,
        created_at=datetime(2024, 1, 1, tzinfo=UTC),
    )


def timeline(*records: Revision | RevisionRecord) -> Timeline:
    """Revisions with an end date are taken as ended by the user; pass a ``RevisionRecord`` to say otherwise."""
    return Timeline.of(
        "NPPF", (r if isinstance(r, RevisionRecord) else RevisionRecord(r, r.effective_to is not None) for r in records)
    )


def derived(revision: Revision) -> RevisionRecord:
    """A revision whose end follows the next revision's start (auto-supersession)."""
    return RevisionRecord(revision, end_set=False)


def test_a_later_revision_closes_the_open_ended_one_the_day_before_and_the_end_stays_derived() -> None:
    plan = plan_creation(timeline(rev("A", "2020-07-27")), rev("B", "2025-01-01", status=PROCESSING))
    closed = timeline(rev("A", "2020-07-27")).after(plan).records["A"]
    assert (closed.revision.effective_to, closed.revision.status, closed.end_set) == (
        date(2024, 12, 31),
        SUPERSEDED,
        False,
    )
    assert [r.revision_id for r in plan.superseded] == ["A"]


def test_a_processing_revision_closed_by_a_later_one_stays_processing() -> None:
    plan = plan_creation(timeline(rev("A", "2020-07-27", status=PROCESSING)), rev("B", "2025-01-01"))
    assert plan.superseded[0].status == PROCESSING


def test_a_historical_insertion_leaves_the_open_ended_revision_alone() -> None:
    plan = plan_creation(timeline(rev("B", "2024-12-12")), rev("A", "2023-09-05", "2024-12-11", status=PROCESSING))
    assert [r.revision.revision_id for r in plan.store] == ["A"] and plan.superseded == ()


@pytest.mark.parametrize(
    ("start", "end"), [("2023-09-05", "2024-12-12"), ("2023-09-05", None), ("2024-12-12", None), ("2024-03-01", None)]
)
def test_anything_else_that_intersects_is_an_overlap(start: str, end: str | None) -> None:
    existing = timeline(rev("A", "2024-01-01", "2024-06-30"), rev("B", "2024-12-12"))
    with pytest.raises(RevisionOverlapError) as err:
        plan_creation(existing, rev("new", start, end, status=PROCESSING))
    assert err.value.details["conflicting_revision_id"] in {"A", "B"}


def test_a_failed_revision_occupies_nothing() -> None:
    plan = plan_creation(timeline(rev("bad", "2024-01-01", status=FAILED)), rev("retry", "2024-01-01"))
    assert plan.superseded == ()


def test_a_revision_id_is_used_once() -> None:
    with pytest.raises(RevisionAlreadyExistsError):
        plan_creation(timeline(rev("A", "2020-01-01", "2020-12-31")), rev("A", "2022-01-01"))


def test_failing_a_revision_gives_its_dates_back_to_the_one_it_closed() -> None:
    before = timeline(
        derived(rev("A", "2024-12-12", "2025-12-31", SUPERSEDED)), rev("B", "2026-01-01", status=PROCESSING)
    )
    plan = plan_failure(before, "B", "extraction_failed: not a PDF")
    after = before.after(plan)
    assert after.records["A"] == derived(rev("A", "2024-12-12", None, ACTIVE))
    assert after.records["B"].revision.status == FAILED and after.records["B"].revision.error.startswith("extraction")
    assert [r.revision_id for r in plan.released] == ["A"]


def test_deleting_the_latest_revision_reopens_the_one_it_closed() -> None:
    before = timeline(derived(rev("A", "2024-12-12", "2029-12-31", SUPERSEDED)), rev("B", "2030-01-01"))
    after = before.after(plan_deletion(before, "B"))
    assert list(after.records) == ["A"] and after.records["A"].revision.effective_to is None
    assert after.records["A"].revision.status == ACTIVE


def test_the_sole_active_revision_cannot_be_deleted_but_a_superseded_one_can() -> None:
    with pytest.raises(CannotDeleteSoleRevisionError):
        plan_deletion(timeline(rev("A", "2020-07-27")), "A")
    two = timeline(rev("A", "2020-01-01", "2020-12-31", SUPERSEDED), rev("B", "2021-01-01"))
    assert plan_deletion(two, "A").remove == ("A",)
    with pytest.raises(RevisionNotFoundError):
        plan_deletion(two, "C")


def test_a_date_edit_is_rechecked_for_overlap() -> None:
    two = timeline(rev("A", "2023-09-05", "2024-12-11", SUPERSEDED), rev("B", "2024-12-12"))
    with pytest.raises(RevisionOverlapError):
        plan_edit(two, "A", {"effective_to": None})
    with pytest.raises(InvalidDateError):
        plan_edit(two, "A", {"effective_to": date(2023, 1, 1)})
    closed_early = plan_edit(two, "A", {"effective_to": date(2024, 6, 30)})
    assert closed_early.revision.status == SUPERSEDED and closed_early.store[0].revision.effective_to == date(
        2024, 6, 30
    )


def test_ingestion_settles_the_status_and_reinserts_a_revision_that_had_failed() -> None:
    assert (
        plan_ingested(timeline(rev("A", "2020-01-01", status=PROCESSING)), rev("A", "2020-01-01")).revision.status
        == ACTIVE
    )
    before = timeline(rev("A", "2024-12-12"), rev("B", "2026-01-01", status=FAILED))
    plan = plan_ingested(before, rev("B", "2026-01-01", status=FAILED))
    assert plan.revision.status == ACTIVE
    assert [(r.revision_id, r.effective_to, r.status) for r in plan.superseded] == [
        ("A", date(2025, 12, 31), SUPERSEDED)
    ]


def test_resolution_names_the_revision_in_force_or_the_reason_there_is_none() -> None:
    revisions = [rev("C", "2020-08-01"), rev("bad", "2020-07-01", status=FAILED), rev("A", "2020-01-01", "2020-06-30")]
    assert resolve_revision("NPPF", revisions, date(2020, 6, 30)).revision == revisions[2]
    assert resolve_revision("NPPF", revisions, date(2020, 7, 15)).reason == REASON_IN_GAP
    assert resolve_revision("NPPF", revisions, date(2019, 1, 1)).reason == REASON_BEFORE_FIRST
    assert resolve_revision("NPPF", [], date(2019, 1, 1)).reason == REASON_NO_REVISIONS


def test_moving_the_newer_revision_later_moves_the_older_ones_end_with_it() -> None:
    """Issue 46: the older revision's end stayed where the newer one had started, leaving days in force nowhere."""
    before = timeline(derived(rev("A", "2023-09-05", "2024-12-11", SUPERSEDED)), rev("B", "2024-12-12"))
    after = before.after(plan_edit(before, "B", {"effective_from": date(2025, 3, 1)}))
    assert after.records["A"].revision.effective_to == date(2025, 2, 28)
    assert resolve_revision("NPPF", after.newest_first(), date(2025, 1, 15)).revision == after.records["A"].revision
    earlier = before.after(plan_edit(before, "B", {"effective_from": date(2024, 6, 1)}))
    assert earlier.records["A"].revision.effective_to == date(2024, 5, 31)


def test_deleting_a_middle_revision_extends_the_one_before_to_the_next_ones_start() -> None:
    before = timeline(
        derived(rev("A", "2021-07-20", "2023-09-04", SUPERSEDED)),
        derived(rev("B", "2023-09-05", "2024-12-11", SUPERSEDED)),
        rev("C", "2024-12-12"),
    )
    after = before.after(plan_deletion(before, "B"))
    assert (after.records["A"].revision.effective_to, after.records["A"].revision.status) == (
        date(2024, 12, 11),
        SUPERSEDED,
    )


def test_an_end_the_user_set_stays_when_the_next_revision_moves() -> None:
    before = timeline(rev("A", "2020-01-01", "2020-06-30", SUPERSEDED), rev("B", "2020-08-01"))
    after = before.after(plan_edit(before, "B", {"effective_from": date(2020, 9, 1)}))
    assert after.records["A"].revision.effective_to == date(2020, 6, 30)
    assert resolve_revision("NPPF", after.newest_first(), date(2020, 7, 15)).reason == REASON_IN_GAP


def test_a_revision_may_not_cut_into_a_range_a_later_revision_already_closed() -> None:
    """A bounded range (even one closed by auto-supersession) is not split by a third revision (FR-008)."""
    before = timeline(
        derived(rev("A", "2020-01-01", "2020-12-31", SUPERSEDED)),
        rev("B", "2021-01-01"),
        rev("C", "2019-01-01", "2019-06-30", SUPERSEDED),
    )
    with pytest.raises(RevisionOverlapError) as err:
        plan_creation(before, rev("new", "2020-03-01", "2020-04-30", status=PROCESSING))
    assert err.value.details["conflicting_revision_id"] == "A"
    with pytest.raises(RevisionOverlapError):
        plan_edit(before, "C", {"effective_from": date(2020, 3, 1), "effective_to": date(2020, 4, 30)})


def test_a_revision_that_fails_or_returns_moves_the_ends_around_it() -> None:
    before = timeline(derived(rev("A", "2024-12-12", "2025-12-31", SUPERSEDED)), rev("B", "2026-01-01"))
    failed = before.after(plan_failure(before, "B", "extraction_failed"))
    assert failed.records["A"].revision.effective_to is None
    back = failed.after(plan_ingested(failed, failed.records["B"].revision))
    assert back.records["A"].revision.effective_to == date(2025, 12, 31)
    assert back.records["B"].revision.status == ACTIVE
