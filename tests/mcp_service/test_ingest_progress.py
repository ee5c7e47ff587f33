"""An ingestion over MCP reports its progress to a client that asks (a progress token): over SSE on the
session's stream, over Streamable HTTP on an event stream answering that request (the others are answered in
plain JSON)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from lib.policies.lifecycle import register_revision
from lib.policies.models import PolicyCreate, RevisionCreate
from tests.flows.policy_pdfs import policy_pdf_bytes
from tests.mcp_service.conftest import MCP_HEADERS, Service, bearer, mcp_session

pytestmark = pytest.mark.anyio

REVISION = "rev_LTN_1_20_2020_07"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def registered(fresh_service: Service) -> tuple[Service, Path]:
    """LTN_1_20 with one registered revision and its PDF in the allowed inbox."""
    stores = fresh_service.stores.policies
    stores.registry.create_policy(PolicyCreate(source="LTN_1_20", title="LTN 1/20", category="national_guidance"))
    pdf = fresh_service.settings.files.allowed_roots[0] / "ltn-progress.pdf"
    pdf.write_bytes(policy_pdf_bytes(edition="July 2020"))
    register_revision(
        stores,
        "LTN_1_20",
        RevisionCreate(revision_id=REVISION, version_label="July 2020", effective_from="2020-07-27"),
        pdf.read_bytes(),
    )
    return fresh_service, pdf


@pytest.mark.parametrize("transport", ["sse", "http"])
async def test_an_ingestion_reports_rising_progress_to_done(registered: tuple[Service, Path], transport: str) -> None:
    service, pdf = registered
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    args = {"source": "LTN_1_20", "revision_id": REVISION, "file_path": str(pdf)}
    async with mcp_session(service.url, transport=transport) as session:
        ingested = await session.call_tool("ingest_policy_revision", args, progress_callback=on_progress)
        silent = await session.call_tool("ingest_policy_revision", {**args, "reindex": True})
    assert ingested.structured_content is not None and ingested.structured_content["action"] == "ingested"
    assert silent.structured_content is not None and silent.structured_content["action"] == "reindexed"
    values = [value for value, _, _ in seen]
    assert values == sorted(set(values)) and values[0] == 0.0 and values[-1] == 100.0
    assert {total for _, total, _ in seen} == {100.0}
    phases = [message for _, _, message in seen]
    assert phases[0] == "fetch" and phases[-1] == "done" and {"extract", "chunk", "embed", "store"} <= set(phases)


def test_only_a_request_that_asks_for_progress_is_answered_as_a_stream(fresh_service: Service) -> None:
    call: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "list_policy_documents"},
    }
    asked = {**call, "params": {**call["params"], "_meta": {"progressToken": "p1"}}}
    with httpx.Client(base_url=fresh_service.url, headers=MCP_HEADERS | bearer(), timeout=30) as client:
        plain, streamed = client.post("/mcp", json=call), client.post("/mcp", json=asked)
    assert plain.headers["content-type"].startswith("application/json")
    assert plain.json()["result"]["structuredContent"]["policy_count"] == 0
    assert streamed.headers["content-type"].startswith("text/event-stream")
    data = [line.removeprefix("data:").strip() for line in streamed.text.splitlines() if line.startswith("data:")]
    assert json.loads(data[-1])["result"]["structuredContent"]["policy_count"] == 0
