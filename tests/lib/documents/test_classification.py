"""Document type classification (spec 003 appendix): every row of the table by file name and by content,
file name before content, ``other`` as the fallback, and names that only look like a pattern."""

from __future__ import annotations

import pytest

from lib.documents.classification import DOCUMENT_TYPES, classify_document, normalise_file_name

# (type, file names a portal would carry for it, text of such a report with no telling file name)
TABLE = [
    (
        "transport_assessment",
        [
            "Transport_Assessment_v2.pdf",
            "TransportStatement.pdf",
            "Framework Travel Plan.pdf",
            "Traffic-Impact-Study.pdf",
        ],
        "Trip generation was estimated with TRICS. Junction capacity at the A34 roundabout remains adequate.",
    ),
    (
        "design_access_statement",
        ["Design_and_Access_Statement.pdf", "Design & Access Statement.pdf", "D&A_Statement.pdf", "DAS_rev_C.pdf"],
        "The design principles respond to the character and appearance of the street; scale and massing step down.",
    ),
    (
        "site_plan",
        ["Site_Plan.pdf", "Site Location Plan 1-1250.pdf", "Proposed_Block_Plan.pdf", "LayoutPlan.pdf"],
        "SITE LOCATION PLAN  Scale 1:1250 @ A4. Red line boundary shown. Crown copyright and database rights.",
    ),
    (
        "floor_plan",
        ["Proposed_Floor_Plans.pdf", "Ground_Floor_GA.pdf", "First-Floor.pdf"],
        "Bedroom 1 12.4 m2, Kitchen / Living room 28.0 m2, Bathroom. Gross internal area 96 m2.",
    ),
    (
        "elevation",
        ["Proposed_Elevations.pdf", "North Elevation.pdf", "Street_Scene_01.pdf"],
        "Front elevation and rear elevation in facing brick; ridge height 8.2 m, eaves height 5.1 m.",
    ),
    (
        "planning_statement",
        ["Planning_Statement.pdf", "Supporting Statement.pdf"],
        "The proposal accords with the development plan; the NPPF presumption in favour of sustainable development.",
    ),
    (
        "environmental_statement",
        ["Environmental_Statement_Vol_2.pdf", "Environmental Impact Assessment.pdf", "EIA_Scoping_Report.pdf"],
        "This Environmental Statement reports the likely significant effects; a non-technical summary is Volume 3.",
    ),
    (
        "noise_assessment",
        ["Noise_Assessment.pdf", "Noise Impact Survey.pdf", "Acoustic_Report.pdf"],
        "Background noise was measured as LAeq,T at the nearest noise sensitive receptor, following BS 4142.",
    ),
    (
        "flood_risk_assessment",
        ["Flood_Risk_Assessment.pdf", "FRA_rev_B.pdf", "Drainage-Strategy.pdf"],
        "The site lies in Flood Zone 1. Surface water will be managed by SuDS with attenuation to greenfield runoff.",
    ),
    (
        "ecology_report",
        [
            "Ecology_Report.pdf",
            "Preliminary Ecological Appraisal.pdf",
            "Bat_Survey_2024.pdf",
            "Biodiversity_Metric.pdf",
        ],
        "No protected species were recorded; the habitat is poor semi-improved grassland. Breeding birds nest.",
    ),
    (
        "heritage_statement",
        ["Heritage_Statement.pdf", "Heritage Impact Assessment.pdf", "Archaeological_Desk_Based.pdf"],
        "The site lies within the conservation area and near a Grade II listed building, a designated heritage asset.",
    ),
    (
        "arboricultural_report",
        ["Arboricultural_Impact_Assessment.pdf", "Arboricultural Report.pdf", "Tree_Survey.pdf"],
        "Trees were surveyed to BS 5837; the root protection area of T4 is fenced per the tree protection plan.",
    ),
]

NAME_CASES = [(doc_type, name) for doc_type, names, _ in TABLE for name in names]
NEUTRAL_NAME = "24_01234_FUL-APPENDIX_C-1234567.pdf"


def test_the_table_covers_every_type_in_spec_order_with_other_last() -> None:
    assert [row[0] for row in TABLE] == list(DOCUMENT_TYPES[:-1])
    assert DOCUMENT_TYPES[-1] == "other"


@pytest.mark.parametrize(("doc_type", "name"), NAME_CASES)
def test_file_name_patterns_classify_with_high_confidence(doc_type: str, name: str) -> None:
    result = classify_document(name)
    assert (result.document_type, result.method, result.confidence) == (doc_type, "filename", "high")


@pytest.mark.parametrize(("doc_type", "text"), [(row[0], row[2]) for row in TABLE])
def test_content_keywords_classify_with_medium_confidence_when_the_name_says_nothing(doc_type: str, text: str) -> None:
    result = classify_document(NEUTRAL_NAME, text)
    assert (result.document_type, result.method, result.confidence) == (doc_type, "content", "medium")
    assert result.matched.count(",") >= 1  # at least two keywords named


def test_file_name_wins_over_content() -> None:
    transport_text = TABLE[0][2]
    assert classify_document("Flood_Risk_Assessment.pdf", transport_text).document_type == "flood_risk_assessment"


def test_nothing_recognisable_falls_back_to_other_with_low_confidence() -> None:
    for result in (
        classify_document(NEUTRAL_NAME),
        classify_document(NEUTRAL_NAME, ""),
        classify_document(NEUTRAL_NAME, "Dear Sir, please find enclosed the completed form."),
        classify_document("", "A single cycle parking stand."),  # one keyword is not enough
    ):
        assert (result.document_type, result.method, result.confidence) == ("other", "fallback", "low")


def test_the_type_with_most_keywords_wins_and_ties_go_to_the_earlier_row() -> None:
    mostly_flood = "flood zone 2, surface water, SuDS attenuation; trip generation and junction capacity"
    assert classify_document(NEUTRAL_NAME, mostly_flood).document_type == "flood_risk_assessment"
    tie = "trip generation, junction capacity; flood zone, surface water"
    assert classify_document(NEUTRAL_NAME, tie).document_type == "transport_assessment"


@pytest.mark.parametrize(
    "name", ["Fractional_Ownership.pdf", "Media_Pack.pdf", "Basketball_Court.pdf", "Decorations.pdf", "Dasher.pdf"]
)
def test_patterns_only_match_whole_words_of_a_file_name(name: str) -> None:
    assert classify_document(name).document_type == "other"


def test_keywords_only_match_whole_words_of_the_text() -> None:
    assert classify_document(NEUTRAL_NAME, "The metrics of the electrics; the suds-free habitation").document_type == (
        "other"
    )


def test_keywords_split_over_a_line_break_still_count() -> None:
    text = "The root\nprotection area is fenced as BS\n5837 requires."
    assert classify_document(NEUTRAL_NAME, text).document_type == "arboricultural_report"


def test_only_the_start_of_a_long_text_is_read() -> None:
    text = "Dear Sir, the enclosed form. " * 3000 + TABLE[0][2]
    assert classify_document(NEUTRAL_NAME, text).document_type == "other"


def test_file_names_are_normalised_to_lower_case_words_without_folder_or_extension() -> None:
    assert normalise_file_name("downloads/TransportAssessment_v2-FINAL.pdf") == "transport assessment v2 final"
    assert normalise_file_name("C:\\docs\\Site.Plan.PDF") == "site plan"
    assert normalise_file_name("") == ""
