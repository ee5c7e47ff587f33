"""The section tools of issue 22 over Streamable HTTP and REST: get_policy_section as people type refs,
list_policy_sections (a revision's table of contents) and find_citing_sections, on the real NPPF and on a
local plan stored through the pipeline's ``store_chunks``."""

from __future__ import annotations

import pytest

from lib.policies.models import PolicyCreate
from tests.lib.policies.test_sections import NEW, OLD, plan, store
from tests.mcp_service.conftest import Service, mcp_session
from tests.mcp_service.tools import call

pytestmark = pytest.mark.anyio

DEC_2024 = "rev_NPPF_2024_12"


async def test_nppf_paragraphs_answer_to_what_people_type(nppf_service: Service) -> None:
    for typed in ("116", "paragraph 116", "para 116"):
        out = await call(
            nppf_service.url,
            "get_policy_section",
            {"source": "NPPF", "section_ref": typed, "effective_date": "2025-06-01"},
        )
        assert (out["status"], out["section_ref"], out["revision_id"]) == ("success", "Para 116", DEC_2024)
        assert out["kind"] == "paragraph" and out["page_numbers"] == [33]


async def test_a_miss_is_section_not_found_with_the_nearest_refs(nppf_service: Service) -> None:
    out = await call(
        nppf_service.url,
        "get_policy_section",
        {"source": "NPPF", "section_ref": "Para 9999", "effective_date": "2025-06-01"},
    )
    assert set(out) == {"status", "error_type", "message"}
    assert out["error_type"] == "section_not_found"
    assert out["message"].startswith("Section 'Para 9999' not found in NPPF revision 'rev_NPPF_2024_12'")


async def test_the_nppf_table_of_contents_and_its_own_citations(nppf_service: Service) -> None:
    out = await call(nppf_service.url, "list_policy_sections", {"source": "NPPF", "effective_date": "2025-06-01"})
    assert out["status"] == "success" and out["revision_id"] == DEC_2024
    refs = [s["section_ref"] for s in out["sections"]]
    assert out["section_count"] == len(refs) == len(set(refs))
    assert {"Para 11", "Para 116", "Chapter 9"} <= set(refs)
    assert refs.index("Para 115") < refs.index("Para 116")
    para_116 = out["sections"][refs.index("Para 116")]
    assert (para_116["kind"], para_116["page_numbers"]) == ("paragraph", [33])
    footnotes = await call(
        nppf_service.url, "list_policy_sections", {"source": "NPPF", "revision_id": DEC_2024, "kind": "footnote"}
    )
    assert footnotes["section_count"] > 0 and {s["kind"] for s in footnotes["sections"]} == {"footnote"}
    citing = await call(
        nppf_service.url,
        "find_citing_sections",
        {"source": "NPPF", "section_ref": "paragraph 11", "effective_date": "2025-06-01"},
    )
    assert citing["status"] == "success" and citing["section_ref"] == "Para 11" and citing["section_count"] > 0
    assert {(s["source"], s["revision_id"]) for s in citing["sections"]} == {("NPPF", DEC_2024)}
    first = citing["sections"][0]["section_ref"]
    section = await call(
        nppf_service.url, "get_policy_section", {"source": "NPPF", "section_ref": first, "revision_id": DEC_2024}
    )
    assert {"section_ref": "Para 11", "source": "NPPF", "document": None} in section["cites"]


@pytest.mark.parametrize(
    ("tool", "arguments", "error_type"),
    [
        ("list_policy_sections", {"source": "NPPF", "kind": "clause"}, "invalid_argument"),
        ("list_policy_sections", {"source": "NPPF", "effective_date": "2000-01-01"}, "revision_not_found"),
        ("list_policy_sections", {"source": "NOPE"}, "policy_not_found"),
        ("find_citing_sections", {"source": "NPPF", "section_ref": "  "}, "invalid_argument"),
        (
            "find_citing_sections",
            {"source": "NPPF", "section_ref": "Para 11", "effective_date": "11/2025"},
            "invalid_date",
        ),
        ("find_citing_sections", {"source": "NOPE", "section_ref": "Para 11"}, "policy_not_found"),
    ],
)
async def test_bad_arguments_get_the_spec_envelope(
    nppf_service: Service, tool: str, arguments: dict, error_type: str
) -> None:
    out = await call(nppf_service.url, tool, arguments)
    assert (out["status"], out["error_type"]) == ("error", error_type)


async def test_the_new_tools_are_read_only_and_described_in_clean_text(nppf_service: Service) -> None:
    async with mcp_session(nppf_service.url) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
    for name in ("list_policy_sections", "find_citing_sections"):
        assert tools[name].annotations is not None and tools[name].annotations.read_only_hint is True
        assert tools[name].output_schema is not None
        assert not any(line.startswith(" ") for line in (tools[name].description or "").splitlines())


async def test_a_local_plan_is_read_and_cited_as_of_a_date_over_mcp_and_rest(fresh_service: Service) -> None:
    stores = fresh_service.stores.policies
    for source, title in [("NPPF", "National Planning Policy Framework"), ("TEWKESBURY", "Tewkesbury Borough Plan")]:
        stores.registry.create_policy(PolicyCreate(source=source, title=title, category="local_plan"))
    store(stores, "TEWKESBURY", OLD, "2017-06-01", plan("2017", cite_nppf=True))
    store(stores, "TEWKESBURY", NEW, "2022-06-08", plan("2022", cite_nppf=False))
    out = await call(fresh_service.url, "get_policy_section", {"source": "TEWKESBURY", "section_ref": "policy res9"})
    assert (out["section_ref"], out["revision_id"], out["title"]) == ("Policy RES9", NEW, "Replacement dwellings")
    miss = await call(fresh_service.url, "get_policy_section", {"source": "TEWKESBURY", "section_ref": "RES7"})
    assert miss["error_type"] == "section_not_found" and "Did you mean: Policy RES8, Policy RES9" in miss["message"]
    citing = await call(
        fresh_service.url,
        "find_citing_sections",
        {"source": "NPPF", "section_ref": "Para 11", "effective_date": "2018-01-01"},
    )
    assert [(s["source"], s["revision_id"], s["section_ref"]) for s in citing["sections"]] == [
        ("TEWKESBURY", OLD, "Para 3.60")
    ]
    with fresh_service.rest() as rest:
        toc = rest.get(f"/policies/TEWKESBURY/revisions/{NEW}/sections", params={"kind": "policy"})
        assert toc.status_code == 200
        assert [s["section_ref"] for s in toc.json()["sections"]] == ["Policy RES8", "Policy RES9"]
        cited = rest.get("/policies/NPPF/citations", params={"section_ref": "paragraph 11", "date": "2018-01-01"})
        assert cited.status_code == 200 and cited.json()["sections"][0]["section_ref"] == "Para 3.60"
        missing = rest.get("/policies/TEWKESBURY/revisions/rev_nope/sections")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "revision_not_found"
        assert rest.get(f"/policies/TEWKESBURY/revisions/{NEW}/sections", params={"kind": "x"}).status_code == 422
