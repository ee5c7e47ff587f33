"""Long work on the ``document-store`` server, as an agent meets it: an ingestion reports its progress to a
client that asks (a progress token), over Streamable HTTP (an event stream answering that request) and SSE,
through the same helper as the policy ingestion (``tools.progress``)."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from lib.composition import open_stores
from mcp_service.document_store import create_app
from tests.fixtures_paths import TABLE_PDF
from tests.mcp_service.conftest import Service, mcp_session, running, service_settings

pytestmark = pytest.mark.anyio

LONG_WORK_DB = 5
REF = "25/00001/FUL"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def documents(service_base: Path, redis_url: str, chroma_dir: Path) -> Iterator[Service]:
    """The document store over an empty registry and collection of its own, one PDF in its inbox."""
    base = service_base / f"long-work-{uuid.uuid4().hex[:8]}"
    settings = service_settings(
        base, redis_url, chroma_dir, LONG_WORK_DB, document_collection=f"long_work_{uuid.uuid4().hex[:12]}"
    )
    redis.Redis.from_url(settings.redis.url or "").flushdb()
    shutil.copyfile(TABLE_PDF, settings.files.allowed_roots[0] / "Transport_Assessment.pdf")
    stores = open_stores(settings)
    with running(create_app(settings, stores=stores, warm=False)) as url:
        yield Service(url, stores, settings)
    redis.Redis.from_url(settings.redis.url or "").flushdb()


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_a_document_ingestion_reports_rising_progress_to_done(documents: Service, transport: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    path = str(documents.settings.files.allowed_roots[0] / "Transport_Assessment.pdf")
    args = {"file_path": path, "application_ref": REF}
    async with mcp_session(documents.url, transport=transport) as session:
        ingested = await session.call_tool("ingest_document", args, progress_callback=on_progress)
        again = await session.call_tool("ingest_document", args)
    assert ingested.structured_content is not None and ingested.structured_content["status"] == "success"
    assert again.structured_content is not None and again.structured_content["status"] == "already_ingested"
    values = [value for value, _, _ in seen]
    assert values == sorted(set(values)) and values[0] == 0.0 and values[-1] == 100.0
    assert {total for _, total, _ in seen} == {100.0}
    phases = [message for _, _, message in seen]
    assert phases[0] == "fetch" and phases[-1] == "done" and {"extract", "chunk", "embed", "store"} <= set(phases)
