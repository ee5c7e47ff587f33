"""Spec 001's end-to-end scenarios through the running service: REST for the administrator, the MCP SDK
client for the agent, small generated policy PDFs (``tests.flows.policy_pdfs``) to keep them quick.

- E2E-01 policy management: register a policy, upload a revision, follow its status, find it by search.
- E2E-03 policy update: a new edition supersedes the old one; both stay searchable, each on its dates.
- E2E-04 first deployment: a fresh stack seeded by the seed flow answers the agent.
"""

from __future__ import annotations

import httpx
import pytest
import yaml

from flows.common import bound_stores
from flows.seed import seed_policies
from tests.flows.policy_pdfs import policy_pdf_bytes, write_policy_pdf
from tests.mcp_service.conftest import Service
from tests.mcp_service.tools import call
from tests.polling import eventually

pytestmark = pytest.mark.anyio

JOB_TIMEOUT_S = 180
QUESTION = "cycle lanes on busy roads"
LTN = {"source": "LTN_1_20", "title": "Cycle Infrastructure Design (LTN 1/20)", "category": "national_guidance"}


def upload_and_settle(api: httpx.Client, edition: str, effective_from: str) -> dict:
    """Upload a revision of LTN 1/20 and wait until its ingestion has settled; the upload's 202 body."""
    form = {"version_label": edition, "effective_from": effective_from}
    pdf = policy_pdf_bytes(edition=edition)
    response = api.post("/policies/LTN_1_20/revisions", files={"file": ("ltn.pdf", pdf, "application/pdf")}, data=form)
    assert response.status_code == 202, response.text
    accepted = response.json()
    status_url = accepted["links"]["status"].removeprefix("/api/v1")

    def settled() -> bool:
        return api.get(status_url).json()["status"] != "processing"

    eventually(settled, within=JOB_TIMEOUT_S, every=0.25)
    assert api.get(status_url).json()["status"] in ("active", "superseded")
    return accepted


async def test_e2e01_a_policy_registered_and_uploaded_over_rest_is_found_by_the_agent(fresh_service: Service) -> None:
    with fresh_service.rest() as api:
        assert api.post("/policies", json=LTN).status_code == 201
        accepted = upload_and_settle(api, "July 2020", "2020-07-27")
        detail = api.get("/policies/LTN_1_20").json()
    assert accepted["revision_id"] == "rev_LTN_1_20_2020_07"
    assert detail["current_revision"]["revision_id"] == "rev_LTN_1_20_2020_07"

    found = await call(fresh_service.url, "search_policy", {"query": QUESTION, "sources": ["LTN_1_20"]})
    best = found["results"][0]
    assert (best["source"], best["revision_id"], best["version_label"]) == (
        "LTN_1_20",
        "rev_LTN_1_20_2020_07",
        "July 2020",
    )
    assert "July 2020 text" in best["text"]


async def test_e2e03_a_new_edition_supersedes_the_old_and_dated_searches_follow(fresh_service: Service) -> None:
    with fresh_service.rest() as api:
        api.post("/policies", json=LTN)
        upload_and_settle(api, "July 2020", "2020-07-27")
        accepted = upload_and_settle(api, "2026 update", "2026-01-01")
        old = api.get("/policies/LTN_1_20/revisions/rev_LTN_1_20_2020_07").json()
    assert [s["revision_id"] for s in accepted["side_effects"]["superseded"]] == ["rev_LTN_1_20_2020_07"]
    assert (old["status"], old["effective_to"]) == ("superseded", "2025-12-31")

    revisions = await call(fresh_service.url, "list_policy_revisions", {"source": "LTN_1_20"})
    assert [(r["revision_id"], r["status"]) for r in revisions["revisions"]] == [
        ("rev_LTN_1_20_2026_01", "active"),
        ("rev_LTN_1_20_2020_07", "superseded"),
    ]
    for day, revision_id, edition in [
        ("2024-03-15", "rev_LTN_1_20_2020_07", "July 2020"),
        ("2025-12-31", "rev_LTN_1_20_2020_07", "July 2020"),
        ("2026-01-01", "rev_LTN_1_20_2026_01", "2026 update"),
    ]:
        out = await call(fresh_service.url, "search_policy", {"query": QUESTION, "effective_date": day})
        assert {h["revision_id"] for h in out["results"]} == {revision_id}, day
        assert f"{edition} text" in out["results"][0]["text"]
    undated = await call(fresh_service.url, "search_policy", {"query": QUESTION, "n_results": 20})
    assert {h["revision_id"] for h in undated["results"]} == {"rev_LTN_1_20_2020_07", "rev_LTN_1_20_2026_01"}


async def test_e2e04_a_fresh_stack_seeded_by_the_seed_flow_answers_the_agent(fresh_service: Service) -> None:
    inbox = fresh_service.settings.files.allowed_roots[0] / "seed"
    inbox.mkdir()
    write_policy_pdf(inbox / "ltn.pdf", edition="July 2020")
    write_policy_pdf(inbox / "nppf.pdf", edition="December 2024")
    config = inbox / "seed.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "policies": [
                    LTN
                    | {
                        "revisions": [{"version_label": "July 2020", "effective_from": "2020-07-27", "file": "ltn.pdf"}]
                    },
                    {
                        "source": "NPPF",
                        "title": "National Planning Policy Framework",
                        "category": "national_policy",
                        "revisions": [
                            {"version_label": "December 2024", "effective_from": "2024-12-12", "file": "nppf.pdf"}
                        ],
                    },
                ]
            }
        )
    )
    assert (await call(fresh_service.url, "list_policy_documents"))["policy_count"] == 0

    with bound_stores(fresh_service.stores):
        result = seed_policies(config=str(config))

    assert result.counts() == {"created_policy": 2, "ingested": 2}, result.message
    documents = await call(fresh_service.url, "list_policy_documents")
    assert {(p["source"], p["current_revision"]["revision_id"]) for p in documents["policies"]} == {
        ("LTN_1_20", "rev_LTN_1_20_2020_07"),
        ("NPPF", "rev_NPPF_2024_12"),
    }
    dated = {"query": "refused on highways grounds", "sources": ["NPPF"], "effective_date": "2025-01-01"}
    out = await call(fresh_service.url, "search_policy", dated)
    assert out["results"][0]["revision_id"] == "rev_NPPF_2024_12"
    snapshot = await call(fresh_service.url, "get_policy_snapshot", {"effective_date": "2025-01-01"})
    assert len(snapshot["policies"]) == 2
