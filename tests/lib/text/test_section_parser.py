"""The section parser's states and transitions, on hand-made rows (body text 10 pt, headings 14 pt).

The real NPPF PDFs pin the parser's output in ``test_sections.py``; these tests name the rules one by one.
"""

from __future__ import annotations

from lib.text.layout_rows import Row
from lib.text.section_grammar import Block
from lib.text.section_parser import SectionParser

BODY, HEADING = 10.0, 14.0


def heading(text: str, page: int = 1) -> Row:
    return Row(text=text, page=page, size=HEADING, gap_before=True)


def para(text: str, page: int = 1, bold_lead: str = "") -> Row:
    return Row(text=text, page=page, size=BODY, bold_lead=bold_lead, gap_before=True)


def parse(*rows: Row) -> SectionParser:
    parser = SectionParser(BODY)
    for row in rows:
        parser.feed(row)
    return parser


def refs(parser: SectionParser) -> list[str]:
    return [unit.ref for unit in parser.units]


def test_front_matter_sees_only_chapter_headings_and_is_cited_by_page() -> None:
    parser = parse(
        para("1. Not a paragraph yet.", page=1),
        para("TR1: Not a policy either", page=2, bold_lead="TR1:"),
        heading("1. Introduction", page=3),
    )
    assert refs(parser) == ["Page 1", "Page 2", "Chapter 1"]
    assert parser.block is Block.CHAPTER


def test_numbered_lines_inside_a_policy_are_its_own_and_a_caption_returns_to_the_chapter() -> None:
    parser = parse(
        heading("1. Transport"),
        para("1. The first paragraph."),
        para("TR1: Assessing transport impacts", bold_lead="TR1: Assessing transport impacts"),
        para("2. A sub-paragraph of the policy."),
        para("Table 1: Trip rates", bold_lead="Table 1: Trip rates"),
        para("2. The second paragraph."),
    )
    assert refs(parser) == ["Chapter 1", "Para 1", "Policy TR1", "Table 1", "Para 2"]
    assert parser.units[2].text.endswith("2. A sub-paragraph of the policy.")


def test_numbering_restarting_after_an_annex_heading_is_qualified_by_the_annex() -> None:
    parser = parse(
        heading("1. Plans"),
        para("1. One."),
        para("2. Two."),
        heading("Annex A: Viability"),
        para("1. Again one."),
        para("2. Again two."),
        para("5. Out of sequence, so plain text."),
    )
    assert refs(parser) == ["Chapter 1", "Para 1", "Para 2", "Annex A", "Annex A Para 1", "Annex A Para 2"]
    assert parser.units[-1].text.endswith("5. Out of sequence, so plain text.")


def test_a_chapter_title_wrapped_onto_a_second_line_is_one_title() -> None:
    parser = parse(heading("2. Achieving sustainable"), Row(text="development", page=1, size=HEADING))
    assert (parser.units[0].ref, parser.units[0].title) == ("Chapter 2", "Achieving sustainable development")
    assert parser.chapter.heading == "2. Achieving sustainable development"


def test_glossary_terms_open_entries_only_in_a_glossary_annex() -> None:
    term = para("Grey belt: land in the Green Belt.", bold_lead="Grey belt:")
    parser = parse(heading("1. Green Belt"), term, heading("Annex 2: Glossary"), term)
    assert refs(parser) == ["Chapter 1", "Annex 2", "Glossary: Grey belt"]


def test_a_decimal_numbered_plan_cites_paragraphs_by_their_printed_numbers_in_order() -> None:
    parser = SectionParser(BODY, decimal=True)
    for row in (
        heading("3. Housing"),
        para("3.1 Homes are needed."),
        para("Policy H1: Housing mix", bold_lead="Policy H1: Housing mix"),
        para("1. Homes of every size."),
        para("3.9 The mix follows the study."),
        para("2.5 A value in a table, not a paragraph."),
        para("3.10 Later paragraph."),
    ):
        parser.feed(row)
    assert refs(parser) == ["Chapter 3", "Para 3.1", "Policy H1", "Para 3.9", "Para 3.10"]
    assert [unit.kind for unit in parser.units] == ["chapter", "paragraph", "policy", "paragraph", "paragraph"]
    assert "1. Homes of every size." in parser.units[2].text


def test_policy_codes_in_plain_type_are_cross_references_not_headings() -> None:
    parser = parse(heading("1. Housing"), para("1. Text."), para("LP4 sets out the mix."), para("2. More."))
    assert refs(parser) == ["Chapter 1", "Para 1", "Para 2"]


def test_a_document_without_numbered_chapters_starts_its_paragraphs_in_front_matter() -> None:
    parser = SectionParser(BODY, unchaptered=True)
    for row in (para("Cover", page=1), heading("Introduction", page=2), para("1. First.", page=2), para("2. Next.")):
        parser.feed(row)
    assert refs(parser) == ["Page 1", "Page 2", "Para 1", "Para 2"]
    assert parser.units[2].title == "Introduction"


def test_policy_headings_in_bold_with_a_qualifier_or_a_bare_number_and_without_a_gap_above() -> None:
    tight = Row(text="Policy 12: Design", page=1, size=BODY, bold_lead="Policy 12: Design")
    parser = parse(
        heading("1. Design"),
        para("Strategic Policy SP1: Spatial Strategy", bold_lead="Strategic Policy SP1: Spatial Strategy"),
        para("Growth goes to the towns."),
        tight,
        para("Schemes will be well designed."),
    )
    assert [(unit.ref, unit.title) for unit in parser.units] == [
        ("Chapter 1", "Design"),
        ("Policy SP1", "Spatial Strategy"),
        ("Policy 12", "Design"),
    ]


def test_policy_headings_set_in_capitals_or_with_a_slash_in_the_code() -> None:
    """``STRATEGIC POLICY SP1`` (capitals, as many plans set their headings) and ``Policy H/9`` (South
    Cambridgeshire's notation); ``H/9`` and ``H9`` are one code, so the heading named again is not a new policy."""
    parser = parse(
        heading("1. Housing"),
        para("STRATEGIC POLICY SP1 - SPATIAL STRATEGY", bold_lead="STRATEGIC POLICY SP1 - SPATIAL STRATEGY"),
        para("Growth goes to the towns."),
        para("Policy H/9: Housing Mix", bold_lead="Policy H/9: Housing Mix"),
        para("Schemes will provide a mix of homes."),
        para("Policy NE/3 Biodiversity", bold_lead="Policy NE/3 Biodiversity"),
        para("Schemes will leave biodiversity better than they found it."),
        para("POLICY H9 Housing Mix", page=2, bold_lead="POLICY H9 Housing Mix"),
    )
    assert [(unit.ref, unit.title, unit.kind) for unit in parser.units] == [
        ("Chapter 1", "Housing", "chapter"),
        ("Policy SP1", "SPATIAL STRATEGY", "policy"),
        ("Policy H/9", "Housing Mix", "policy"),
        ("Policy NE/3", "Biodiversity", "policy"),
        ("Page 2", "POLICY H9 Housing Mix", "page"),
    ]


def test_a_schedules_codes_keep_their_printed_zeros_and_plan_prefix() -> None:
    parser = SectionParser(BODY, modifications=True)
    for text in ("AAP/MM01 Policy H1", "AAP/MM02 Paragraph 3.5", "AAP/MM04 Glossary"):
        parser.feed(para(text))
    assert refs(parser) == ["AAP/MM01", "AAP/MM02", "AAP/MM04"]
