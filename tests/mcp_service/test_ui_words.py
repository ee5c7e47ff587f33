"""The page's plain words (``mcp_service.ui.words``, ``moves``, ``forms``): a revision's standing on the date
asked, why nothing is in force, where a compared section went, a form's mistakes as sentences."""

from __future__ import annotations

from datetime import UTC, date, datetime

from lib.policies.compare import Comparison, ReferenceStatus, RevisionCited, SectionMatch, SectionText, word_diff
from lib.policies.models import Revision, RevisionStatus
from mcp_service.ui.forms import Problems, read_day
from mcp_service.ui.moves import changes_within, where_it_went
from mcp_service.ui.words import nothing_in_force, standing

TODAY = date(2026, 12, 1)


def revision(rid: str, label: str, start: date, end: date | None, status: RevisionStatus) -> Revision:
    return Revision(
        revision_id=rid,
        source="NPPF",
        version_label=label,
        effective_from=start,
        effective_to=end,
        status=status,
        created_at=datetime(2024, 1, 1, tzinfo=UTC),
    )


OLD = revision("rev_a", "December 2023", date(2023, 12, 19), date(2024, 12, 11), RevisionStatus.SUPERSEDED)
CURRENT = revision("rev_b", "December 2024", date(2024, 12, 12), date(2098, 12, 31), RevisionStatus.SUPERSEDED)
DRAFT = revision("rev_c", "2099 draft", date(2099, 1, 1), None, RevisionStatus.ACTIVE)
ALL = [OLD, CURRENT, DRAFT]


def test_the_revision_in_force_on_the_day_is_said_to_be_in_force_whatever_its_status_code() -> None:
    said = standing(CURRENT, date(2025, 6, 1), ALL, TODAY)
    assert (
        said == "in force on 1 June 2025 (since 12 December 2024); to be replaced by the 2099 draft on 1 January 2099"
    )
    assert "superseded" not in said
    assert standing(OLD, date(2025, 6, 1), ALL, TODAY) == (
        "no longer in force on 1 June 2025: in force from 19 December 2023, replaced by the December 2024 on "
        "12 December 2024"
    )
    assert (
        standing(DRAFT, date(2025, 6, 1), ALL, TODAY)
        == "not yet in force on 1 June 2025: takes effect on 1 January 2099"
    )
    assert standing(DRAFT, date(2099, 6, 1), ALL, TODAY).endswith("nothing has replaced it")


def test_nothing_in_force_names_the_first_revision_or_the_gap() -> None:
    assert nothing_in_force(ALL, date(2025, 6, 1)) is None
    assert nothing_in_force(ALL, date(2020, 1, 1)) == (
        "Nothing in force on 1 January 2020; the first revision (December 2023) took effect on 19 December 2023."
    )
    gap = [OLD, DRAFT]
    assert nothing_in_force(gap, date(2025, 6, 1)) == (
        "Nothing in force on 1 June 2025; the December 2023 ended on 11 December 2024 and the 2099 draft took "
        "effect on 1 January 2099."
    )
    reading = revision("rev_d", "new", date(2020, 1, 1), None, RevisionStatus.PROCESSING)
    assert (
        nothing_in_force([reading], date(2025, 1, 1))
        == "Nothing in force on 1 January 2025: no revision has been read yet."
    )


def _side(rev: Revision, ref: str, chapter: str, text: str) -> SectionText:
    return SectionText(
        source="NPPF",
        revision_id=rev.revision_id,
        version_label=rev.version_label,
        section_ref=ref,
        chapter=chapter,
        page_numbers=[3],
        text=text,
    )


def _match(ref: str, chapter: str, score: float, passage: str) -> SectionMatch:
    return SectionMatch(
        source="NPPF",
        revision_id="rev_c",
        version_label="2099 draft",
        section_ref=ref,
        chapter=chapter,
        page_numbers=[9],
        score=score,
        retrieval_score=0.5,
        passage=passage,
    )


def _comparison(status: ReferenceStatus, old: SectionText | None, matches: list[SectionMatch]) -> Comparison:
    cited = [
        RevisionCited(revision_id=r.revision_id, version_label=r.version_label, effective_from="x", effective_to=None)
        for r in (CURRENT, DRAFT)
    ]
    return Comparison(
        source="NPPF",
        section_ref="Para 116",
        from_revision=cited[0],
        to_revision=cited[1],
        reference_status=status,
        from_section=old,
        to_section=None,
        diff=None,
        matches=matches,
    )


REFUSE = "Development should only be refused on highways grounds if the impact would be severe."


def test_a_section_found_under_another_number_leads_with_where_it_went_then_its_word_changes() -> None:
    old = _side(CURRENT, "Para 116", "9. Promoting sustainable transport", REFUSE)
    moved = _comparison(
        ReferenceStatus.MISSING_IN_TO,
        old,
        [
            _match("Policy TR6", "Chapter 9: Transport", 0.75, REFUSE.replace("only be", "be")),
            _match("Policy TR5", "Chapter 9: Transport", 0.68, "Other words entirely about parking."),
        ],
    )
    movement = where_it_went(moved)
    assert movement.kind == "moved" and movement.sentence.startswith(
        "Para 116 of the December 2024 moved to Chapter 9: Transport: it is now Policy TR6 of the 2099 draft."
    )
    within = changes_within(moved, movement)
    assert within is not None and "[-only-]" in within.rendered and within.words_removed == 1
    gone = _comparison(ReferenceStatus.MISSING_IN_TO, old, [_match("Policy X", "", 0.4, "unrelated")])
    assert where_it_went(gone).kind == "removed" and changes_within(gone, where_it_went(gone)) is None
    two = _side(CURRENT, "Para 116", "9", REFUSE + "\n\nCycle lanes must be two metres wide on busy roads.")
    parts = [_match("Policy TR6", "9", 0.8, REFUSE), _match("Policy TR2", "9", 0.78, "Cycle lanes")]
    split = _comparison(ReferenceStatus.MISSING_IN_TO, two, parts)
    assert where_it_went(split).kind == "split" and "Policy TR6 and Policy TR2" in where_it_went(split).sentence
    same = _comparison(ReferenceStatus.CHANGED, old, [])
    same.diff = word_diff(REFUSE, REFUSE.replace("severe", "very severe"))
    assert where_it_went(same).kind == "reworded" and changes_within(same, where_it_went(same)) is same.diff


def test_a_bad_date_is_a_sentence_for_its_field_and_blank_takes_the_default() -> None:
    problems = Problems()
    assert read_day("2025-02-30", "date", "In force on", problems, default=TODAY) is None
    assert problems.by_field["date"].startswith("In force on: “2025-02-30” is not a date on the calendar.")
    assert read_day(" ", "date", "In force on", Problems(), default=TODAY) == TODAY
    needed = Problems()
    assert read_day("", "effective_from", "In force from", needed, default=None) is None and needed
