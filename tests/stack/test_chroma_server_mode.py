"""Chroma in server mode, behind two replicas: the whole policy pipeline (run by the Prefect worker) and
search give the answers the embedded default gives on the real NPPF, and the replicas agree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from prefect.client.schemas.objects import FlowRun

from deployments.stack import StackLayout
from lib.composition import Stores
from lib.policies.search import search_policy
from lib.policies.seeding import seed_policies
from lib.stores.embeddings import Embedder
from tests.conftest import isolated_stores
from tests.mcp_service.tools import call
from tests.stack.conftest import nppf_seed_file

pytestmark = pytest.mark.anyio

EMBEDDED_DB = 11
QUESTIONS = (
    ("When should development be refused on highways grounds?", "2025-06-01"),
    ("presumption in favour of sustainable development", "2025-01-31"),
    ("green belt boundaries exceptional circumstances", "2026-03-15"),
    ("design codes and beauty", "2024-12-12"),
)
TOP = 5


@pytest.fixture(scope="module")
def embedded_nppf(
    stack_nppf_started: FlowRun,
    tmp_path_factory: pytest.TempPathFactory,
    redis_url: str,
    chroma_dir: Path,
    embedder: Embedder,
) -> Stores:
    """NPPF December 2024 through the same pipeline, embedded: Chroma on disk, local object store (while
    the stack's worker ingests it too)."""
    folder = tmp_path_factory.mktemp("embedded_nppf")
    stores = isolated_stores(f"{redis_url.rsplit('/', 1)[0]}/{EMBEDDED_DB}", folder, chroma_dir, embedder)
    stores.policies.registry.client.flushdb()
    steps = seed_policies(stores.policies, nppf_seed_file(folder / "seed"))
    assert [s.action.value for s in steps] == ["created_policy", "ingested"], steps
    return stores


def hits(results: list[Any]) -> list[tuple[str, str, int]]:
    return [(h["revision_id"], h["section_ref"], h["page_number"]) for h in results[:TOP]]


async def search(url: str, question: str, day: str | None) -> dict[str, Any]:
    arguments: dict[str, Any] = {"query": question, "sources": ["NPPF"], "n_results": TOP}
    if day:
        arguments["effective_date"] = day
    return await call(url, "search_policy", arguments)


@pytest.mark.slow
async def test_the_worker_ingests_the_nppf_into_the_chroma_server_as_the_embedded_pipeline_does(
    stack: StackLayout, embedded_nppf: Stores, stack_nppf: FlowRun
) -> None:
    assert stack_nppf.state is not None and stack_nppf.state.is_completed(), stack_nppf.state
    revision = await call(stack.url("replica-a"), "list_policy_revisions", {"source": "NPPF"})
    stacked = {r["revision_id"]: r for r in revision["revisions"]}["rev_NPPF_2024_12"]
    embedded = embedded_nppf.policies.registry.get_revision("NPPF", "rev_NPPF_2024_12")
    assert stacked["chunk_count"] == embedded.chunk_count > 0
    assert stacked["status"] == embedded.status.value == "active"


@pytest.mark.slow
@pytest.mark.parametrize(("question", "day"), QUESTIONS)
async def test_dated_searches_through_a_replica_find_what_the_embedded_default_finds(
    stack: StackLayout, embedded_nppf: Stores, stack_nppf: FlowRun, question: str, day: str
) -> None:
    served = await search(stack.url("replica-a"), question, day)
    local = search_policy(embedded_nppf.policies, question, sources=["NPPF"], effective_date=day, n_results=TOP)
    expected = [(h.revision_id, h.section_ref, h.page_number) for h in local.results]
    assert served["status"] == "success"
    assert hits(served["results"]) == expected and expected
    for score in ("relevance_score", "score"):
        served_scores = [h[score] for h in served["results"][:TOP]]
        assert served_scores == pytest.approx([getattr(h, score) for h in local.results], abs=1e-3)


async def test_a_day_before_the_first_revision_finds_nothing_in_both(
    stack: StackLayout, embedded_nppf: Stores, stack_nppf: FlowRun
) -> None:
    served = await search(stack.url("replica-b"), "green belt", "2020-01-01")
    local = search_policy(
        embedded_nppf.policies, "green belt", sources=["NPPF"], effective_date="2020-01-01", n_results=TOP
    )
    assert served["results"] == [] and local.results == []


@pytest.mark.parametrize(("question", "day"), [*QUESTIONS, ("cycle parking", None)])
async def test_the_two_replicas_answer_identically(
    stack: StackLayout, stack_nppf: FlowRun, question: str, day: str | None
) -> None:
    a = await search(stack.url("replica-a"), question, day)
    b = await search(stack.url("replica-b"), question, day)
    assert a["results"] and a["results"] == b["results"]
