"""Which policy a paragraph of reasoned justification supports, read from the sections alone."""

from __future__ import annotations

from lib.models import Section
from lib.text.justification import with_supports

CHAPTER = "5. Climate Change"


def paragraph(ref: str, heading: str) -> Section:
    number = ref.removeprefix("Para ")
    return Section(
        section_ref=ref,
        text=f"{number} Text.",
        page_number=1,
        page_spans=[(0, 1)],
        kind="paragraph",
        title=heading,
        chapter=CHAPTER,
    )


def policy(ref: str, title: str) -> Section:
    return Section(
        section_ref=ref,
        text=f"{ref} - {title}\nPolicy text.",
        page_number=1,
        page_spans=[(0, 1)],
        kind="policy",
        title=title,
        chapter=CHAPTER,
    )


def supports(sections: list[Section]) -> dict[str, str | None]:
    return {s.section_ref: s.supports for s in with_supports(sections) if s.kind == "paragraph"}


def test_a_heading_that_names_the_policys_title_decides_even_when_justification_comes_first() -> None:
    """Paragraphs 5.2.x precede their policy; the heading over them is LP14's title, wrapped before its last
    word. Part 5.2 touches both policies, so the part rule cannot decide, and the neighbour rule would give them
    to LP13, the policy just above."""
    growth = "Supporting and Managing the Impact of a Growing District"
    flooding = "Responding to Climate Change and Managing the Risk of Flooding in Fenland"
    sections = [
        paragraph("Para 5.1.1", f"5.1 {growth}"),
        policy("Policy LP13", growth),
        paragraph("Para 5.2.1", "5.2 Responding to Climate Change and Managing the Risk of Flooding in"),
        paragraph("Para 5.2.2", "5.2 Responding to Climate Change and Managing the Risk of Flooding in"),
        policy("Policy LP14", flooding),
        paragraph("Para 5.3.1", "5.3 Transport"),
    ]
    found = supports(sections)
    assert found["Para 5.1.1"] == "Policy LP13"
    assert found["Para 5.2.1"] == found["Para 5.2.2"] == "Policy LP14"


def test_a_heading_led_by_a_policy_code_decides() -> None:
    sections = [
        policy("Policy LP05", "Rural Worker Dwellings"),
        paragraph("Para 13.14", "LP06 - Supported and Special Needs Housing"),
        policy("Policy LP06", "Supported and Special Needs Housing"),
    ]
    assert supports(sections)["Para 13.14"] == "Policy LP06"


def test_a_heading_that_two_policies_fit_decides_nothing() -> None:
    """``Housing`` and ``Meeting Housing Need`` both stand in the heading: the other rules decide."""
    sections = [
        paragraph("Para 3.4.1", "3.4 Housing Growth and Meeting Housing Need"),
        policy("Policy LP4", "Housing"),
        paragraph("Para 3.4.8", "3.4 Housing Growth and Meeting Housing Need"),
        policy("Policy LP5", "Meeting Housing Need"),
    ]
    found = supports(sections)
    assert found["Para 3.4.1"] in {"Policy LP4", "Policy LP5"}
    assert found["Para 3.4.8"] in {"Policy LP4", "Policy LP5"}
