"""Temporal acceptance on the real NPPF PDFs (December 2024 in force from 2024-12-12; the December 2025
consultation draft registered as if in force from 2099-01-01), over each transport as an agent asks."""

from __future__ import annotations

import pytest

from tests.mcp_service.conftest import Service
from tests.mcp_service.tools import call

pytestmark = pytest.mark.anyio

QUESTION = "When should development be refused on highways grounds?"


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_a_highways_question_is_answered_from_the_revision_in_force_on_each_date(
    nppf_service: Service, transport: str
) -> None:
    async def ask(day: str) -> list[dict]:
        out = await call(
            nppf_service.url, "search_policy", {"query": QUESTION, "effective_date": day}, transport=transport
        )
        assert out["status"] == "success" and out["results_count"] == len(out["results"])
        return out["results"]

    in_2025 = await ask("2025-06-01")
    assert {h["revision_id"] for h in in_2025} == {"rev_NPPF_2024_12"}
    assert {h["version_label"] for h in in_2025} == {"December 2024"}
    top = in_2025[0]
    assert (top["source"], top["section_ref"], top["page_number"]) == ("NPPF", "Para 116", 33)
    assert "refused on highways grounds" in top["text"]

    in_2099 = await ask("2099-06-01")
    assert in_2099 and {h["revision_id"] for h in in_2099} == {"rev_NPPF_2099_01_DRAFT"}

    assert await ask("2024-12-11") == []
    assert await ask("2024-12-12") != []
    assert {h["revision_id"] for h in await ask("2098-12-31")} == {"rev_NPPF_2024_12"}
