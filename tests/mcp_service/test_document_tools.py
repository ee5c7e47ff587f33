"""The ``document-store-mcp`` server end to end (spec 003 FR-001..FR-004, FR-009, FR-010): uvicorn on a free
port, the SDK's clients over both transports, real stores and model, and both servers from one command."""

from __future__ import annotations

import io
import os
import re
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis
from PIL import Image

from lib.composition import open_stores
from mcp_service.document_store import create_app
from tests.conftest import free_port
from tests.fixtures_paths import ENCRYPTED_PASSWORD_PDF, IMAGE_ONLY_PDF, TABLE_PDF
from tests.mcp_service.conftest import (
    FULL_KEY,
    INITIALIZE,
    MCP_HEADERS,
    READ_KEY,
    Service,
    bearer,
    mcp_session,
    running,
    service_settings,
    wait_healthy,
)
from tests.mcp_service.tool_names import DOCUMENT_READS, DOCUMENT_WRITES
from tests.mcp_service.tools import call

pytestmark = pytest.mark.anyio

DOCS_DB = 10
REF = "25/01178/REM"
ROOT = Path(__file__).resolve().parents[2]
FR_008_CHUNK_FIELDS = {
    "application_ref",
    "document_id",
    "source_file",
    "document_type",
    "page_numbers",
    "chunk_index",
    "total_chunks",
    "extraction_method",
    "char_count",
    "word_count",
    "printed_page",
    "printed_pages",
}


@pytest.fixture(scope="module")
def docs_service(service_base: Path, redis_url: str, chroma_dir: Path) -> Iterator[Service]:
    """The document store over an empty registry of its own (Redis database 10) and collection."""
    base = service_base / f"documents-{uuid.uuid4().hex[:8]}"
    settings = service_settings(
        base, redis_url, chroma_dir, DOCS_DB, document_collection=f"svc_docs_{uuid.uuid4().hex[:12]}"
    )
    redis.Redis.from_url(settings.redis.url or "").flushdb()
    inbox = settings.files.allowed_roots[0]
    shutil.copyfile(TABLE_PDF, inbox / "Transport_Assessment.pdf")
    shutil.copyfile(IMAGE_ONLY_PDF, inbox / "Site_Plan.pdf")
    shutil.copyfile(ENCRYPTED_PASSWORD_PDF, inbox / "Locked.pdf")
    png = io.BytesIO()
    Image.new("L", (400, 300), 255).save(png, format="PNG")
    (inbox / "Drawing.pdf").write_bytes(png.getvalue())  # a real PNG under a PDF's name
    stores = open_stores(settings)
    with running(create_app(settings, stores=stores, warm=False)) as url:
        yield Service(url, stores, settings)
    redis.Redis.from_url(settings.redis.url or "").flushdb()


def inbox_path(service: Service, name: str) -> str:
    return str(service.settings.files.allowed_roots[0] / name)


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_each_transport_lists_the_five_tools_with_described_arguments(
    docs_service: Service, transport: str
) -> None:
    async with mcp_session(docs_service.url, transport=transport) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
    assert (
        set(tools)
        == DOCUMENT_READS | DOCUMENT_WRITES
        == {
            "ingest_document",
            "search_application_docs",
            "get_document_text",
            "list_ingested_documents",
            "verify_document_quote",
        }
    )
    ingest = tools["ingest_document"].input_schema
    assert ingest["required"] == ["file_path", "application_ref"]
    assert all(prop.get("description") for prop in ingest["properties"].values())
    search = tools["search_application_docs"].input_schema["properties"]
    assert search["max_results"]["default"] == 10 and search["max_results"]["maximum"] == 50
    assert (search["mode"]["default"], search["mode"]["enum"]) == ("hybrid", ["hybrid", "dense", "lexical"])
    assert tools["search_application_docs"].annotations is not None
    assert tools["search_application_docs"].annotations.read_only_hint is True


