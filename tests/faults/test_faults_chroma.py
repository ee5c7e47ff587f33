"""Chroma server (``chroma run``) stopped under a running service: during searches and during an ingestion.

Searches answer ``store_unavailable`` (MCP envelope, REST error body), never a crash or an empty success;
the ingestion's task retries, then the revision ends ``failed`` with the error and its dates given back;
once Chroma is back the same service answers again, and the audit repairs what Chroma kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from deployments.stack.process import StackProcess
from lib.policies.audit import FindingKind
from lib.policies.models import RevisionStatus
from tests.faults.support import (
    SOURCE,
    audit,
    big_pdf,
    create_policy,
    fault_settings,
    note,
    revision,
    service,
    small_pdf,
    stack_processes,
    upload,
    wait_for_phase,
    wait_settled,
)
from tests.mcp_service.conftest import Service, mcp_session

FIRST = "rev_FAULT_POLICY_2020_01"
MIDDLE = "rev_FAULT_POLICY_2022_01"
SECOND = "rev_FAULT_POLICY_2024_01"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, StackProcess]]:
    base = tmp_path_factory.mktemp("faults-chroma")
    with (
        stack_processes(base / "stack", "redis", "chroma") as (layout, processes),
        service(fault_settings(layout, base)) as svc,
    ):
        create_policy(svc)
        for revision_id, day in ((FIRST, "2020-01-01"), (MIDDLE, "2022-01-01")):
            assert upload(svc, revision_id, day, small_pdf(day)).status_code == 202
            assert wait_settled(svc, revision_id).status == RevisionStatus.ACTIVE
        yield svc, processes["chroma"]


def search(svc: Service, effective_date: str | None = "2021-06-01") -> dict[str, Any]:
    async def call() -> dict[str, Any]:
        async with mcp_session(svc.url) as session:
            arguments: dict[str, Any] = {"query": "cycle lanes on busy roads", "n_results": 3}
            if effective_date:
                arguments["effective_date"] = effective_date
            result = await session.call_tool("search_policy", arguments)
            assert result.structured_content is not None
            return {"is_error": result.is_error, **result.structured_content}

    return anyio.run(call)


def test_searches_while_chroma_is_stopped_answer_store_unavailable_and_work_again_after_its_restart(
    stack: tuple[Service, StackProcess],
) -> None:
    svc, chroma = stack
    assert search(svc)["status"] == "success"
    chroma.stop()
    try:
        answer = search(svc)
        note("mcp_while_down", answer)
        assert answer["is_error"] is True
        assert answer["error_type"] == "store_unavailable"
        assert "Chroma" in answer["message"]
        with svc.rest() as rest:
            params = {"section_ref": "Para 1", "from": FIRST, "to": MIDDLE}
            section = rest.get(f"/policies/{SOURCE}/compare", params=params)
            health = rest.get("/health")
        note("rest_while_down", f"{section.status_code} {section.text}")
        assert section.status_code == 503, section.text
        assert section.json()["error"]["code"] == "store_unavailable"
        assert health.status_code == 503
        checks = health.json()["checks"]
        assert (checks["redis"]["ok"], checks["chroma"]["ok"], checks["object_store"]["ok"]) == (True, False, True)
    finally:
        chroma.start()
    answer = search(svc)
    assert answer["status"] == "success" and answer["results"], answer
    assert audit(svc).before.ok


def test_an_ingestion_while_chroma_is_stopped_retries_then_fails_cleanly_and_the_audit_repairs_what_chroma_kept(
    stack: tuple[Service, StackProcess],
) -> None:
    svc, chroma = stack
    accepted = upload(svc, SECOND, "2024-01-01", big_pdf("2024"))
    assert accepted.status_code == 202, accepted.text
    assert [r["revision_id"] for r in accepted.json()["side_effects"]["superseded"]] == [MIDDLE]
    wait_for_phase(svc, SECOND, "embed")
    chroma.stop()
    try:
        failed = wait_settled(svc, SECOND, within=120)
        note("failed_revision", f"{failed.status.value}: {failed.error}")
        assert failed.status == RevisionStatus.FAILED
        assert failed.error.startswith("store_unavailable: "), failed.error
        assert revision(svc, MIDDLE).effective_to is None, "the dates the failed revision held are given back"
        assert search(svc, "2025-01-01")["error_type"] == "store_unavailable"
    finally:
        chroma.start()
    answer = search(svc, "2025-01-01")
    assert answer["status"] == "success"
    assert {r["revision_id"] for r in answer["results"]} == {MIDDLE}
    outcome = audit(svc)
    note("audit", outcome.describe())
    kinds = {(f.kind, f.revision_id) for f in outcome.before.findings}
    assert kinds == {(FindingKind.STALE_METADATA, MIDDLE)}, outcome.describe()
    assert all(a.ok for a in outcome.repairs) and outcome.after.ok, outcome.describe()
