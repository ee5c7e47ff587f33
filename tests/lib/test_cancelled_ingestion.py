"""Long work stopped by its progress callback (``lib.progress``: what a cancelled MCP task does) keeps nothing: a
first policy ingestion ends ``failed``, a policy reindex leaves the revision as it was, a document ingestion
registers nothing (and may be run again). Real stores and model; the callback raises at the embedding phase, after
extraction and chunking and before any write."""

from __future__ import annotations

import shutil

import pytest

from lib.composition import Stores
from lib.documents.ingest import ingest_document
from lib.errors import WorkCancelledError
from lib.policies.ingest import ingest_revision
from lib.policies.lifecycle import register_revision
from lib.policies.models import PolicyCreate, RevisionCreate, RevisionStatus
from lib.policies.reindex import reindex_revision
from lib.progress import Progress
from tests.fixtures_paths import TABLE_PDF
from tests.flows.policy_pdfs import policy_pdf_bytes

REVISION = "rev_LTN_1_20_2020_07"


def cancel_at(stop: str) -> tuple[list[str], Progress]:
    """A progress callback that records the phases and raises at ``stop`` as a cancelled task's does."""
    phases: list[str] = []

    def progress(phase: str, percent: float) -> None:
        phases.append(phase)
        if phase == stop:
            raise WorkCancelledError(f"cancelled during {phase}")

    return phases, progress


def registered(stores: Stores) -> None:
    policy = PolicyCreate(source="LTN_1_20", title="LTN 1/20", category="national_guidance")
    stores.policies.registry.create_policy(policy)
    register_revision(
        stores.policies,
        "LTN_1_20",
        RevisionCreate(revision_id=REVISION, version_label="July 2020", effective_from="2020-07-27"),
        policy_pdf_bytes(edition="July 2020"),
    )


def test_a_cancelled_first_policy_ingestion_ends_failed_without_chunks(stores: Stores) -> None:
    registered(stores)
    phases, progress = cancel_at("embed")
    with pytest.raises(WorkCancelledError):
        ingest_revision(stores.policies, "LTN_1_20", REVISION, progress=progress)
    revision = stores.policies.registry.get_revision("LTN_1_20", REVISION)
    assert phases[:3] == ["fetch", "extract", "chunk"] and phases[-1] == "embed"
    assert revision.status == RevisionStatus.FAILED and revision.error.startswith("cancelled")
    assert stores.policies.vectors.count_revision("LTN_1_20", REVISION) == 0


def test_a_cancelled_reindex_leaves_the_revision_as_it_was(stores: Stores) -> None:
    registered(stores)
    first = ingest_revision(stores.policies, "LTN_1_20", REVISION)
    before = stores.policies.registry.get_revision("LTN_1_20", REVISION)
    _, progress = cancel_at("store")
    with pytest.raises(WorkCancelledError):
        reindex_revision(stores.policies, "LTN_1_20", REVISION, progress=progress)
    after = stores.policies.registry.get_revision("LTN_1_20", REVISION)
    assert after.status == before.status == RevisionStatus.ACTIVE and after.chunk_count == first.chunks_created
    assert (after.progress_phase, after.progress_percent) == ("done", 100.0)
    assert stores.policies.vectors.count_revision("LTN_1_20", REVISION) == first.chunks_created


def test_a_cancelled_document_ingestion_registers_nothing(stores: Stores) -> None:
    path = stores.settings.files.allowed_roots[0] / "Transport_Assessment.pdf"
    shutil.copyfile(TABLE_PDF, path)
    phases, progress = cancel_at("embed")
    with pytest.raises(WorkCancelledError):
        ingest_document(stores.documents, str(path), "25/00001/FUL", progress=progress)
    assert phases[:3] == ["fetch", "extract", "chunk"]
    assert stores.documents.registry.list_application("25/00001/FUL") == []
    assert ingest_document(stores.documents, str(path), "25/00001/FUL").status == "success"
