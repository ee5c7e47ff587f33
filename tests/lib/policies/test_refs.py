"""What people type, matched to the refs a revision has (issue 22): one section or none, never a guess."""

from __future__ import annotations

import pytest

from lib.policies.refs import canonical_ref, match_ref, nearest_refs

PLAN = [
    "Chapter 3",
    "Policy RES8",
    "Policy RES9",
    "Policy RES10",
    "Para 3.59",
    "Para 3.60",
    "Para 3.61",
    "Policy CS1",
    "Policy GEN01",
    "MM74",
    "Glossary: Affordable housing",
    "Policy H/9",
]
NPPF = ["Chapter 9", "Para 115", "Para 116", "Footnote 7", "Para 7", "Policy TR6", "Annex 2"]


@pytest.mark.parametrize(
    ("typed", "ref"),
    [
        ("RES9", "Policy RES9"),
        ("Policy RES9", "Policy RES9"),
        ("policy res9", "Policy RES9"),
        ("Policy RES9 Replacement dwellings", "Policy RES9"),
        ("Policy RES9: Replacement dwellings", "Policy RES9"),
        ("3.60", "Para 3.60"),
        ("Para 3.60", "Para 3.60"),
        ("paragraph 3.60", "Para 3.60"),
        ("para.  3.60", "Para 3.60"),
        ("CS 1", "Policy CS1"),
        ("CS1", "Policy CS1"),
        ("Policy GEN 01:", "Policy GEN01"),
        ("GEN 1", "Policy GEN01"),
        ("H/9", "Policy H/9"),
        ("policy h9", "Policy H/9"),
        ("POLICY H/9 HOUSING MIX", "Policy H/9"),
        ("Para 03.60", "Para 3.60"),
        ("mm74", "MM74"),
        ("glossary: affordable housing", "Glossary: Affordable housing"),
        ("chapter 3", "Chapter 3"),
    ],
)
def test_what_people_type_names_the_plans_own_ref(typed: str, ref: str) -> None:
    assert match_ref(typed, PLAN) == [ref]


@pytest.mark.parametrize(
    ("typed", "ref"),
    [
        ("Para 116", "Para 116"),
        ("Para  116", "Para 116"),
        ("paragraph 116", "Para 116"),
        ("116", "Para 116"),
        ("footnote 7", "Footnote 7"),
        ("tr6", "Policy TR6"),
        ("annex 2", "Annex 2"),
    ],
)
def test_the_nppf_refs_read_as_today(typed: str, ref: str) -> None:
    assert match_ref(typed, NPPF) == [ref]


def test_a_bare_number_is_a_paragraph_not_a_footnote_and_a_kind_word_is_never_overridden() -> None:
    assert match_ref("7", NPPF) == ["Para 7"]
    assert match_ref("Footnote 116", NPPF) == []
    assert match_ref("Policy 3.60", PLAN) == []


def test_a_code_two_sections_share_is_ambiguous_not_guessed() -> None:
    assert match_ref("1", ["Policy 1", "Para 1"]) == ["Policy 1", "Para 1"]
    assert match_ref("SP1", ["Policy SP01", "Policy SP1"]) == ["Policy SP01", "Policy SP1"]
    assert match_ref("Para 3.6", ["Para 3.60", "Para 3.6"]) == ["Para 3.6"]
    assert match_ref("Para 3.6", ["Para 3.60"]) == []


def test_a_miss_suggests_the_nearest_refs_of_the_revision() -> None:
    assert match_ref("RES7", PLAN) == []
    assert nearest_refs("RES7", PLAN)[:3] == ["Policy RES8", "Policy RES9", "Policy RES10"]
    assert nearest_refs("Para 3.62", PLAN)[:3] == ["Para 3.61", "Para 3.60", "Para 3.59"]
    assert nearest_refs("Para 3.60", ["Policy 3.60", "Para 4.1"])[0] == "Policy 3.60"
    assert nearest_refs("zzz", PLAN) == []


@pytest.mark.parametrize(
    ("typed", "canonical"),
    [
        ("paragraph 11", "Para 11"),
        ("11", "Para 11"),
        ("para. 4.7.2", "Para 4.7.2"),
        ("policy sd 11", "Policy SD11"),
        ("SD11", "Policy SD11"),
        ("ho3.3", "Policy HO3.3"),
        ("Policy RES9 Replacement dwellings", "Policy RES9"),
        ("Annex  2", "Annex 2"),
        ("Glossary: Affordable housing", "Glossary: Affordable housing"),
    ],
)
def test_canonical_refs_are_the_form_citations_are_stored_in(typed: str, canonical: str) -> None:
    assert canonical_ref(typed) == canonical


def test_a_main_modification_is_found_by_either_spelling_of_its_code() -> None:
    schedule = ["Page 1", "M73", "M74", "M75", "AAP/M3"]
    assert match_ref("MM74", schedule) == ["M74"]
    assert match_ref("mm74", schedule) == ["M74"]
    assert match_ref("AAP/MM3", schedule) == ["AAP/M3"]
    assert match_ref("M74", ["MM74", "MM75"]) == ["MM74"]
    assert match_ref("MM74", ["MM74", "M74"]) == ["MM74"]  # the spelling typed wins where both exist
    assert match_ref("MM76", schedule) == []
