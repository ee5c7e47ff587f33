"""``compare_policy_section`` (MCP) and ``GET /api/v1/policies/{source}/compare`` on the real NPPF pair:
December 2024 against the December 2025 consultation draft, which renumbers everything."""

from __future__ import annotations

import pytest

from tests.mcp_service.conftest import Service
from tests.mcp_service.tools import call

pytestmark = pytest.mark.anyio

DEC_2024, DRAFT = "rev_NPPF_2024_12", "rev_NPPF_2099_01_DRAFT"


async def test_the_highways_paragraph_maps_to_the_drafts_transport_impacts_policy(nppf_service: Service) -> None:
    out = await call(nppf_service.url, "compare_policy_section", {"source": "NPPF", "section_ref": "Para 116"})

    assert (out["status"], out["reference_status"], out["matches_in"]) == ("success", "missing_in_to", DRAFT)
    assert (out["from_revision"]["revision_id"], out["to_revision"]["revision_id"]) == (DEC_2024, DRAFT)
    old = out["from_section"]
    assert (old["version_label"], old["section_ref"], old["page_numbers"]) == ("December 2024", "Para 116", [33])
    assert old["text"].startswith("116. Development should only be prevented or refused on highways grounds")
    assert out["to_section"] is None and out["diff"] is None
    best = out["matches"][0]
    assert (best["section_ref"], best["revision_id"], best["page_numbers"]) == ("Policy TR6", DRAFT, [73])
    assert "unacceptable impact on highway safety" in best["passage"]
    assert best["score"] > out["matches"][1]["score"] and 0 < best["retrieval_score"] <= 1


async def test_the_drafts_policy_maps_back_to_the_paragraph_and_dates_pick_the_same_revisions(
    nppf_service: Service,
) -> None:
    by_date = await call(
        nppf_service.url,
        "compare_policy_section",
        {"source": "NPPF", "section_ref": "Policy TR6", "from_date": "2025-06-01", "to_date": "2099-01-01"},
    )
    by_id = await call(
        nppf_service.url,
        "compare_policy_section",
        {"source": "NPPF", "section_ref": "Policy TR6", "from_revision_id": DEC_2024, "to_revision_id": DRAFT},
    )
    assert by_date == by_id
    assert (by_id["reference_status"], by_id["matches_in"]) == ("missing_in_from", DEC_2024)
    assert by_id["matches"][0]["section_ref"] == "Para 116"


async def test_a_reference_in_both_that_now_says_something_else_gets_a_word_diff_and_matches(
    nppf_service: Service,
) -> None:
    out = await call(nppf_service.url, "compare_policy_section", {"source": "NPPF", "section_ref": "Para 1"})
    assert out["reference_status"] == "different"
    diff = out["diff"]
    assert diff["similarity"] < 0.5 and diff["words_removed"] > 0 and diff["words_added"] > 0
    assert "[-" in diff["rendered"] and "{+" in diff["rendered"]
    assert out["matches_in"] == DRAFT and out["matches"]


@pytest.mark.parametrize(
    ("arguments", "error_type"),
    [
        ({"section_ref": "Para 9999"}, "section_not_found"),
        ({"from_revision_id": DRAFT, "to_revision_id": DRAFT}, "invalid_argument"),
        ({"from_date": "2020-01-01"}, "revision_not_found"),
        ({"source": "NOPE"}, "policy_not_found"),
    ],
)
async def test_compare_errors(nppf_service: Service, arguments: dict, error_type: str) -> None:
    out = await call(
        nppf_service.url, "compare_policy_section", {"source": "NPPF", "section_ref": "Para 116"} | arguments
    )
    assert (out["status"], out["error_type"]) == ("error", error_type)


async def test_rest_compare_takes_revision_ids_or_dates_and_answers_as_the_tool(nppf_service: Service) -> None:
    tool = await call(nppf_service.url, "compare_policy_section", {"source": "NPPF", "section_ref": "Para 116"})
    with nppf_service.rest() as api:
        response = api.get(
            "/policies/NPPF/compare", params={"section_ref": "Para 116", "from": DEC_2024, "to": "2099-01-01"}
        )
        missing = api.get("/policies/NPPF/compare", params={"section_ref": "Para 9999"})
        bad_date = api.get("/policies/NPPF/compare", params={"section_ref": "Para 116", "from": "2024-02-30"})
    assert response.status_code == 200, response.text
    assert response.json() == {k: v for k, v in tool.items() if k != "status"}  # marked alike (document_content)
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "section_not_found")
    assert (bad_date.status_code, bad_date.json()["error"]["code"]) == (400, "invalid_date")
