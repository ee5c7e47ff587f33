"""Spec 002's scenarios through the MCP SDK client over Streamable HTTP, against two running ``kb`` service
processes (``tests.mcp_service.kb_stack``): A serves the engine and its MCP server behind ``KB_MCP_API_KEY``;
B is an open MCP server in front of A's engine, sharing A's stores."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pymupdf
import pytest
import redis

from lib.composition import open_stores
from mcp_service.kb import create_app
from tests.conftest import free_port
from tests.mcp_service.conftest import FULL_KEY, INITIALIZE, MCP_HEADERS, bearer, mcp_session, running
from tests.mcp_service.kb_stack import KB_KEY, KbStack, add_note, both, call, completed_job, kb_stack, ok, upload
from tests.mcp_service.tool_names import KB_READS, KB_WRITES

KB_DB = 11


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, redis_url: str, chroma_dir: Path) -> Iterator[KbStack]:
    redis.Redis.from_url(redis_url.rsplit("/", 1)[0] + f"/{KB_DB}").flushdb()
    with kb_stack(tmp_path_factory.mktemp("kb"), redis_url, chroma_dir, KB_DB) as running_stack:
        yield running_stack


def text_pdf(*pages: str) -> bytes:
    document = pymupdf.open()
    for text in pages:
        page = document.new_page()
        page.insert_textbox(pymupdf.Rect(50, 50, 550, 800), text, fontsize=11)
    data: bytes = document.tobytes()
    document.close()
    return data


# -- transport, tools, auth -------------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_kb_server_lists_its_tools_with_read_only_hints_on_the_reads(stack: KbStack) -> None:
    async with stack.a.session() as session:
        assert session.server_info is None or session.server_info.name == "kb-mcp"
        tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == KB_READS | KB_WRITES
    assert {
        "kb_search",
        "kb_addnote",
        "kb_update_note",
        "kb_get",
        "kb_status",
        "kb_jobs",
        "kb_upload_start",
        "kb_upload_chunk",
        "kb_upload_finish",
    } <= set(tools)
    for name, tool in tools.items():
        assert tool.annotations is not None and tool.annotations.read_only_hint is (name in KB_READS), name
        assert tool.description and tool.output_schema is not None, name
    assert tools["kb_search"].input_schema["properties"]["top"]["default"] == 10


def test_the_mcp_key_and_the_engine_key_are_independent_and_unset_means_open(stack: KbStack) -> None:
    """Spec 002's four auth scenarios, and the engine's key opening no MCP route (and the reverse)."""
    with httpx.Client(timeout=10) as client:

        def initialize(url: str, headers: dict[str, str]) -> int:
            return client.post(f"{url}/mcp", json=INITIALIZE, headers=MCP_HEADERS | headers).status_code

        assert initialize(stack.a.url, bearer(KB_KEY)) == 200  # valid key
        assert initialize(stack.a.url, {}) == 401  # missing
        assert initialize(stack.a.url, bearer("wrong")) == 401  # invalid
        assert initialize(stack.a.url, bearer(FULL_KEY)) == 401  # the engine's key is not the MCP key
        assert initialize(stack.b.url, {}) == 200  # KB_MCP_API_KEY unset: open
        assert client.get(f"{stack.a.url}/api/v1/status", headers=bearer(KB_KEY)).status_code == 401
        assert client.get(f"{stack.a.url}/api/v1/status", headers=bearer(FULL_KEY)).status_code == 200
        assert client.get(f"{stack.b.url}/api/v1/status").status_code == 404  # B mounts no engine


@pytest.mark.anyio
async def test_with_the_engine_unreachable_the_server_starts_and_every_engine_tool_says_so(
    stack: KbStack, tmp_path: Path
) -> None:
    settings = stack.settings.replace(kb_engine_url=f"http://127.0.0.1:{free_port()}")
    with running(create_app(settings, stores=open_stores(settings), warm=False)) as url:
        async with mcp_session(url, key=None) as session:
            calls: dict[str, dict[str, Any]] = {
                "kb_search": {"query": "anything"},
                "kb_addnote": {"text": "a note"},
                "kb_update_note": {"document_id": 1, "text": "new"},
                "kb_get": {"document_id": 1},
                "kb_status": {},
                "kb_jobs": {},
                "kb_upload_start": {"filename": "a.txt", "total_size": 3},
            }
            for tool, arguments in calls.items():
                found = await call(session, tool, **arguments)
                assert found["status"] == "error" and found["error_type"] == "engine_unavailable", (tool, found)
                assert "unreachable" in found["message"]


@pytest.mark.anyio
async def test_with_the_engine_mounted_here_the_tools_call_it_in_process_not_over_http(stack: KbStack) -> None:
    """No ``KB_ENGINE_URL``: the tools call the engine's functions, so they answer even where the engine's own
    HTTP address (``KB_MCP_PORT``) has nothing listening, and answer as the HTTP engine (server B) does."""
    async with stack.a.session() as a:
        document_id = await add_note(a, f"in-process engine note {uuid.uuid4().hex}", collection="inproc")
    settings = stack.settings.replace(kb_mcp_port=free_port())  # the app below is served elsewhere
    with running(create_app(settings, stores=open_stores(settings), warm=False)) as url:
        async with mcp_session(url, key=None) as local, stack.b.session() as over_http:
            for tool, arguments in (("kb_get", {"document_id": document_id}), ("kb_jobs", {"status": "completed"})):
                here, there = await ok(local, tool, **arguments), await ok(over_http, tool, **arguments)
                assert here == there, tool
            status = await ok(local, "kb_status")
            assert status["engine_url"].endswith(f":{settings.service.kb_mcp_port}")
            missing = await call(local, "kb_get", document_id=10**9)
            assert missing["status"] == "error" and missing["error_type"] == "document_not_found", missing


# -- notes, collections, search ---------------------------------------------------------------------


@pytest.mark.anyio
async def test_notes_go_into_exactly_one_collection_and_results_show_it_apart_from_the_tags(stack: KbStack) -> None:
    marker = uuid.uuid4().hex[:8]
    async with both(stack) as (a, b):
        default = await add_note(a, f"User prefers concise responses {marker}")
        memory = await add_note(
            b,
            f"Email preferences: weekly digest only {marker}",
            collection="memory",
            tags=["feedback", "email", "collection:other"],
        )
        raw = httpx.get(f"{stack.a.url}/api/v1/documents/{memory}", headers=bearer(FULL_KEY), timeout=10).json()
        assert sorted(raw["tags"]) == ["collection:memory", "email", "feedback"]
        got = await ok(a, "kb_get", document_id=default)  # spec 002: the document details with chunks, itself
        assert got["document_id"] == default and "documents" not in got
        assert (got["collection"], got["tags"]) == ("documents", []) and got["chunks"]

        everything = await ok(a, "kb_search", query=f"preferences {marker}", top=5)
        assert {r["document_id"] for r in everything["results"]} >= {default, memory}
        for hit in everything["results"]:
            assert not any(t.startswith("collection:") for t in hit["tags"])
        in_memory = await ok(b, "kb_search", query=f"email preferences {marker}", collection="memory")
        assert {r["document_id"] for r in in_memory["results"]} == {memory}
        (hit,) = [r for r in in_memory["results"] if r["document_id"] == memory]
        assert (hit["collection"], sorted(hit["tags"])) == ("memory", ["email", "feedback"])
        assert {"text", "score", "title", "kind", "created_at"} <= set(hit)
        tagged = await ok(a, "kb_search", query="feedback", tags=["email"], collection="documents")
        assert memory not in {r["document_id"] for r in tagged["results"]}
        fts = await ok(a, "kb_search", query=marker, fts_only=True)
        assert fts["mode"] != "hybrid" and {r["document_id"] for r in fts["results"]} >= {default, memory}

        moved = await ok(a, "kb_set_collection", document_id=memory, collection="archive")
        assert (moved["collection"], sorted(moved["tags"])) == ("archive", ["email", "feedback"])
        raw = httpx.get(f"{stack.a.url}/api/v1/documents/{memory}", headers=bearer(FULL_KEY), timeout=10).json()
        assert [t for t in raw["tags"] if t.startswith("collection:")] == ["collection:archive"]


@pytest.mark.anyio
async def test_kb_get_by_source_path_returns_every_match(stack: KbStack) -> None:
    path = f"memory/feedback_{uuid.uuid4().hex[:8]}.md"
    async with stack.a.session() as session:
        document_id = await add_note(
            session, "Testing feedback: run the integration tests first", source_path=path, collection="memory"
        )
        found = await ok(session, "kb_get", source_path=path)  # spec 002: the matching documents
        assert found["count"] == 1 and [d["document_id"] for d in found["documents"]] == [document_id]
        assert found["documents"][0]["collection"] == "memory"
        assert (await ok(session, "kb_get", source_path="nowhere/at_all.md"))["documents"] == []
        both_given = await call(session, "kb_get", document_id=document_id, source_path=path)
        assert both_given["error_type"] == "invalid_argument"
        missing = await call(session, "kb_get", document_id=10**9)
        assert missing["error_type"] == "document_not_found"


@pytest.mark.anyio
async def test_an_updated_note_is_found_by_its_old_text_until_the_new_is_stored_and_never_after(
    stack: KbStack,
) -> None:
    tag, old, new = (f"w{uuid.uuid4().hex[:10]}" for _ in range(3))
    async with both(stack) as (a, b):
        document_id = await add_note(a, f"Old preference {old}: tables. " * 20, tags=[tag])
        seen: list[str] = []
        watching, done = anyio.Event(), anyio.Event()

        async def watch() -> None:
            while not done.is_set():
                hits = (await ok(b, "kb_search", query="preference", tags=[tag]))["results"]
                assert hits, "a search during the update found nothing"
                seen.extend("new" if new in h["text"] else "old" for h in hits)
                watching.set()

        async with anyio.create_task_group() as group:
            group.start_soon(watch)
            await watching.wait()  # the update starts while B is already searching, not before
            updated = await ok(a, "kb_update_note", document_id=document_id, text=f"New preference {new}: bullets.")
            done.set()
        assert updated["document_id"] == document_id and updated["collection"] == "documents"
        assert "old" in seen
        for _ in range(3):
            after = (await ok(b, "kb_search", query=f"preference {old}", tags=[tag]))["results"]
            assert after and all(new in h["text"] and old not in h["text"] for h in after)
        assert (await call(a, "kb_update_note", document_id=10**9, text="x"))["error_type"] == "document_not_found"


# -- uploads, jobs, status --------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_pdf_uploaded_in_chunks_across_two_replicas_is_ingested_and_cannot_be_updated(stack: KbStack) -> None:
    marker = uuid.uuid4().hex[:8]
    pdf = text_pdf(f"Pension revaluation report {marker}. " * 30, f"Second page on deferred members {marker}.")
    async with both(stack) as (a, b):
        path = f"reports/{marker}/report.pdf"
        job_id = await upload(
            [a, b, a], "report.pdf", pdf, 2048, tags=["insurance"], collection="reports", source_path=path
        )
        job = await completed_job(b, job_id)
        assert job["status"] == "completed" and job["kind"] == "file" and job["filename"] == "report.pdf", job
        by_path = await ok(a, "kb_get", source_path=path)
        assert [d["document_id"] for d in by_path["documents"]] == [job["document_id"]]
        assert (job["collection"], job["tags"]) == ("reports", ["insurance"])
        found = await ok(b, "kb_search", query=f"pension revaluation {marker}", collection="reports", top=3)
        assert found["results"][0]["document_id"] == job["document_id"]
        assert found["results"][0]["kind"] == "file" and found["results"][0]["tags"] == ["insurance"]
        refused = await call(a, "kb_update_note", document_id=job["document_id"], text="x")
        assert refused["error_type"] == "not_a_note"


@pytest.mark.anyio
async def test_upload_tools_refuse_what_spec_002_refuses(stack: KbStack) -> None:
    async with stack.b.session() as session:
        unknown = str(uuid.uuid4())
        for tool, arguments in (("kb_upload_chunk", {"data": "aGk=", "chunk_index": 0}), ("kb_upload_finish", {})):
            found = await call(session, tool, upload_id=unknown, **arguments)
            assert found["error_type"] == "upload_not_found", found
        too_big = await call(session, "kb_upload_start", filename="a.pdf", total_size=8 * 1024 * 1024 + 1)
        assert too_big["error_type"] == "invalid_argument"
        image = await call(session, "kb_upload_start", filename="a.png", total_size=10)
        assert image["error_type"] == "unsupported_file_type"
        upload_id = (await ok(session, "kb_upload_start", filename="n.md", total_size=6))["upload_id"]
        await ok(session, "kb_upload_chunk", upload_id=upload_id, data="aGk=", chunk_index=1)
        again = await ok(session, "kb_upload_chunk", upload_id=upload_id, data="aGk=", chunk_index=1)
        assert again["duplicate"] is True
        other = await call(session, "kb_upload_chunk", upload_id=upload_id, data="aG8=", chunk_index=1)
        assert other["error_type"] == "invalid_argument"
        assert (await call(session, "kb_upload_chunk", upload_id=upload_id, data="@@", chunk_index=0))[
            "error_type"
        ] == "invalid_argument"
        gap = await call(session, "kb_upload_finish", upload_id=upload_id)
        assert gap["error_type"] == "invalid_argument" and "gaps" in gap["message"]
        await ok(session, "kb_upload_chunk", upload_id=upload_id, data="aGk=", chunk_index=0)
        short = await call(session, "kb_upload_finish", upload_id=upload_id)
        assert "total_size" in short["message"]


@pytest.mark.anyio
async def test_an_upload_survives_a_restart_of_the_replica_holding_it(stack: KbStack) -> None:
    text = ("# Restart notes\n\nThe staging survives a restart of the service. " * 60).encode()
    half = len(text) // 2
    filename = f"notes/restart_{uuid.uuid4().hex[:8]}.md"
    async with stack.b.session() as session:
        upload_id = (await ok(session, "kb_upload_start", filename=filename, total_size=len(text)))["upload_id"]
        await ok(session, "kb_upload_chunk", upload_id=upload_id, data=_b64(text[:half]), chunk_index=0)
    stack.b = stack.b.restart()
    async with stack.b.session() as session:
        await ok(session, "kb_upload_chunk", upload_id=upload_id, data=_b64(text[half:]), chunk_index=1)
        job = await completed_job(session, (await ok(session, "kb_upload_finish", upload_id=upload_id))["job_id"])
        assert job["status"] == "completed" and job["collection"] == "documents"
        by_filename = await ok(session, "kb_get", source_path=filename)  # the source_path is the filename given
        assert [d["document_id"] for d in by_filename["documents"]] == [job["document_id"]]


@pytest.mark.anyio
async def test_status_and_jobs_report_the_engine_and_failed_ingestions(stack: KbStack) -> None:
    blank = text_pdf("")
    async with stack.a.session() as session:
        job_id = await upload([session], "blank.pdf", blank, 4096)
        failed = await completed_job(session, job_id)
        assert failed["status"] == "failed" and failed["error"], failed
        listed = (await ok(session, "kb_jobs", status="failed"))["jobs"]
        assert job_id in {j["job_id"] for j in listed} and {j["status"] for j in listed} == {"failed"}
        status = await ok(session, "kb_status")
        assert status["engine_url"] == stack.a.url and status["uploads"]["max_upload_bytes"] == 8 * 1024 * 1024
        assert {"version"} <= set(status)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()
