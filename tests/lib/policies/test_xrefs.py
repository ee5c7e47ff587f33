"""Cross-references read from a section's text: refs in its own document and in documents it names."""

from __future__ import annotations

from datetime import UTC, datetime

from lib.models import Section
from lib.policies.models import Policy, PolicyCategory
from lib.policies.xrefs import (
    Citation,
    DocumentNames,
    aliases,
    chunk_citations,
    extract_citations,
    section_citations,
)
from lib.text.chunking import chunk_sections


def test_refs_inside_the_same_document_are_cited_without_a_document() -> None:
    text = (
        "Proposals must meet Policy LP3 and Policies LP4, LP5 and LP6; see paragraphs 4.7.1 and 4.7.2 and para. 3.60."
    )
    assert extract_citations(text) == [
        "|Policy LP3",
        "|Policy LP4",
        "|Policy LP5",
        "|Policy LP6",
        "|Para 4.7.1",
        "|Para 4.7.2",
        "|Para 3.60",
    ]


def test_the_framework_named_from_a_plan_is_another_document_but_this_framework_is_the_same() -> None:
    assert extract_citations("paragraph 11 of the Framework") == ["framework|Para 11"]
    assert extract_citations("paragraph 11 of this Framework") == ["|Para 11"]


def test_a_section_does_not_cite_itself_and_this_plan_is_the_same_document() -> None:
    text = "Policy LP3 applies. Paragraph 3.1 of this Plan and paragraph 3.2 of the Local Plan explain it."
    assert extract_citations(text, own_ref="Policy LP3") == ["|Para 3.1", "|Para 3.2"]


def test_refs_to_other_documents_keep_the_name_the_text_gives() -> None:
    text = (
        "As paragraph 11 of the NPPF and NPPF paragraph 12 require, and Policy SD11 of the Joint Core Strategy, "
        "paragraph 180 of the National Planning Policy Framework and LTN 1/20 paragraph 5.2."
    )
    assert extract_citations(text) == [
        "nppf|Para 11",
        "nppf|Para 12",
        "joint core strategy|Policy SD11",
        "national planning policy framework|Para 180",
        "ltn 1/20|Para 5.2",
    ]


def test_an_acronym_before_the_ref_names_its_document_in_the_forms_plans_use() -> None:
    text = (
        "National planning policy in the NPPF (paragraph 27) also says so, as does the National Planning Policy "
        "Framework (NPPF) (2021), paragraph 17."
    )
    assert extract_citations(text) == ["nppf|Para 27", "nppf|Para 17"]


def test_refs_inside_a_document_are_recorded_as_its_own_refs_and_only_when_it_has_them() -> None:
    sections = [
        (
            "Para 05.02",
            "The NPPF sets out plan-making. Paragraph 17 identifies the strategic policies; "
            "see paragraph 5.3 and Policy SP1, and paragraph 05.02 itself.",
        ),
        ("Para 05.03", "Strategic policies."),
        ("Policy SP01", "Policy SP01 Housing need."),
    ]
    assert section_citations(sections) == {
        "Para 05.02": ["|Para 05.03", "|Policy SP01"],
        "Para 05.03": [],
        "Policy SP01": [],
    }


def test_words_that_only_look_like_refs_are_not_cited() -> None:
    assert extract_citations("In 2019 the policy was reviewed; this paragraph sets out why. See page 4.") == []


def policy(source: str, title: str) -> Policy:
    now = datetime.now(UTC)
    return Policy(
        source=source,
        title=title,
        description="",
        category=PolicyCategory.NATIONAL_POLICY,
        created_at=now,
        updated_at=now,
    )


def test_names_resolve_to_registered_policies_by_slug_title_acronym_or_short_name() -> None:
    nppf = policy("NPPF", "National Planning Policy Framework")
    jcs = policy("GLOUCESTER_JCS", "The Joint Core Strategy")
    ltn = policy("LTN_1_20", "Cycle Infrastructure Design (LTN 1/20)")
    assert aliases(nppf) >= {"nppf", "national planning policy framework"}
    names = DocumentNames([nppf, jcs, ltn])
    assert names.citation("nppf|Para 11", "TEWKESBURY") == Citation(
        section_ref="Para 11", source="NPPF", document="nppf"
    )
    assert names.citation("national planning policy framework|Para 180", "X").source == "NPPF"
    assert names.citation("joint core strategy|Policy SD11", "X").source == "GLOUCESTER_JCS"
    assert names.citation("ltn 1/20|Para 5.2", "X").source == "LTN_1_20"
    assert names.citation("|Policy LP3", "TEWKESBURY") == Citation(
        section_ref="Policy LP3", source="TEWKESBURY", document=None
    )
    assert names.citation("fenland local plan|Policy LP4", "X").source is None
    assert names.citation("framework|Para 11", "X").source == "NPPF"
    assert names.names_of("NPPF") >= {"nppf", "national planning policy framework", "framework"}


def test_a_name_two_registered_policies_answer_to_resolves_to_neither() -> None:
    names = DocumentNames(
        [policy("NPPF", "National Planning Policy Framework"), policy("DESIGN", "National Design Framework")]
    )
    assert names.citation("framework|Para 11", "X").source is None
    assert names.citation("nppf|Para 11", "X").source == "NPPF"


def test_a_citation_cut_across_two_chunks_is_found_in_the_rejoined_section() -> None:
    filler = " ".join(f"Sentence {i} about housing mix and density." for i in range(30))
    section = Section(
        section_ref="Para 3.1", text=filler + " This follows paragraph 11 of the NPPF closely. " + filler, page_number=4
    )
    chunks = chunk_sections([section])
    assert len(chunks) > 2
    assert chunk_citations(chunks) == {"Para 3.1": ["nppf|Para 11"]}


def test_policy_codes_with_decimals_are_cited_whole() -> None:
    assert extract_citations("in accordance with Policy HO3.3 Affordable housing and Policy\nNE9.7.") == [
        "|Policy HO3.3",
        "|Policy NE9.7",
    ]


def test_a_sub_point_cites_its_paragraph() -> None:
    assert extract_citations("as paragraph 11d and paragraphs 78a, 78b of the NPPF set out") == [
        "|Para 11",
        "nppf|Para 78",
    ]
