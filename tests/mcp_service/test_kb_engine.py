"""The kb engine's HTTP API (spec 002) through FastAPI's TestClient, over the session's real Redis, Chroma and
model; jobs run as the Prefect flow ``ingest_kb_document`` in the background, as in the embedded default.

One engine for the module (its own Redis database and collection); each test tags its documents with a
tag of its own and filters by it, so tests never see each other's documents.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from fastapi.testclient import TestClient

from lib.composition import Stores
from lib.stores.embeddings import Embedder
from mcp_service.rest.app import create_rest_app
from tests.conftest import isolated_stores
from tests.fixtures_paths import IMAGE_ONLY_PDF, TABLE_PDF
from tests.polling import eventually

ENGINE_DB = 14


@pytest.fixture(scope="module")
def engine(
    tmp_path_factory: pytest.TempPathFactory, redis_url: str, chroma_dir: Path, embedder: Embedder
) -> Iterator[tuple[TestClient, Stores]]:
    url = f"{redis_url.rsplit('/', 1)[0]}/{ENGINE_DB}"
    redis.Redis.from_url(url).flushdb()
    stores = isolated_stores(
        url,
        tmp_path_factory.mktemp("kb_engine"),
        chroma_dir,
        embedder,
        kb_collection=f"kb_docs_{uuid.uuid4().hex[:12]}",
        enable_ocr=False,
    )
    with TestClient(create_rest_app(stores), base_url="http://engine") as client:
        yield client, stores


@pytest.fixture
def client(engine: tuple[TestClient, Stores]) -> TestClient:
    return engine[0]


@pytest.fixture
def tag() -> str:
    return f"t{uuid.uuid4().hex[:10]}"


def finished(client: TestClient, job_id: str) -> dict[str, Any]:
    """The job once it has ended (completed or failed)."""
    seen: dict[str, Any] = {}

    def ended() -> bool:
        seen.update(client.get(f"/jobs/{job_id}").json())
        return seen["status"] in ("completed", "failed")

    eventually(ended, within=120, every=0.1)
    return seen


def add_note(client: TestClient, text: str, tags: list[str], **extra: str) -> int:
    response = client.post("/jobs", json={"text": text, "tags": tags, **extra})
    assert response.status_code == 202, response.text
    # The job is queued, then submitted before the answer: its run may already have started (or ended).
    assert response.json()["status"] in ("queued", "running", "completed"), response.json()
    job = finished(client, response.json()["job_id"])
    assert job["status"] == "completed", job
    return int(job["document_id"])


def search(client: TestClient, query: str, tags: list[str], **extra: Any) -> dict[str, Any]:
    response = client.post("/search", json={"query": query, "tags": tags, **extra})
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_a_note_job_completes_and_its_document_has_the_text_tags_and_times(client: TestClient, tag: str) -> None:
    response = client.post(
        "/jobs",
        json={
            "text": "User prefers concise responses.",
            "tags": [tag, "collection:memory"],
            "title": "Preference",
            "source_path": f"memory/{tag}.md",
        },
    )
    assert response.status_code == 202, response.text
    job_id = response.json()["job_id"]
    job = finished(client, job_id)
    assert job["status"] == "completed" and job["error"] is None and job["kind"] == "note"
    assert job["created_at"] and job["started_at"] and job["finished_at"]
    document = client.get(f"/documents/{job['document_id']}").json()
    assert document["kind"] == "note" and document["title"] == "Preference"
    assert sorted(document["tags"]) == sorted([tag, "collection:memory"])
    marked = {"content_origin": "document", "document_fields": ["text"]}  # a note's text is marked as a document's
    assert document["chunks"] == [{"chunk_index": 0, "text": "User prefers concise responses.", "page": None, **marked}]
    assert document["chunk_count"] == 1 and document["updated_at"] == document["created_at"]
    by_path = client.get("/documents", params={"source_path": f"memory/{tag}.md"}).json()["documents"]
    assert [d["document_id"] for d in by_path] == [job["document_id"]] and "chunks" not in by_path[0]
    assert job_id in [j["job_id"] for j in client.get("/jobs", params={"status": "completed"}).json()["jobs"]]


def test_search_returns_chunk_text_scores_and_document_metadata_in_every_mode(client: TestClient, tag: str) -> None:
    wanted = add_note(client, "The pension revaluation happens every April.", [tag], title="Pensions")
    add_note(client, "Bananas are yellow when ripe.", [tag])
    for mode in ("hybrid", "dense", "lexical"):
        body = search(client, "pension revaluation", [tag], mode=mode, top=5)
        assert body["mode"] == mode
        best = body["results"][0]
        assert best["document_id"] == wanted and best["chunk_index"] == 0, (mode, body)
        assert best["text"] == "The pension revaluation happens every April."
        assert 0.0 < best["score"] <= 1.0 and best["title"] == "Pensions" and best["tags"] == [tag]
        assert best["kind"] == "note" and best["filename"] is None and best["created_at"]
    lexical = search(client, "pension revaluation", [tag], fts_only=True)
    assert lexical["mode"] == "lexical" and [r["document_id"] for r in lexical["results"]] == [wanted]


def test_a_tags_filter_applies_to_both_legs_and_follows_tag_changes_at_once(client: TestClient, tag: str) -> None:
    other = f"{tag}-other"
    kept = add_note(client, "Email feedback: the user wants weekly summaries.", [tag, "collection:memory"])
    add_note(client, "Email feedback: the user wants weekly summaries.", [other, "collection:documents"])
    for mode in ("dense", "lexical", "hybrid"):
        found = search(client, "email feedback weekly", [tag, "collection:memory"], mode=mode)["results"]
        assert {r["document_id"] for r in found} == {kept}, mode
        assert search(client, "email feedback weekly", [tag, "collection:documents"], mode=mode)["results"] == []

    moved = client.delete(f"/documents/{kept}/tags/collection%3Amemory")
    assert moved.status_code == 200 and moved.json()["tags"] == [tag]
    assert search(client, "email feedback weekly", [tag, "collection:memory"])["results"] == []
    added = client.post(f"/documents/{kept}/tags", json={"tags": ["collection:archive"]}).json()
    assert sorted(added["tags"]) == sorted([tag, "collection:archive"])
    for mode in ("dense", "lexical"):
        found = search(client, "email feedback weekly", [tag, "collection:archive"], mode=mode)["results"]
        assert [r["document_id"] for r in found] == [kept]
        assert found[0]["tags"] == sorted([tag, "collection:archive"])


def test_updating_a_note_searches_the_old_text_until_the_flip_and_only_the_new_one_after(
    engine: tuple[TestClient, Stores], tag: str
) -> None:
    from lib.notes.ingest import update_note

    client, stores = engine
    note = add_note(client, "Preference: the user likes long detailed reports.", [tag])
    during: list[list[str]] = []

    def search_in_the_window() -> None:  # the new chunks are stored, the registry still names the old ones
        for mode in ("dense", "lexical", "hybrid"):
            during.append([r["text"] for r in search(client, "user reports preference", [tag], mode=mode)["results"]])

    update_note(
        stores.notes, note, "Preference: the user wants short bullet-point reports.", before_flip=search_in_the_window
    )
    assert during == [["Preference: the user likes long detailed reports."]] * 3

    patched = client.patch(f"/notes/{note}", json={"text": "Preference: the user now asks for tables in reports."})
    assert patched.status_code == 200, patched.text
    assert patched.json()["updated_at"] > patched.json()["created_at"]
    for mode in ("dense", "lexical", "hybrid"):
        texts = [r["text"] for r in search(client, "user reports preference", [tag], mode=mode)["results"]]
        assert texts == ["Preference: the user now asks for tables in reports."], mode
    chunks = client.get(f"/documents/{note}").json()["chunks"]
    assert [c["text"] for c in chunks] == ["Preference: the user now asks for tables in reports."]
    assert len(stores.notes.chunks.ids({"document_id": note})) == 1


def test_file_jobs_ingest_a_pdf_markdown_and_text_and_refuse_updates_as_not_a_note(
    client: TestClient, tag: str
) -> None:
    files = {
        "report.pdf": TABLE_PDF.read_bytes(),
        "notes.md": b"# Travel\n\nThe quarterly travel budget is reviewed by the finance team.\n",
        "plain.txt": b"Zebra crossings are marked with black and white stripes.\n",
    }
    ids: dict[str, int] = {}
    for name, data in files.items():
        response = client.post("/jobs", files={"file": (name, data)}, data={"tags": f"{tag},collection:files"})
        assert response.status_code == 202, response.text
        job = finished(client, response.json()["job_id"])
        assert job["status"] == "completed" and job["kind"] == "file" and job["filename"] == name, job
        ids[name] = job["document_id"]
    pdf = client.get(f"/documents/{ids['report.pdf']}").json()
    assert pdf["kind"] == "file" and pdf["content_type"] == "application/pdf" and pdf["chunk_count"] >= 1
    assert pdf["chunks"][0]["page"] == 1 and sorted(pdf["tags"]) == sorted([tag, "collection:files"])
    found = search(client, "quarterly travel budget", [tag, "collection:files"])["results"][0]
    assert found["document_id"] == ids["notes.md"] and found["filename"] == "notes.md" and found["kind"] == "file"
    found = search(client, "zebra crossing stripes", [tag], fts_only=True)["results"][0]
    assert found["document_id"] == ids["plain.txt"]

    refused = client.patch(f"/notes/{ids['report.pdf']}", json={"text": "new text"})
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "not_a_note"


def test_a_job_whose_ingestion_fails_ends_failed_with_the_error_and_registers_nothing(
    engine: tuple[TestClient, Stores], tag: str
) -> None:
    client, stores = engine
    before = client.get("/status").json()
    response = client.post("/jobs", files={"file": ("scan.pdf", IMAGE_ONLY_PDF.read_bytes())}, data={"tags": tag})
    job = finished(client, response.json()["job_id"])
    assert job["status"] == "failed" and job["document_id"] is None and job["error"], job
    after = client.get("/status").json()
    assert (after["documents"], after["chunks"]) == (before["documents"], before["chunks"])
    assert after["queue"]["failed"] == before["queue"]["failed"] + 1
    assert stores.notes.registry.tagged([tag]) == set()
    assert job["job_id"] in [j["job_id"] for j in client.get("/jobs", params={"status": "failed"}).json()["jobs"]]


def test_bad_input_gets_a_clear_error_and_unknown_ids_404(client: TestClient) -> None:
    assert client.post("/search", json={"query": ""}).json()["error"]["code"] == "validation_error"
    too_many = client.post("/search", json={"query": "x", "top": 100000})
    assert too_many.status_code == 400 and too_many.json()["error"]["code"] == "invalid_argument"
    assert client.post("/search", json={"query": "x", "mode": "fuzzy"}).status_code == 422
    assert client.post("/jobs", json={"text": "   "}).json()["error"]["code"] == "invalid_argument"
    assert client.post("/jobs", json={"tags": ["a"]}).status_code == 422
    unsupported = client.post("/jobs", files={"file": ("x.png", b"\x89PNG\r\n\x1a\n" + b"\0" * 64)})
    assert unsupported.status_code == 422 and unsupported.json()["error"]["code"] == "unsupported_file_type"
    assert client.post("/jobs", content=b"hello", headers={"content-type": "text/plain"}).status_code == 415
    missing = client.get("/documents/999999")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "document_not_found"
    assert client.patch("/notes/999999", json={"text": "x"}).json()["error"]["code"] == "document_not_found"
    assert client.post("/documents/999999/tags", json={"tags": ["a"]}).status_code == 404
    assert client.get("/jobs/nope").json()["error"]["code"] == "job_not_found"


def test_status_reports_version_model_device_counts_and_queue(client: TestClient, tag: str) -> None:
    before = client.get("/status").json()
    add_note(client, "A status note.", [tag])
    status = client.get("/status").json()
    assert status["version"] and status["device"] == "cpu"
    assert status["model"]["name"] == "all-MiniLM-L6-v2" and status["model"]["dimensions"] == 384
    assert status["model"]["encoder"].startswith("minilm-l6-v2/")
    assert status["documents"] == before["documents"] + 1 and status["notes"] == before["notes"] + 1
    assert status["chunks"] == before["chunks"] + 1
    assert status["documents"] == status["notes"] + status["files"]
    assert status["queue"]["completed"] == before["queue"]["completed"] + 1
    assert set(status["queue"]) == {"queued", "running", "completed", "failed"}


def test_every_engine_route_is_in_the_openapi_document(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for path in (
        "/search",
        "/jobs",
        "/jobs/{job_id}",
        "/documents",
        "/documents/{document_id}",
        "/documents/{document_id}/tags",
        "/documents/{document_id}/tags/{tag}",
        "/notes/{document_id}",
        "/status",
    ):
        assert path in paths, path
    assert "multipart/form-data" in paths["/jobs"]["post"]["requestBody"]["content"]
    assert "application/json" in paths["/jobs"]["post"]["requestBody"]["content"]