async def test_ingest_answers_success_then_already_ingested_and_the_other_tools_read_it_back(
    docs_service: Service,
) -> None:
    url = docs_service.url
    first = await call(
        url,
        "ingest_document",
        {"file_path": inbox_path(docs_service, "Transport_Assessment.pdf"), "application_ref": REF},
    )
    assert set(first) == {
        "status",
        "document_id",
        "chunks_created",
        "extraction_method",
        "contains_drawings",
        "total_chars",
        "total_words",
        "document_type",
    }
    assert (first["status"], first["extraction_method"], first["document_type"]) == (
        "success",
        "text_layer",
        "transport_assessment",
    )
    again = await call(
        url,
        "ingest_document",
        {"file_path": inbox_path(docs_service, "Transport_Assessment.pdf"), "application_ref": REF},
        transport="sse",
    )
    assert again == {
        "status": "already_ingested",
        "document_id": first["document_id"],
        "message": "Document has already been ingested with the same content",
    }

    query = {"query": "travel card expenses", "application_ref": REF, "document_types": ["transport_assessment"]}
    found = await call(url, "search_application_docs", query | {"max_results": 3})
    assert found["status"] == "success" and found["results_count"] == 3
    assert all(set(hit["metadata"]) == FR_008_CHUNK_FIELDS for hit in found["results"])
    assert found["results"][0]["metadata"]["document_id"] == first["document_id"]
    assert found["mode"] == "hybrid" and {"dense_score", "lexical_score"} <= set(found["results"][0])
    exact = await call(url, "search_application_docs", query | {"query": "CITIBANK", "mode": "lexical"})
    assert exact["mode"] == "lexical" and exact["results"]
    assert all("CITIBANK" in hit["text"] and hit["dense_score"] is None for hit in exact["results"])
    wrong = await call(url, "search_application_docs", {"query": "parking", "mode": "fuzzy"})
    assert (wrong["status"], wrong["error_type"]) == ("error", "invalid_argument")

    text = await call(url, "get_document_text", {"document_id": first["document_id"]})
    assert text["status"] == "success" and "CITIBANK - TRAVEL CBA CARD" in text["text"]
    assert text["chunk_count"] == first["chunks_created"]
    assert text["file_path"] == inbox_path(docs_service, "Transport_Assessment.pdf")
    assert text["object_key"].startswith("applications/25_01178_REM/")

    listing = await call(url, "list_ingested_documents", {"application_ref": REF})
    assert listing["document_count"] >= 1
    listed = {doc["document_id"]: doc for doc in listing["documents"]}[first["document_id"]]
    assert (listed["file_path"], listed["object_key"]) == (text["file_path"], text["object_key"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", listed["ingested_at"])


async def test_image_based_pdf_is_skipped_with_the_spec_payload(docs_service: Service) -> None:
    out = await call(
        docs_service.url,
        "ingest_document",
        {"file_path": inbox_path(docs_service, "Site_Plan.pdf"), "application_ref": REF},
    )
    assert out == {"status": "skipped", "reason": "image_based", "image_ratio": 1.0, "total_pages": 6}


@pytest.mark.parametrize(
    ("arguments", "error_type"),
    [
        ({"file_path": "Locked.pdf"}, "encrypted"),
        ({"file_path": "Drawing.pdf"}, "unsupported_file_type"),
        ({"file_path": "missing.pdf"}, "file_not_found"),
        ({"file_path": "/etc/hostname"}, "path_not_allowed"),
        ({"file_path": "../outside.pdf"}, "path_not_allowed"),
        ({"file_path": "Transport_Assessment.pdf", "document_type": "shopping_list"}, "invalid_argument"),
        ({"file_path": "Transport_Assessment.pdf", "application_ref": "///"}, "invalid_argument"),
    ],
)
async def test_ingest_errors_come_in_the_spec_envelope(
    docs_service: Service, arguments: dict[str, str], error_type: str
) -> None:
    name = arguments["file_path"]
    arguments = {"application_ref": REF, **arguments}
    if not name.startswith("/"):
        arguments["file_path"] = inbox_path(docs_service, name)
    out = await call(docs_service.url, "ingest_document", arguments)
    assert (out["status"], out["error_type"]) == ("error", error_type)
    assert out["message"] and "/etc" not in out["message"]


async def test_reads_of_unknown_things_are_empty_or_document_not_found(docs_service: Service) -> None:
    url = docs_service.url
    assert await call(url, "list_ingested_documents", {"application_ref": "99/99999/OUT"}) == {
        "status": "success",
        "application_ref": "99/99999/OUT",
        "document_count": 0,
        "documents": [],
    }
    assert await call(url, "get_document_text", {"document_id": "25_01178_REM_000000"}) == {
        "status": "error",
        "error_type": "document_not_found",
        "message": "Document not found: 25_01178_REM_000000",
    }
    out = await call(url, "search_application_docs", {"query": "parking", "max_results": 500})
    assert (out["status"], out["error_type"]) == ("error", "invalid_argument")


def test_health_is_open_and_everything_else_needs_the_key_and_the_read_key_cannot_ingest(
    docs_service: Service,
) -> None:
    url = docs_service.url
    assert httpx.get(f"{url}/health", timeout=10).json() == {"status": "ok"}
    assert httpx.post(f"{url}/mcp", json=INITIALIZE, headers=MCP_HEADERS, timeout=10).status_code == 401
    served = httpx.post(f"{url}/mcp", json=INITIALIZE, headers=MCP_HEADERS | bearer(READ_KEY), timeout=10)
    assert served.json()["result"]["serverInfo"]["name"] == "document-store-mcp"
    arguments = {"file_path": "x.pdf", "application_ref": REF}
    write = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "ingest_document", "arguments": arguments},
    }
    refused = httpx.post(f"{url}/mcp", json=write, headers=MCP_HEADERS | bearer(READ_KEY), timeout=10)
    assert refused.status_code == 200 and refused.json()["result"]["structuredContent"]["error_type"] == "forbidden"


