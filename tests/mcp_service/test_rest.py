"""The REST API of spec 001 (PolicyRouter TS-01..TS-16) over HTTP, on an empty registry per test.

Uploads and reindexes really start the ingestion flow (in the service's background worker, as in the
embedded default); tests that start one wait for it to finish, so no work outlives its test.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from lib.policies.ingest import ingest_revision
from lib.policies.lifecycle import create_revision, fail_revision, register_revision
from lib.policies.models import PolicyCreate, RevisionCreate
from lib.stores.objects import sha256_bytes
from tests.flows.policy_pdfs import policy_pdf_bytes
from tests.mcp_service.conftest import Service
from tests.mcp_service.tools import call
from tests.polling import eventually

JOB_TIMEOUT_S = 180
NPPF = {"source": "NPPF", "title": "National Planning Policy Framework", "category": "national_policy"}


@pytest.fixture
def api(fresh_service: Service) -> Iterator[httpx.Client]:
    with fresh_service.rest() as client:
        yield client


def error_of(response: httpx.Response) -> tuple[int, str]:
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}, body
    return response.status_code, body["error"]["code"]


def with_policy(service: Service, source: str = "NPPF") -> None:
    service.stores.policies.registry.create_policy(
        PolicyCreate(source=source, title=f"{source} title", category="national_policy")
    )


def ingested(service: Service, source: str, revision_id: str, start: str, end: str | None = None) -> None:
    """A revision through the real pipeline, from a small generated PDF."""
    data = RevisionCreate(revision_id=revision_id, version_label=revision_id, effective_from=start, effective_to=end)
    register_revision(service.stores.policies, source, data, policy_pdf_bytes(edition=revision_id))
    ingest_revision(service.stores.policies, source, revision_id)


def wait_until_settled(api: httpx.Client, source: str, revision_id: str, phase: str = "done") -> dict:
    def settled() -> dict | None:
        status: dict = api.get(f"/policies/{source}/revisions/{revision_id}/status").json()
        if status["status"] == "failed" or (status["status"] != "processing" and status["progress"]["phase"] == phase):
            return status
        return None

    return eventually(settled, within=JOB_TIMEOUT_S, every=0.25, what=f"{source}/{revision_id} settling")


def upload(api: httpx.Client, source: str, content: bytes, name: str = "policy.pdf", **fields: str) -> httpx.Response:
    form = {"version_label": "December 2024", "effective_from": "2024-12-12"} | fields
    return api.post(f"/policies/{source}/revisions", files={"file": (name, content, "application/pdf")}, data=form)


# -- policies -------------------------------------------------------------------------------------


def test_ts01_register_a_policy(api: httpx.Client) -> None:
    response = api.post("/policies", json=NPPF | {"description": "The framework"})
    assert response.status_code == 201
    body = response.json()
    assert {k: body[k] for k in ("source", "title", "category", "description")} == NPPF | {
        "description": "The framework"
    }
    assert (body["current_revision"], body["revision_count"]) == (None, 0) and body["created_at"]


def test_ts02_a_duplicate_source_is_refused(api: httpx.Client) -> None:
    assert api.post("/policies", json=NPPF).status_code == 201
    assert error_of(api.post("/policies", json=NPPF)) == (409, "policy_already_exists")


@pytest.mark.parametrize("source", ["invalid-format", "nppf", "NPPF__X", ""])
def test_ts03_a_malformed_source_is_refused(api: httpx.Client, source: str) -> None:
    assert error_of(api.post("/policies", json=NPPF | {"source": source})) == (400, "invalid_source")


def test_other_body_errors_are_validation_errors(api: httpx.Client) -> None:
    assert error_of(api.post("/policies", json={"source": "NPPF", "category": "national_policy"})) == (
        422,
        "validation_error",
    )
    assert error_of(api.post("/policies", json=NPPF | {"category": "statute"})) == (422, "validation_error")


def test_ts07_list_policies_with_filters(fresh_service: Service, api: httpx.Client) -> None:
    for n, category in enumerate(
        ["national_policy", "national_guidance", "local_plan", "local_guidance", "county_strategy"]
    ):
        assert api.post("/policies", json={"source": f"P{n}", "title": f"Policy {n}", "category": category}).is_success
    ingested(fresh_service, "P0", "rev_p0", "2020-01-01")
    listed = api.get("/policies").json()
    assert listed["total"] == 5 == len(listed["policies"])
    assert api.get("/policies", params={"category": "local_plan"}).json()["policies"][0]["source"] == "P2"
    active = api.get("/policies", params={"status": "active"}).json()
    assert [(p["source"], p["current_revision"]["revision_id"]) for p in active["policies"]] == [("P0", "rev_p0")]
    assert api.get("/policies", params={"source": "P3"}).json()["total"] == 1


def test_ts08_policy_detail_lists_every_revision_newest_first(fresh_service: Service, api: httpx.Client) -> None:
    with_policy(fresh_service)
    stores = fresh_service.stores.policies
    for rid, start in [
        ("rev_NPPF_2021_07", "2021-07-20"),
        ("rev_NPPF_2023_09", "2023-09-05"),
        ("rev_NPPF_2024_12", "2024-12-12"),
    ]:
        create_revision(
            stores.registry,
            stores.vectors,
            "NPPF",
            RevisionCreate(revision_id=rid, version_label=rid, effective_from=start),
        )
    body = api.get("/policies/NPPF").json()
    assert [r["revision_id"] for r in body["revisions"]] == ["rev_NPPF_2024_12", "rev_NPPF_2023_09", "rev_NPPF_2021_07"]
    assert body["revisions"][1]["effective_to"] == "2024-12-11"


def test_ts09_unknown_policy_is_404_with_details(api: httpx.Client) -> None:
    response = api.get("/policies/INVALID")
    assert error_of(response) == (404, "policy_not_found")
    assert response.json()["error"]["details"] == {"source": "INVALID"}
    assert error_of(api.get("/policies/not-a-slug")) == (400, "invalid_source")


def test_patch_policy_metadata(fresh_service: Service, api: httpx.Client) -> None:
    with_policy(fresh_service)
    body = api.patch("/policies/NPPF", json={"title": "NPPF (2024)", "category": "national_guidance"}).json()
    assert (body["title"], body["category"]) == ("NPPF (2024)", "national_guidance")
    assert error_of(api.patch("/policies/NOPE", json={"title": "x"})) == (404, "policy_not_found")


# -- snapshot -------------------------------------------------------------------------------------


def test_ts10_snapshot_for_a_date(fresh_service: Service, api: httpx.Client) -> None:
    with_policy(fresh_service, "NPPF")
    with_policy(fresh_service, "LTN_1_20")
    with_policy(fresh_service, "LOCAL_PLAN")
    ingested(fresh_service, "NPPF", "rev_NPPF_2023_09", "2023-09-05")
    ingested(fresh_service, "LTN_1_20", "rev_LTN_1_20_2025_01", "2025-01-01")
    body = api.get("/policies/effective", params={"date": "2024-03-15"}).json()
    assert body["effective_date"] == "2024-03-15"
    assert [(p["source"], p["revision"]["revision_id"]) for p in body["policies"]] == [("NPPF", "rev_NPPF_2023_09")]
    assert [(p["source"], p["reason"]) for p in body["policies_not_yet_effective"]] == [
        ("LTN_1_20", "date_before_first_revision")
    ]
    assert [(p["source"], p["reason"]) for p in body["policies_with_no_revision_for_date"]] == [
        ("LOCAL_PLAN", "no_revisions")
    ]


@pytest.mark.parametrize("query", [{"date": "invalid"}, {"date": "2024-13-01"}, {}])
def test_ts11_snapshot_with_a_malformed_date(api: httpx.Client, query: dict) -> None:
    assert error_of(api.get("/policies/effective", params=query)) == (400, "invalid_effective_date")


# -- revisions ------------------------------------------------------------------------------------


def test_ts04_ts16_upload_starts_ingestion_reports_progress_and_becomes_searchable(
    fresh_service: Service, api: httpx.Client
) -> None:
    with_policy(fresh_service)
    ingested(fresh_service, "NPPF", "rev_NPPF_2023_09", "2023-09-05")
    content = policy_pdf_bytes(edition="December 2024")
    response = upload(api, "NPPF", content, name="upload.bin", revision_id="rev_NPPF_2024_12", notes="n")
    assert response.status_code == 202, response.text
    body = response.json()
    assert (body["revision_id"], body["status"], body["effective_to"]) == ("rev_NPPF_2024_12", "processing", None)
    assert body["ingestion_job_id"]
    assert body["links"] == {
        "self": "/api/v1/policies/NPPF/revisions/rev_NPPF_2024_12",
        "status": "/api/v1/policies/NPPF/revisions/rev_NPPF_2024_12/status",
    }
    assert response.headers["location"] == body["links"]["self"]
    assert [(s["revision_id"], s["effective_to"]) for s in body["side_effects"]["superseded"]] == [
        ("rev_NPPF_2023_09", "2024-12-11")
    ]
    first = api.get("/policies/NPPF/revisions/rev_NPPF_2024_12/status").json()
    assert first["status"] in ("processing", "active") and 0 <= first["progress"]["percent_complete"] <= 100
    settled = wait_until_settled(api, "NPPF", "rev_NPPF_2024_12")
    assert settled["status"] == "active", settled
    stored = fresh_service.stores.policies.vectors.count_revision("NPPF", "rev_NPPF_2024_12")
    assert settled["progress"] == {
        "phase": "done",
        "percent_complete": 100.0,
        "chunks_processed": stored,
        "chunks_total": stored,
    }
    detail = api.get("/policies/NPPF/revisions/rev_NPPF_2024_12").json()
    assert (detail["page_count"], detail["file_size_bytes"], detail["notes"]) == (2, len(content), "n")


@pytest.mark.anyio
async def test_an_uploaded_revision_answers_searches_as_of_its_dates(fresh_service: Service) -> None:
    with_policy(fresh_service)
    with fresh_service.rest() as api:
        upload(api, "NPPF", policy_pdf_bytes(edition="December 2024"), revision_id="rev_NPPF_2024_12")
        assert wait_until_settled(api, "NPPF", "rev_NPPF_2024_12")["status"] == "active"
    out = await call(
        fresh_service.url,
        "search_policy",
        {"query": "refused on highways grounds", "effective_date": "2025-01-01", "n_results": 1},
    )
    assert out["results"][0]["revision_id"] == "rev_NPPF_2024_12"
    assert "December 2024 text" in out["results"][0]["text"]


@pytest.mark.parametrize(
    ("content", "name"),
    [(b"PK\x03\x04" + b"\0" * 200, "policy.pdf"), (b"<html>not a pdf</html>", "policy.pdf"), (b"", "empty.pdf")],
)
def test_ts05_non_pdf_content_is_refused_whatever_its_name(
    fresh_service: Service, api: httpx.Client, content: bytes, name: str
) -> None:
    with_policy(fresh_service, "LTN_1_20")
    assert error_of(upload(api, "LTN_1_20", content, name=name)) == (422, "unsupported_file_type")
    assert fresh_service.stores.policies.registry.list_revisions("LTN_1_20") == []


def test_ts06_overlapping_dates_are_refused(fresh_service: Service, api: httpx.Client) -> None:
    with_policy(fresh_service)
    year = RevisionCreate(
        revision_id="rev_2024", version_label="2024", effective_from="2024-01-01", effective_to="2024-12-31"
    )
    create_revision(fresh_service.stores.policies.registry, fresh_service.stores.policies.vectors, "NPPF", year)
    response = upload(api, "NPPF", b"%PDF-1.7 overlap", effective_from="2024-06-01", effective_to="2024-08-01")
    assert error_of(response) == (409, "revision_overlap")
    assert response.json()["error"]["details"]["conflicting_revision_id"] == "rev_2024"
    assert list(fresh_service.stores.policies.objects.list("policies/")) == []


def test_a_failed_revision_is_retried_by_uploading_it_again_and_a_live_one_is_refused(
    fresh_service: Service, api: httpx.Client
) -> None:
    """Issue 46: after a failed ingestion (Prefect's local API not starting) the upload answered 409
    revision_already_exists, so only the MCP tool could retry it."""
    with_policy(fresh_service)
    stores = fresh_service.stores.policies
    data = RevisionCreate(revision_id="rev_NPPF_2024_12", version_label="December 2024", effective_from="2024-12-12")
    register_revision(stores, "NPPF", data, policy_pdf_bytes(edition="first try"))
    fail_revision(stores.registry, stores.vectors, "NPPF", "rev_NPPF_2024_12", "internal: local API did not start")
    content = policy_pdf_bytes(edition="December 2024")
    response = upload(api, "NPPF", content, revision_id="rev_NPPF_2024_12")
    assert response.status_code == 202, response.text
    settled = wait_until_settled(api, "NPPF", "rev_NPPF_2024_12")
    assert settled["status"] == "active", settled
    revision = stores.registry.get_revision("NPPF", "rev_NPPF_2024_12")
    assert (revision.error, revision.file_sha256) == ("", sha256_bytes(content))
    assert [key for key in stores.objects.list("policies/NPPF/")] == [revision.file_path], "the failed file went"
    again = upload(api, "NPPF", content, revision_id="rev_NPPF_2024_12")
    assert error_of(again) == (409, "revision_already_exists")


def test_upload_errors(fresh_service: Service, api: httpx.Client) -> None:
    assert error_of(upload(api, "NOPE", b"%PDF-1.7")) == (404, "policy_not_found")
    with_policy(fresh_service)
    assert error_of(upload(api, "NPPF", b"%PDF-1.7", effective_from="12/12/2024")) == (400, "invalid_date")
    missing_label = api.post(
        "/policies/NPPF/revisions", files={"file": ("a.pdf", b"%PDF-1.7")}, data={"effective_from": "2024-12-12"}
    )
    assert error_of(missing_label) == (422, "validation_error")
    no_file = api.post("/policies/NPPF/revisions", data={"version_label": "v", "effective_from": "2024-12-12"})
    assert error_of(no_file) == (422, "validation_error")


def test_uploads_over_the_limit_get_413_whether_declared_or_streamed(fresh_service: Service, api: httpx.Client) -> None:
    with_policy(fresh_service)
    too_big = b"%PDF-1.7\n" + b"0" * fresh_service.settings.files.max_upload_bytes
    assert error_of(upload(api, "NPPF", too_big)) == (413, "file_too_large")

    def chunked() -> Iterator[bytes]:  # no Content-Length: the limit is enforced as the body streams in
        boundary = b"--b0undary"
        yield boundary + b'\r\nContent-Disposition: form-data; name="version_label"\r\n\r\nv\r\n'
        yield boundary + b'\r\nContent-Disposition: form-data; name="effective_from"\r\n\r\n2024-12-12\r\n'
        yield boundary + b'\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-1.7\n'
        for _ in range(fresh_service.settings.files.max_upload_bytes // 65536 + 2):
            yield b"0" * 65536
        yield b"\r\n" + boundary + b"--\r\n"

    streamed = api.post(
        "/policies/NPPF/revisions",
        content=chunked(),
        headers={"Content-Type": "multipart/form-data; boundary=b0undary"},
    )
    assert error_of(streamed) == (413, "file_too_large")
    assert fresh_service.stores.policies.registry.list_revisions("NPPF") == []


def test_revision_detail_and_404s(fresh_service: Service, api: httpx.Client) -> None:
    with_policy(fresh_service)
    ingested(fresh_service, "NPPF", "rev_NPPF_2024_12", "2024-12-12")
    body = api.get("/policies/NPPF/revisions/rev_NPPF_2024_12").json()
    assert (body["status"], body["page_count"], body["extraction_method"]) == ("active", 2, "text_layer")
    assert body["chunk_count"] > 0 and body["file_sha256"]
    assert error_of(api.get("/policies/NPPF/revisions/rev_missing")) == (404, "revision_not_found")
    assert error_of(api.get("/policies/NOPE/revisions/rev_missing")) == (404, "policy_not_found")
    assert error_of(api.get("/policies/NPPF/revisions/rev_missing/status")) == (404, "revision_not_found")


def test_ts12_update_revision_metadata_and_overlap(fresh_service: Service, api: httpx.Client) -> None:
    with_policy(fresh_service)
    ingested(fresh_service, "NPPF", "rev_NPPF_2023_09", "2023-09-05")
    ingested(fresh_service, "NPPF", "rev_NPPF_2024_12", "2024-12-12")
    response = api.patch("/policies/NPPF/revisions/rev_NPPF_2024_12", json={"version_label": "Dec 2024", "notes": "x"})
    assert response.status_code == 200
    assert (response.json()["version_label"], response.json()["notes"]) == ("Dec 2024", "x")
    stored = fresh_service.stores.policies.vectors.collection.get(
        where={"revision_id": "rev_NPPF_2024_12"}, include=["metadatas"]
    )
    assert {m["version_label"] for m in stored["metadatas"]} == {"Dec 2024"}
    clash = api.patch("/policies/NPPF/revisions/rev_NPPF_2024_12", json={"effective_from": "2023-09-05"})
    assert error_of(clash) == (409, "revision_overlap")
    reopened = api.patch("/policies/NPPF/revisions/rev_NPPF_2023_09", json={"effective_to": None})
    assert error_of(reopened) == (409, "revision_overlap")
    assert error_of(api.patch("/policies/NPPF/revisions/rev_x", json={"notes": "n"})) == (404, "revision_not_found")
    assert error_of(api.patch("/policies/NPPF/revisions/rev_NPPF_2024_12", json={"colour": "red"})) == (
        422,
        "validation_error",
    )


@pytest.mark.parametrize("value", [0, 20240101, 1.5, True, "2024-1-1", "2024-12-12T00:00:00", {"y": 2024}, [2024]])
def test_patch_takes_dates_only_as_iso_strings(fresh_service: Service, api: httpx.Client, value: object) -> None:
    """Issue 46: a number was taken as a Unix timestamp (``0`` became 1970-01-01)."""
    with_policy(fresh_service)
    ingested(fresh_service, "NPPF", "rev_NPPF_2024_12", "2024-12-12")
    for field in ("effective_from", "effective_to"):
        response = api.patch("/policies/NPPF/revisions/rev_NPPF_2024_12", json={field: value})
        assert error_of(response) == (422, "validation_error"), response.text
        assert len(response.text) < 2000
    stored = api.get("/policies/NPPF/revisions/rev_NPPF_2024_12").json()
    assert (stored["effective_from"], stored["effective_to"]) == ("2024-12-12", None)


def test_moving_the_newer_revision_later_keeps_the_older_one_in_force_until_then(
    fresh_service: Service, api: httpx.Client
) -> None:
    """Issue 46: the older revision's end stayed put, so searches on the days in between answered nothing."""
    with_policy(fresh_service)
    ingested(fresh_service, "NPPF", "rev_NPPF_2023_09", "2023-09-05")
    ingested(fresh_service, "NPPF", "rev_NPPF_2024_12", "2024-12-12")
    moved = api.patch("/policies/NPPF/revisions/rev_NPPF_2024_12", json={"effective_from": "2025-03-01"})
    assert moved.status_code == 200, moved.text
    older = api.get("/policies/NPPF/revisions/rev_NPPF_2023_09").json()
    assert (older["effective_to"], older["status"]) == ("2025-02-28", "superseded")
    snapshot = api.get("/policies/effective", params={"date": "2025-01-15"}).json()
    assert [p["revision"]["revision_id"] for p in snapshot["policies"]] == ["rev_NPPF_2023_09"], snapshot
    stored = fresh_service.stores.policies.vectors.collection.get(
        where={"revision_id": "rev_NPPF_2023_09"}, include=["metadatas"]
    )
    assert {m["effective_to"] for m in stored["metadatas"]} == {20250228}
    assert api.delete("/policies/NPPF/revisions/rev_NPPF_2024_12").status_code == 200
    assert api.get("/policies/NPPF/revisions/rev_NPPF_2023_09").json()["effective_to"] is None


def test_ts13_ts14_delete_a_revision_but_never_the_sole_active_one(fresh_service: Service, api: httpx.Client) -> None:
    with_policy(fresh_service)
    ingested(fresh_service, "NPPF", "rev_NPPF_2021_07", "2021-07-20")
    ingested(fresh_service, "NPPF", "rev_NPPF_2024_12", "2024-12-12")
    chunks = fresh_service.stores.policies.vectors.count_revision("NPPF", "rev_NPPF_2021_07")
    response = api.delete("/policies/NPPF/revisions/rev_NPPF_2021_07")
    assert response.status_code == 200
    assert response.json() == {
        "source": "NPPF",
        "revision_id": "rev_NPPF_2021_07",
        "status": "deleted",
        "chunks_removed": chunks,
        "file_removed": True,
    }
    assert error_of(api.delete("/policies/NPPF/revisions/rev_NPPF_2024_12")) == (409, "cannot_delete_sole_revision")
    assert error_of(api.delete("/policies/NPPF/revisions/rev_NPPF_2021_07")) == (404, "revision_not_found")


def test_ts15_reindex_an_active_revision_and_not_a_processing_one(fresh_service: Service, api: httpx.Client) -> None:
    with_policy(fresh_service, "LTN_1_20")
    ingested(fresh_service, "LTN_1_20", "rev_LTN120_2020_07", "2020-07-27")
    before = fresh_service.stores.policies.registry.get_revision("LTN_1_20", "rev_LTN120_2020_07")
    response = api.post("/policies/LTN_1_20/revisions/rev_LTN120_2020_07/reindex")
    assert response.status_code == 202
    body = response.json()
    assert (body["revision_id"], body["status"]) == ("rev_LTN120_2020_07", "reindexing") and body["ingestion_job_id"]
    eventually(
        lambda: (
            fresh_service.stores.policies.registry.get_revision("LTN_1_20", "rev_LTN120_2020_07").ingested_at
            != before.ingested_at
        ),
        within=JOB_TIMEOUT_S,
        every=0.25,
        what="the reindex finishing",
    )
    after = wait_until_settled(api, "LTN_1_20", "rev_LTN120_2020_07")
    assert (after["status"], after["progress"]["chunks_total"]) == ("active", before.chunk_count)

    newer = RevisionCreate(revision_id="rev_new", version_label="new", effective_from="2025-01-01")
    register_revision(fresh_service.stores.policies, "LTN_1_20", newer, b"%PDF-1.7 x")
    refused = api.post("/policies/LTN_1_20/revisions/rev_new/reindex")
    assert error_of(refused) == (409, "cannot_reindex")
    assert error_of(api.post("/policies/LTN_1_20/revisions/rev_none/reindex")) == (404, "revision_not_found")


def test_ts16_status_of_a_processing_revision(fresh_service: Service, api: httpx.Client) -> None:
    with_policy(fresh_service)
    revision = RevisionCreate(revision_id="rev_NPPF_2026_02", version_label="Feb 2026", effective_from="2026-02-01")
    register_revision(fresh_service.stores.policies, "NPPF", revision, b"%PDF-1.7 x")
    fresh_service.stores.policies.registry.set_progress("NPPF", "rev_NPPF_2026_02", "embed", 42.5)
    body = api.get("/policies/NPPF/revisions/rev_NPPF_2026_02/status").json()
    assert body == {
        "source": "NPPF",
        "revision_id": "rev_NPPF_2026_02",
        "status": "processing",
        "error": "",
        "progress": {"phase": "embed", "percent_complete": 42.5, "chunks_processed": None, "chunks_total": None},
    }


# -- health and OpenAPI ---------------------------------------------------------------------------


def test_deep_health_reports_each_store_with_counts(fresh_service: Service, api: httpx.Client) -> None:
    with_policy(fresh_service)
    ingested(fresh_service, "NPPF", "rev_NPPF_2024_12", "2024-12-12")
    body = api.get("/health").json()
    assert body["status"] == "ok"
    assert body["checks"]["redis"]["counts"] == {"policies": 1, "revisions": 1, "revisions_active": 1}
    assert body["checks"]["chroma"]["counts"]["policy_chunks"] == fresh_service.stores.policies.vectors.count() > 0
    assert body["checks"]["object_store"]["counts"] == {"policy_files": 1}
    assert all(check["ok"] for check in body["checks"].values())


def test_openapi_document_describes_every_endpoint_and_the_upload(api: httpx.Client) -> None:
    doc = api.get("/openapi.json").json()
    assert doc["servers"] == [{"url": "/api/v1"}]
    assert {(p, m) for p, ops in doc["paths"].items() for m in ops} >= {
        ("/policies", "get"),
        ("/policies", "post"),
        ("/policies/effective", "get"),
        ("/policies/{source}", "get"),
        ("/policies/{source}", "patch"),
        ("/policies/{source}/revisions", "post"),
        ("/policies/{source}/revisions/{revision_id}", "get"),
        ("/policies/{source}/revisions/{revision_id}", "patch"),
        ("/policies/{source}/revisions/{revision_id}", "delete"),
        ("/policies/{source}/revisions/{revision_id}/status", "get"),
        ("/policies/{source}/revisions/{revision_id}/reindex", "post"),
        ("/health", "get"),
    }
    upload_op = doc["paths"]["/policies/{source}/revisions"]["post"]
    assert set(upload_op["responses"]) >= {"202", "404", "409", "413", "422"}
    schema = upload_op["requestBody"]["content"]["multipart/form-data"]["schema"]
    assert schema["required"] == ["file", "version_label", "effective_from"]
