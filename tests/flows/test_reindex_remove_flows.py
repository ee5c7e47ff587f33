"""Spec 001 ITS-04 (deletion takes the chunks) and ITS-05 (reindex preserves data), through the flows."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from prefect.artifacts import Artifact

from flows.common import artifact_key
from flows.delete import delete_policy_revision
from flows.ingest import ingest_policy_revision
from flows.reindex import reindex_policy_revision
from lib.composition import Stores
from lib.errors import CannotDeleteSoleRevisionError, CannotReindexError
from lib.policies.lifecycle import register_revision
from lib.policies.models import RevisionCreate, RevisionStatus
from lib.policies.reindex import reindex_lock, reindex_lock_key
from lib.policies.search import search_policy
from tests.flows.policy_pdfs import policy_pdf_bytes

QUESTION = "refusing development on highways grounds"


@pytest.fixture
def two_revisions(flow_stores: Stores, make_policy: Callable[..., str], policy_pdf: Callable[..., Path]) -> Stores:
    make_policy()
    for label, start in [("September 2023", "2023-09-05"), ("December 2024", "2024-12-12")]:
        ingest_policy_revision(
            source="NPPF", version_label=label, effective_from=start, file=str(policy_pdf(f"{start}.pdf", label))
        )
    return flow_stores


def _texts(stores: Stores, revision_id: str) -> dict[str, str]:
    got = stores.policies.vectors.collection.get(where={"revision_id": revision_id}, include=["documents"])
    return dict(zip(got["ids"], got["documents"] or [], strict=True))


def test_its04_deleting_a_revision_takes_its_chunks_and_file_and_reopens_the_one_it_closed(
    two_revisions: Stores, backend: str
) -> None:
    stores = two_revisions
    newest = stores.policies.registry.get_revision("NPPF", "rev_NPPF_2024_12")
    assert stores.policies.vectors.count_revision("NPPF", "rev_NPPF_2024_12") == newest.chunk_count > 0

    removed = delete_policy_revision(source="NPPF", revision_id="rev_NPPF_2024_12")

    assert (removed.chunks_removed, removed.file_removed) == (newest.chunk_count, True)
    assert stores.policies.vectors.count_revision("NPPF", "rev_NPPF_2024_12") == 0
    assert not stores.objects.exists(newest.file_path)
    reopened = stores.policies.registry.get_revision("NPPF", "rev_NPPF_2023_09")
    assert (reopened.status, reopened.effective_to) == (RevisionStatus.ACTIVE, None)
    assert {m["effective_to"] for _, m in stores.policies.vectors.iter_metadata()} == {99991231}
    summary = Artifact.get(artifact_key("delete", "NPPF", "rev_NPPF_2024_12"))
    assert summary is not None and "deleted" in str(summary.data)


def test_the_sole_active_revision_cannot_be_deleted(two_revisions: Stores) -> None:
    delete_policy_revision(source="NPPF", revision_id="rev_NPPF_2024_12")
    with pytest.raises(CannotDeleteSoleRevisionError):
        delete_policy_revision(source="NPPF", revision_id="rev_NPPF_2023_09")
    assert two_revisions.policies.vectors.count_revision("NPPF", "rev_NPPF_2023_09") > 0


def test_its05_reindex_rebuilds_the_same_chunks_and_drops_stale_ones_while_searches_keep_finding_it(
    two_revisions: Stores, backend: str
) -> None:
    stores = two_revisions
    before = _texts(stores, "rev_NPPF_2024_12")
    stale_id = "NPPF__rev_NPPF_2024_12__Para_99__000"
    meta = dict(next(m for _, m in stores.policies.vectors.iter_metadata({"revision_id": "rev_NPPF_2024_12"})))
    stores.policies.vectors.upsert(
        [stale_id], ["99. A paragraph the file no longer has."], [stores.embedder.embed("x")], [meta]
    )
    hits_seen: list[int] = []
    stop = threading.Event()

    def keep_searching() -> None:
        while not stop.wait(0.05):
            hits_seen.append(
                len(search_policy(stores.policies, QUESTION, effective_date="2025-06-01", n_results=3).results)
            )

    searcher = threading.Thread(target=keep_searching)
    searcher.start()
    try:
        result = reindex_policy_revision(source="NPPF", revision_id="rev_NPPF_2024_12")
    finally:
        stop.set()
        searcher.join()

    assert result.outcome.chunks_created == len(before) and result.outcome.chunks_removed == 1
    assert _texts(stores, "rev_NPPF_2024_12") == before
    assert stores.policies.registry.get_revision("NPPF", "rev_NPPF_2024_12").status == RevisionStatus.ACTIVE
    assert hits_seen and min(hits_seen) == 3, "a search during the reindex found the revision every time"
    progress = Artifact.get(artifact_key("reindex", "progress", "NPPF", "rev_NPPF_2024_12"))
    assert progress is not None and float(str(progress.data)) == 100.0


def test_a_revision_still_processing_cannot_be_reindexed(flow_stores: Stores, make_policy: Callable[..., str]) -> None:
    make_policy()
    register_revision(
        flow_stores.policies,
        "NPPF",
        RevisionCreate(version_label="2024", effective_from="2024-12-12"),
        policy_pdf_bytes(),
    )
    with pytest.raises(CannotReindexError) as refused:
        reindex_policy_revision(source="NPPF", revision_id="rev_NPPF_2024_12")
    assert refused.value.error_type == "cannot_reindex" and "processing" in refused.value.message
    assert flow_stores.policies.vectors.count_revision("NPPF", "rev_NPPF_2024_12") == 0


def test_a_second_reindex_of_the_same_revision_is_refused_while_the_first_holds_the_lock(
    two_revisions: Stores,
) -> None:
    stores = two_revisions
    with (
        reindex_lock(stores.policies.registry.client, "NPPF", "rev_NPPF_2024_12"),
        pytest.raises(CannotReindexError, match="already being reindexed"),
    ):
        reindex_policy_revision(source="NPPF", revision_id="rev_NPPF_2024_12")
    assert reindex_policy_revision(source="NPPF", revision_id="rev_NPPF_2024_12").status == RevisionStatus.ACTIVE
    key = reindex_lock_key("NPPF", "rev_NPPF_2024_12")
    assert not stores.policies.registry.client.exists(key), "the finished reindex released its lock"