def test_one_command_serves_both_servers_each_on_its_own_port(docs_service: Service) -> None:
    settings = docs_service.settings
    policy_port, documents_port = free_port(), free_port()
    env = os.environ | {
        "REDIS_URL": settings.redis.url or "",
        "POLICY_KB_DATA_DIR": str(settings.paths.data_dir),
        "CHROMA_PERSIST_DIR": str(settings.chroma.persist_dir),
        "CHROMA_POLICY_COLLECTION": settings.chroma.policy_collection,
        "CHROMA_DOCUMENT_COLLECTION": settings.chroma.document_collection,
        "OBJECT_STORE_URL": settings.objects.url or "",
        "POLICY_KB_PORT": str(policy_port),
        "DOCUMENT_STORE_PORT": str(documents_port),
        "MCP_API_KEY": FULL_KEY,
        "HF_HUB_OFFLINE": "1",
    }
    command = [sys.executable, "-m", "deployments.cli", "serve", "--servers", "policy-kb,document-store"]
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        names = {}
        for port in (policy_port, documents_port):
            url = f"http://127.0.0.1:{port}"
            wait_healthy(url, proc)
            response = httpx.post(f"{url}/mcp", json=INITIALIZE, headers=MCP_HEADERS | bearer(), timeout=10)
            names[port] = response.json()["result"]["serverInfo"]["name"]
        assert names == {policy_port: "policy-kb-mcp", documents_port: "document-store-mcp"}
        rest = httpx.get(f"http://127.0.0.1:{documents_port}/api/v1/policies", headers=bearer(), timeout=10)
        assert rest.status_code == 404  # the REST API is the policy server's
    finally:
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr.decode()[-2000:]


async def test_a_sentence_of_an_ingested_document_is_verified_where_it_is(docs_service: Service) -> None:
    """verify_document_quote (issue 26): a sentence of the document as stored is exact, reflowed it is
    normalised, with a word changed for another it is altered (wording); with the document, its file and its
    page."""
    url = docs_service.url
    ingested = await call(
        url,
        "ingest_document",
        {"file_path": inbox_path(docs_service, "Transport_Assessment.pdf"), "application_ref": REF},
    )
    document_id = ingested["document_id"]
    text = (await call(url, "get_document_text", {"document_id": document_id}))["text"]
    sentence = next(s for s in re.findall(r"[A-Z][^.\n]{30,200}\.", text))
    exact = await call(url, "verify_document_quote", {"quote": sentence, "application_ref": REF})
    assert (exact["verdict"], exact["match"]["document_id"]) == ("exact", document_id)
    assert exact["match"]["source_file"] == "Transport_Assessment.pdf" and exact["match"]["page_number"] >= 1
    words = sentence.split()
    reflowed = "\n".join(" ".join(words[i : i + 4]) for i in range(0, len(words), 4))
    assert (await call(url, "verify_document_quote", {"quote": reflowed}))["verdict"] in ("exact", "normalised")
    changed = " ".join([*words[:2], "zebra", *words[3:]])
    altered = (await call(url, "verify_document_quote", {"quote": changed, "application_ref": REF}))["match"]
    assert altered["verdict"] == "altered" and any("zebra" in d for d in altered["differences"])
    assert [m["kind"] for m in altered["meaning_changes"]] == ["wording"] and altered["similarity"] is None
    missing = await call(url, "verify_document_quote", {"quote": "Nothing like this was ever written in a report."})
    assert (missing["verdict"], missing["match"]) == ("not_found", None)
