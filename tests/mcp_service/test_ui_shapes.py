"""What the web page draws, from records: timeline bars in time order and proportion, a compare diff's runs,
a governance document's supersession chain (``mcp_service.ui.shapes``)."""

from __future__ import annotations

from datetime import UTC, date, datetime

from lib.governance.in_force import Lifecycle, replacements
from lib.policies.models import Revision, RevisionStatus
from mcp_service.ui.shapes import WIDTH, Run, chain, diff_runs, timeline


def revision(rid: str, start: date, end: date | None, status: RevisionStatus) -> Revision:
    return Revision(
        revision_id=rid,
        source="NPPF",
        version_label=rid,
        effective_from=start,
        effective_to=end,
        status=status,
        created_at=datetime(2024, 1, 1, tzinfo=UTC),
    )


def test_timeline_bars_run_from_first_to_last_day_in_force_with_today_between() -> None:
    old = revision("old", date(2020, 1, 1), date(2023, 12, 31), RevisionStatus.SUPERSEDED)
    new = revision("new", date(2024, 1, 1), None, RevisionStatus.ACTIVE)
    drawn = timeline([new, old], today=date(2025, 6, 1), day=date(2022, 3, 1))
    first, second = drawn.bars
    assert (first.revision_id, second.revision_id) == ("old", "new"), "oldest on top"
    assert 0 < first.x < first.x + first.width <= second.x + 0.5, "the new one starts where the old one ended"
    assert second.open_ended and round(second.x + second.width) == WIDTH, "in force with no end: to the axis' end"
    assert first.x < drawn.day_x < second.x < drawn.today_x < WIDTH
    assert drawn.ticks[0].label == "2020" and all(4 <= t.x <= 96 for t in drawn.ticks), "ticks inside the width"
    assert (first.state, second.state) == ("in-force", "future")
    assert first.standing == "in force on 1 March 2022 (since 1 January 2020); replaced by the new on 1 January 2024"
    assert second.standing == "not yet in force on 1 March 2022: takes effect on 1 January 2024"
    said = " ".join(b.label + b.span + b.standing for b in drawn.bars)
    assert not any(code in said for code in ("active", "superseded", "rev_")), "words, no status codes or ids"


def test_diff_runs_mark_what_was_removed_and_added() -> None:
    runs = diff_runs("The [-local planning-] {+plan-making+} authority … must {+now+} act.")
    assert runs == [
        Run("same", "The "),
        Run("removed", "local planning"),
        Run("same", " "),
        Run("added", "plan-making"),
        Run("same", " authority … must "),
        Run("added", "now"),
        Run("same", " act."),
    ]


def test_a_chain_runs_from_what_a_document_replaced_to_what_replaced_it() -> None:
    docs = {
        "PEP-0513": Lifecycle("PEP-0513", "Superseded", superseded_by=("PEP-0600",)),
        "PEP-0571": Lifecycle("PEP-0571", "Superseded", superseded_by=("PEP-0599",)),
        "PEP-0599": Lifecycle("PEP-0599", "Superseded", replaces=("PEP-0571",), superseded_by=("PEP-0600",)),
        "PEP-0600": Lifecycle("PEP-0600", "Final", replaces=("PEP-0599",)),
        "PEP-0001": Lifecycle("PEP-0001", "Active"),
    }
    links = replacements(docs)
    assert chain("PEP-0599", links) == ["PEP-0571", "PEP-0599", "PEP-0600"]
    assert chain("PEP-0600", links) == ["PEP-0571", "PEP-0513", "PEP-0599", "PEP-0600"]
    assert chain("PEP-0001", links) == ["PEP-0001"]
