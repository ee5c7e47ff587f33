"""An ingestion over MCP reports its progress to a client that asks (a progress token), over SSE, where the
session's stream carries notifications, and sends none to a client that did not ask."""

from __future__ import annotations

from pathlib import Path

import pytest

from lib.policies.lifecycle import register_revision
from lib.policies.models import PolicyCreate, RevisionCreate
from tests.flows.policy_pdfs import policy_pdf_bytes
from tests.mcp_service.conftest import Service, mcp_session

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
    register_revision(stores, "LTN_1_20", RevisionCreate(revision_id=REVISION, version_label="July 2020",
                                                     effective_from="2020-07-27"), pdf.read_bytes())  # fmt: skip
    return fresh_service, pdf


async def test_an_ingestion_over_sse_reports_rising_progress_to_done(registered: tuple[Service, Path]) -> None:
    service, pdf = registered
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    args = {"source": "LTN_1_20", "revision_id": REVISION, "file_path": str(pdf)}
    async with mcp_session(service.url, transport="sse") as session:
        ingested = await session.call_tool("ingest_policy_revision", args, progress_callback=progress)
        silent = await session.call_tool("ingest_policy_revision", {**args, "reindex": True})
    assert ingested.structured_content is not None and ingested.structured_content["action"] == "ingested"
    assert silent.structured_content is not None and silent.structured_content["action"] == "reindexed"
    values = [value for value, _, _ in seen]
    assert values == sorted(set(values)) and values[0] == 0.0 and values[-1] == 100.0
    assert {total for _, total, _ in seen} == {100.0}
    phases = [message for _, _, message in seen]
    assert phases[0] == "fetch" and phases[-1] == "done" and {"extract", "chunk", "embed", "store"} <= set(phases)
