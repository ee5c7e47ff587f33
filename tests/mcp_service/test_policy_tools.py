"""Every tool of spec 000 (and the three extra ones), positive and edge cases, over Streamable HTTP against
the real NPPF revisions; writes go to policies of the test's own."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lib.policies.audit import audit_store
from lib.policies.lifecycle import register_revision
from lib.policies.models import PolicyCreate, RevisionCreate
from lib.stores.objects import sha256_bytes
from tests.fixtures_paths import IMAGE_ONLY_PDF
from tests.flows.policy_pdfs import policy_pdf_bytes
from tests.mcp_service.conftest import Service
from tests.mcp_service.tools import call

pytestmark = pytest.mark.anyio

HIGHWAYS = "When should development be refused on highways grounds?"
DEC_2024, DRAFT = "rev_NPPF_2024_12", "rev_NPPF_2099_01_DRAFT"
HIT_FIELDS = {
    "chunk_id",
    "text",
    "relevance_score",
    "score",
    "source",
    "revision_id",
    "version_label",
    "section_ref",
    "page_number",
}


# -- search_policy (FR-001) -----------------------------------------------------------------------


async def test_search_as_of_a_date_returns_only_that_revision_with_spec_fields(nppf_service: Service) -> None:
    out = await call(nppf_service.url, "search_policy", {"query": HIGHWAYS, "effective_date": "2024-03-15"})
    assert out == {
        "status": "success",
        "query": HIGHWAYS,
        "effective_date": "2024-03-15",
        "results_count": 0,
        "results": [],
    }
    out = await call(nppf_service.url, "search_policy", {"query": HIGHWAYS, "effective_date": "2025-06-01"})
    assert out["status"] == "success" and out["effective_date"] == "2025-06-01"
    assert out["results_count"] == len(out["results"]) == 10
    assert {h["revision_id"] for h in out["results"]} == {DEC_2024}
    assert set(out["results"][0]) >= HIT_FIELDS
    scores = [h["score"] for h in out["results"]]
    assert scores == sorted(scores, reverse=True) and all(0 <= s <= 1 for s in scores)
    assert all(0 <= h["relevance_score"] <= 1 for h in out["results"])


async def test_search_without_a_date_sees_every_revision_superseded_included(nppf_service: Service) -> None:
    out = await call(nppf_service.url, "search_policy", {"query": HIGHWAYS, "n_results": 30})
    assert out["effective_date"] is None
    assert {h["revision_id"] for h in out["results"]} == {DEC_2024, DRAFT}


async def test_search_filtered_by_sources(nppf_service: Service) -> None:
    out = await call(nppf_service.url, "search_policy", {"query": "green belt", "sources": ["NPPF"], "n_results": 3})
    assert out["results_count"] == 3 and {h["source"] for h in out["results"]} == {"NPPF"}
    out = await call(nppf_service.url, "search_policy", {"query": "green belt", "sources": ["LTN_1_20"]})
    assert out["status"] == "error" and out["error_type"] == "policy_not_found"


@pytest.mark.parametrize(
    ("arguments", "error_type"),
    [
        ({"effective_date": "15/03/2024"}, "invalid_date"),
        ({"effective_date": "2024-02-30"}, "invalid_date"),
        ({"n_results": 0}, "invalid_argument"),
        ({"n_results": 51}, "invalid_argument"),
        ({"query": "   "}, "invalid_argument"),
        ({"sources": ["not-a-slug"]}, "invalid_source"),
    ],
)
async def test_search_rejects_bad_arguments_in_the_spec_envelope(
    nppf_service: Service, arguments: dict, error_type: str
) -> None:
    out = await call(nppf_service.url, "search_policy", {"query": HIGHWAYS, **arguments})
    assert set(out) == {"status", "error_type", "message"}
    assert (out["status"], out["error_type"]) == ("error", error_type)


async def test_search_policy_batch_answers_each_query_in_order(nppf_service: Service) -> None:
    queries = [HIGHWAYS, "green belt boundaries"]
    args = {"queries": queries, "effective_date": "2025-06-01", "n_results": 2}
    out = await call(nppf_service.url, "search_policy_batch", args)
    assert out["query_count"] == 2 and [r["query"] for r in out["results"]] == queries
    assert out["results"][0]["results"][0]["section_ref"] == "Para 116"
    assert all(r["results_count"] == 2 for r in out["results"])
    out = await call(nppf_service.url, "search_policy_batch", {"queries": []})
    assert out["error_type"] == "invalid_argument"


# -- get_policy_section (FR-002) ------------------------------------------------------------------


async def test_section_defaults_to_the_revision_in_force_today(nppf_service: Service) -> None:
    out = await call(nppf_service.url, "get_policy_section", {"source": "NPPF", "section_ref": "Para 116"})
    assert (out["status"], out["revision_id"], out["version_label"]) == ("success", DEC_2024, "December 2024")
    assert out["page_numbers"] == [33] and out["text"].startswith("116. Development should only be prevented")
    assert {"source", "section_ref", "revision_id", "version_label", "text", "page_numbers"} <= set(out)


async def test_section_of_a_named_revision_or_as_of_a_date(nppf_service: Service) -> None:
    by_id = await call(
        nppf_service.url, "get_policy_section", {"source": "NPPF", "section_ref": "Policy DM4", "revision_id": DRAFT}
    )
    by_date = await call(
        nppf_service.url,
        "get_policy_section",
        {"source": "NPPF", "section_ref": "Policy DM4", "effective_date": "2099-01-01"},
    )
    assert by_id == by_date and by_id["revision_id"] == DRAFT


async def test_chapter_reference_returns_the_whole_chapter_across_pages(nppf_service: Service) -> None:
    out = await call(nppf_service.url, "get_policy_section", {"source": "NPPF", "section_ref": "Chapter 9"})
    assert out["page_numbers"] == [31, 32, 33] and "116." in out["text"]


@pytest.mark.parametrize(
    ("arguments", "error_type"),
    [
        ({"section_ref": "Para 9999"}, "section_not_found"),
        ({"section_ref": "Para 116", "effective_date": "2020-01-01"}, "revision_not_found"),
        ({"section_ref": "Para 116", "revision_id": "rev_NPPF_1999_01"}, "revision_not_found"),
        ({"source": "NOPE"}, "policy_not_found"),
    ],
)
async def test_section_errors(nppf_service: Service, arguments: dict, error_type: str) -> None:
    out = await call(nppf_service.url, "get_policy_section", {"source": "NPPF", "section_ref": "Para 116", **arguments})
    assert (out["status"], out["error_type"]) == ("error", error_type)


# -- snapshot, documents, revisions (FR-003, FR-004) ----------------------------------------------


async def test_snapshot_names_the_revision_in_force_or_why_none(nppf_service: Service) -> None:
    out = await call(nppf_service.url, "get_policy_snapshot", {"effective_date": "2025-06-01"})
    assert [p["revision"]["revision_id"] for p in out["policies"] if p["source"] == "NPPF"] == [DEC_2024]
    out = await call(nppf_service.url, "get_policy_snapshot", {"effective_date": "2020-01-01"})
    assert [(p["source"], p["reason"]) for p in out["policies_not_yet_effective"]] == [
        ("NPPF", "date_before_first_revision")
    ]
    assert (await call(nppf_service.url, "get_policy_snapshot", {"effective_date": "soon"}))["error_type"] == (
        "invalid_date"
    )


async def test_list_policy_documents_gives_slug_title_category(nppf_service: Service) -> None:
    out = await call(nppf_service.url, "list_policy_documents")
    nppf = next(p for p in out["policies"] if p["source"] == "NPPF")
    assert out["policy_count"] == len(out["policies"])
    assert (nppf["title"], nppf["category"]) == ("National Planning Policy Framework", "national_policy")
    assert nppf["current_revision"]["revision_id"] == DEC_2024


async def test_list_policy_documents_on_an_empty_registry(fresh_service: Service) -> None:
    assert await call(fresh_service.url, "list_policy_documents") == {
        "status": "success",
        "policy_count": 0,
        "policies": [],
    }


async def test_list_policy_revisions_newest_first_with_dates_and_counts(nppf_service: Service) -> None:
    out = await call(nppf_service.url, "list_policy_revisions", {"source": "NPPF"})
    assert out["revision_count"] == 2
    draft, dec = out["revisions"]
    assert (draft["revision_id"], draft["status"], draft["effective_to"]) == (DRAFT, "active", None)
    assert (dec["revision_id"], dec["status"]) == (DEC_2024, "superseded")
    assert (dec["effective_from"], dec["effective_to"]) == ("2024-12-12", "2098-12-31")
    assert dec["chunk_count"] == nppf_service.stores.policies.vectors.count_revision("NPPF", DEC_2024) > 100


async def test_list_policy_revisions_edges(fresh_service: Service) -> None:
    out = await call(fresh_service.url, "list_policy_revisions", {"source": "NPPF"})
    assert out["error_type"] == "policy_not_found"
    fresh_service.stores.policies.registry.create_policy(
        PolicyCreate(source="LTN_1_20", title="LTN", category="national_guidance")
    )
    july = RevisionCreate(version_label="July 2020", effective_from="2020-07-27")
    register_revision(fresh_service.stores.policies, "LTN_1_20", july, policy_pdf_bytes())
    out = await call(fresh_service.url, "list_policy_revisions", {"source": "LTN_1_20"})
    assert out["revision_count"] == 1 and out["revisions"][0]["status"] == "processing"


# -- ingest_policy_revision and remove_policy_revision (FR-005, FR-006) ---------------------------


@pytest.fixture
def registered(fresh_service: Service) -> tuple[Service, Path]:
    """LTN_1_20 with one registered revision and its PDF in the allowed inbox."""
    stores = fresh_service.stores.policies
    stores.registry.create_policy(
        PolicyCreate(source="LTN_1_20", title="Cycle Infrastructure Design", category="national_guidance")
    )
    pdf = fresh_service.settings.files.allowed_roots[0] / "ltn.pdf"
    pdf.write_bytes(policy_pdf_bytes(edition="July 2020"))
    register_revision(
        stores,
        "LTN_1_20",
        RevisionCreate(revision_id="rev_LTN_1_20_2020_07", version_label="July 2020", effective_from="2020-07-27"),
        pdf.read_bytes(),
    )
    return fresh_service, pdf


async def test_ingest_then_search_then_reingest_is_idempotent_and_reindex_rebuilds(
    registered: tuple[Service, Path],
) -> None:
    service, pdf = registered
    args = {"source": "LTN_1_20", "revision_id": "rev_LTN_1_20_2020_07", "file_path": str(pdf)}
    out = await call(service.url, "ingest_policy_revision", args)
    assert (out["status"], out["action"], out["page_count"], out["extraction_method"]) == (
        "success",
        "ingested",
        2,
        "text_layer",
    )
    assert (
        out["chunks_created"] == service.stores.policies.vectors.count_revision("LTN_1_20", "rev_LTN_1_20_2020_07") > 0
    )
    found = await call(service.url, "search_policy", {"query": "cycle lane width", "effective_date": "2021-01-01"})
    assert found["results"][0]["revision_id"] == "rev_LTN_1_20_2020_07"
    again = await call(service.url, "ingest_policy_revision", args)
    assert again["action"] == "unchanged" and again["chunks_created"] == out["chunks_created"]
    rebuilt = await call(service.url, "ingest_policy_revision", {**args, "reindex": True})
    assert rebuilt["action"] == "reindexed" and rebuilt["chunks_created"] == out["chunks_created"]


@pytest.mark.parametrize(
    ("change", "error_type"),
    [
        ({"revision_id": "rev_LTN_1_20_2030_01"}, "revision_not_found"),
        ({"file_path": "/etc/hostname"}, "path_not_allowed"),
        ({"file_path": "missing.pdf"}, "file_not_found"),
        ({"file_path": "notes.txt"}, "unsupported_file_type"),
        ({"file_path": "scan.pdf"}, "revision_already_exists"),
    ],
)
async def test_ingest_errors(registered: tuple[Service, Path], change: dict, error_type: str) -> None:
    service, pdf = registered
    inbox = pdf.parent
    (inbox / "notes.txt").write_text("not a pdf")
    shutil.copy(IMAGE_ONLY_PDF, inbox / "scan.pdf")
    args = {"source": "LTN_1_20", "revision_id": "rev_LTN_1_20_2020_07", "file_path": str(pdf)} | change
    if not args["file_path"].startswith("/"):
        args["file_path"] = str(inbox / args["file_path"])
    out = await call(service.url, "ingest_policy_revision", args)
    assert (out["status"], out["error_type"]) == ("error", error_type)


async def test_ingest_of_a_pdf_without_text_fails_with_no_content(fresh_service: Service) -> None:
    stores = fresh_service.stores.policies
    stores.registry.create_policy(PolicyCreate(source="SCAN", title="Scanned", category="local_guidance"))
    scan = fresh_service.settings.files.allowed_roots[0] / "scan.pdf"
    shutil.copy(IMAGE_ONLY_PDF, scan)
    register_revision(
        stores,
        "SCAN",
        RevisionCreate(revision_id="rev_scan", version_label="v1", effective_from="2020-01-01"),
        scan.read_bytes(),
    )
    out = await call(
        fresh_service.url,
        "ingest_policy_revision",
        {"source": "SCAN", "revision_id": "rev_scan", "file_path": str(scan)},
    )
    assert (out["status"], out["error_type"]) == ("error", "no_content")
    assert stores.registry.get_revision("SCAN", "rev_scan").status.value == "failed"


async def test_remove_takes_only_the_chunks_and_ingesting_the_same_file_again_rebuilds_them(
    registered: tuple[Service, Path],
) -> None:
    service, pdf = registered
    stores = service.stores.policies
    args = {"source": "LTN_1_20", "revision_id": "rev_LTN_1_20_2020_07"}
    ingested = await call(service.url, "ingest_policy_revision", {**args, "file_path": str(pdf)})
    before = stores.registry.get_revision("LTN_1_20", "rev_LTN_1_20_2020_07")

    out = await call(service.url, "remove_policy_revision", args)

    assert out == {"status": "success", **args, "chunks_removed": ingested["chunks_created"]}
    assert stores.vectors.count_revision("LTN_1_20", "rev_LTN_1_20_2020_07") == 0
    after = stores.registry.get_revision("LTN_1_20", "rev_LTN_1_20_2020_07")
    assert after.model_dump() == before.model_dump()  # the record as the spec has it is untouched
    assert after.chunks_generation > before.chunks_generation  # what a replica's index is stamped with moved
    assert stores.objects.exists(before.file_path)
    found = await call(service.url, "search_policy", {"query": "cycle lane width", "effective_date": "2021-01-01"})
    assert found["results_count"] == 0
    assert [(f.kind.value, f.repair) for f in audit_store(stores).findings] == [
        ("chunk_count_mismatch", "re-ingest from the stored file")
    ]
    again = await call(service.url, "remove_policy_revision", args)
    assert again == {"status": "success", **args, "chunks_removed": 0}

    rebuilt = await call(service.url, "ingest_policy_revision", {**args, "file_path": str(pdf)})
    assert (rebuilt["action"], rebuilt["chunks_created"]) == ("ingested", ingested["chunks_created"])
    found = await call(service.url, "search_policy", {"query": "cycle lane width", "effective_date": "2021-01-01"})
    assert found["results"][0]["revision_id"] == "rev_LTN_1_20_2020_07"
    assert audit_store(stores).ok


async def test_remove_of_a_registered_revision_without_chunks_reports_zero(registered: tuple[Service, Path]) -> None:
    service, _ = registered
    args = {"source": "LTN_1_20", "revision_id": "rev_LTN_1_20_2020_07"}
    out = await call(service.url, "remove_policy_revision", args)
    assert out == {"status": "success", **args, "chunks_removed": 0}


async def test_remove_of_a_policy_or_revision_that_does_not_exist_is_not_found(
    registered: tuple[Service, Path],
) -> None:
    """Issue 46: it answered success with chunks_removed 0 for anything at all."""
    service, _ = registered
    gone = await call(service.url, "remove_policy_revision", {"source": "LTN_1_20", "revision_id": "rev_gone"})
    assert (gone["status"], gone["error_type"]) == ("error", "revision_not_found")
    nope = await call(service.url, "remove_policy_revision", {"source": "NOPE", "revision_id": "rev_gone"})
    assert (nope["status"], nope["error_type"]) == ("error", "policy_not_found")


async def test_reindex_with_another_file_replaces_the_stored_original_and_its_chunks(
    registered: tuple[Service, Path],
) -> None:
    service, pdf = registered
    stores = service.stores.policies
    args = {"source": "LTN_1_20", "revision_id": "rev_LTN_1_20_2020_07"}
    await call(service.url, "ingest_policy_revision", {**args, "file_path": str(pdf)})
    old = stores.registry.get_revision("LTN_1_20", "rev_LTN_1_20_2020_07")
    corrected = pdf.parent / "ltn-corrected.pdf"
    corrected.write_bytes(policy_pdf_bytes(edition="corrected July 2020"))

    refused = await call(service.url, "ingest_policy_revision", {**args, "file_path": str(corrected)})
    assert refused["error_type"] == "revision_already_exists"
    out = await call(service.url, "ingest_policy_revision", {**args, "file_path": str(corrected), "reindex": True})

    assert (out["status"], out["action"], out["extraction_method"]) == ("success", "reindexed", "text_layer")
    new = stores.registry.get_revision("LTN_1_20", "rev_LTN_1_20_2020_07")
    assert new.file_sha256 == sha256_bytes(corrected.read_bytes()) != old.file_sha256
    assert stores.objects.get_bytes(new.file_path) == corrected.read_bytes() and not stores.objects.exists(
        old.file_path
    )
    assert (new.status, new.chunk_count) == (old.status, out["chunks_created"])
    chunks = stores.vectors.section_chunks("LTN_1_20", "rev_LTN_1_20_2020_07", "Para 1")
    assert chunks and all("corrected July 2020" in c.text for c in chunks)
    assert audit_store(stores).ok
    same = await call(service.url, "ingest_policy_revision", {**args, "file_path": str(corrected)})
    assert same["action"] == "unchanged"
