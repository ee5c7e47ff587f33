"""Issue 23 through the stack's two real replicas: a write answered by replica A (MCP or REST) is seen by the
very next searches through A and B, asked at once; neither answers from its index of what was there before.

A revision of a policy of its own is uploaded over REST (a deployment run the worker completes); both
replicas then hold it in their corpus index, and every step below is a write through A followed by the
same dated search through A and B concurrently.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from deployments.stack import StackLayout
from tests.flows.policy_pdfs import policy_pdf_bytes
from tests.mcp_service.tools import call
from tests.stack.conftest import Prefect, rest

pytestmark = pytest.mark.anyio

SOURCE = "FRESHNESS_CHECK"
REVISION = "rev_FRESHNESS_CHECK_2021_03"
EDITION = "March 2021"
QUESTION = "cycle lanes on busy roads"
REV = {"source": SOURCE, "revision_id": REVISION}


LATER, LATER_EDITION = "rev_FRESHNESS_CHECK_2024_06", "June 2024"


@pytest.fixture(scope="module")
def ingested(stack: StackLayout, prefect: Prefect) -> None:
    """Two revisions, March 2021 and June 2024 (which closes the first), uploaded and ingested."""
    with rest(stack.url("replica-a")) as api:
        created = api.post("/policies", json={"source": SOURCE, "title": "Freshness", "category": "local_plan"})
        assert created.status_code == 201, created.text
        for edition, start in [(EDITION, "2021-03-01"), (LATER_EDITION, "2024-06-01")]:
            form = {"version_label": edition, "effective_from": start}
            pdf = policy_pdf_bytes(edition=edition)
            response = api.post(
                f"/policies/{SOURCE}/revisions", files={"file": ("f.pdf", pdf, "application/pdf")}, data=form
            )
            assert response.status_code == 202, response.text
            run = prefect.wait_final(response.json()["ingestion_job_id"])
            assert run.state is not None and run.state.is_completed(), run.state


async def both(stack: StackLayout, day: str) -> list[dict[str, Any]]:
    """The same dated search through replica A and replica B, at once."""
    args = {"query": QUESTION, "effective_date": day, "sources": [SOURCE], "n_results": 5}
    return list(await asyncio.gather(*(call(stack.url(r), "search_policy", args) for r in ("replica-a", "replica-b"))))


async def found(stack: StackLayout, day: str) -> list[set[tuple[str, str]]]:
    """Per replica, the (revision, edition) of every hit."""
    return [{(h["revision_id"], h["version_label"]) for h in answer["results"]} for answer in await both(stack, day)]


async def test_writes_through_replica_a_are_seen_by_both_replicas_on_their_next_search(
    stack: StackLayout, prefect: Prefect, ingested: None
) -> None:
    here = {(REVISION, EDITION)}
    assert await found(stack, "2022-01-01") == [here, here]  # both hold the revision in their index now

    removed = await call(stack.url("replica-a"), "remove_policy_revision", REV)
    assert removed["status"] == "success" and removed["chunks_removed"] > 0
    assert await found(stack, "2022-01-01") == [set(), set()]

    with rest(stack.url("replica-a")) as api:  # rebuilt from the stored file, by the worker
        response = api.post(f"/policies/{SOURCE}/revisions/{REVISION}/reindex")
    assert response.status_code == 202, response.text
    run = prefect.wait_final(response.json()["ingestion_job_id"])
    assert run.state is not None and run.state.is_completed(), run.state
    assert await found(stack, "2022-01-01") == [here, here]

    with rest(stack.url("replica-a")) as api:
        patched = api.patch(
            f"/policies/{SOURCE}/revisions/{REVISION}",
            json={"effective_from": "2023-01-01", "version_label": "January 2023"},
        )
    assert patched.status_code == 200, patched.text
    assert await found(stack, "2022-01-01") == [set(), set()]
    relabelled = {(REVISION, "January 2023")}
    assert await found(stack, "2024-01-01") == [relabelled, relabelled]
    assert all(
        h["effective_from"] == "2023-01-01" for answer in await both(stack, "2024-01-01") for h in answer["results"]
    )

    later = {(LATER, LATER_EDITION)}
    assert await found(stack, "2025-01-01") == [later, later]
    with rest(stack.url("replica-a")) as api:
        assert api.delete(f"/policies/{SOURCE}/revisions/{LATER}").status_code == 200, "deleted"
    assert await found(stack, "2025-01-01") == [relabelled, relabelled]  # the first, its dates given back
