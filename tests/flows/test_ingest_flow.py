"""``ingest_policy_revision`` end to end: spec 001 ITS-01 (lifecycle) and ITS-03 (supersession), failures
that leave no chunks and are never retried, idempotent re-runs, artifacts and progress."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from prefect.artifacts import Artifact
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
from prefect.client.schemas.objects import TaskRun
from prefect.exceptions import ParameterTypeError

from flows.artifacts import ProgressArtifact
from flows.common import artifact_key
from flows.ingest import ingest_policy_revision
from lib.composition import Stores
from lib.errors import ExtractionFailedError, InvalidArgumentError, PathNotAllowedError, RevisionAlreadyExistsError
from lib.policies.lifecycle import RegistrationAction, register_revision
from lib.policies.models import RevisionCreate, RevisionStatus
from lib.policies.search import search_policy
from tests.fixtures_paths import ENCRYPTED_PASSWORD_PDF
from tests.flows.policy_pdfs import policy_pdf_bytes
from tests.polling import eventually

QUESTION = "refusing development on highways grounds"


def test_its01_a_revision_ingested_through_the_flow_is_active_searchable_and_cited(
    flow_stores: Stores, make_policy: Callable[..., str], policy_pdf: Callable[..., Path], backend: str
) -> None:
    make_policy()
    pdf = policy_pdf("nppf-2024.pdf", "December 2024")

    result = ingest_policy_revision(
        source="NPPF", version_label="December 2024", effective_from="2024-12-12", file=str(pdf)
    )

    assert (result.revision_id, result.action, result.status) == (
        "rev_NPPF_2024_12",
        RegistrationAction.REGISTERED,
        RevisionStatus.ACTIVE,
    )
    revision = flow_stores.policies.registry.get_revision("NPPF", "rev_NPPF_2024_12")
    assert revision.status == RevisionStatus.ACTIVE and revision.ingested_at is not None
    assert revision.page_count == 2 and revision.file_size_bytes == pdf.stat().st_size
    assert revision.chunk_count == flow_stores.policies.vectors.count_revision("NPPF", "rev_NPPF_2024_12") == 6
    assert flow_stores.objects.get_bytes(revision.file_path) == pdf.read_bytes()
    assert revision.file_path == f"policies/NPPF/rev_NPPF_2024_12/{revision.file_sha256}.pdf"
    hit = search_policy(flow_stores.policies, QUESTION, effective_date="2025-06-01", n_results=1).results[0]
    assert (hit.source, hit.revision_id, hit.version_label, hit.section_ref, hit.page_number) == (
        "NPPF",
        "rev_NPPF_2024_12",
        "December 2024",
        "Para 1",
        1,
    )


def test_the_flow_publishes_a_summary_a_section_table_and_finished_progress(
    flow_stores: Stores, make_policy: Callable[..., str], policy_pdf: Callable[..., Path]
) -> None:
    make_policy("ART_TEST")
    pdf = policy_pdf("art.pdf", "artifact edition")

    result = ingest_policy_revision(
        source="ART_TEST", version_label="v1", effective_from="2024-01-01", file=str(pdf), revision_id="rev_art_1"
    )

    summary = Artifact.get(artifact_key("ingest", "ART_TEST", "rev_art_1"))
    assert summary is not None and summary.type == "markdown"
    assert "**active**" in str(summary.data) and "text_layer" in str(summary.data)
    assert "| fetch | extract | chunk | embed | store | total |" in str(summary.data)
    table = Artifact.get(artifact_key("ingest", "sections", "ART_TEST", "rev_art_1"))
    assert table is not None and table.type == "table"
    assert "Para 4" in str(table.data) and result.outcome is not None
    assert result.outcome.sections == {
        "Chapter 1": 1,
        "Para 1": 1,
        "Para 2": 1,
        "Chapter 2": 1,
        "Para 3": 1,
        "Para 4": 1,
    }
    progress = Artifact.get(artifact_key("ingest", "progress", "ART_TEST", "rev_art_1"))
    assert progress is not None and progress.type == "progress" and float(str(progress.data)) == 100.0
    assert set(result.outcome.seconds) == {"fetch", "extract", "chunk", "embed", "store", "total"}


def test_the_progress_artifact_moves_through_every_phase() -> None:
    seen: list[tuple[str, int]] = []

    class Recording(ProgressArtifact):
        def __call__(self, phase: str, percent: float) -> None:
            seen.append((phase, int(percent)))

    reporter = Recording("ingest", "NPPF", "rev_1")
    for phase, percent in [("fetch", 0), ("extract", 5), ("chunk", 30), ("embed", 35), ("store", 85), ("done", 100)]:
        reporter(phase, percent)
    assert [phase for phase, _ in seen] == ["fetch", "extract", "chunk", "embed", "store", "done"]
    assert reporter.key == "ingest-progress-nppf-rev-1"


def test_its03_a_new_revision_closes_the_open_one_and_the_run_reports_it(
    flow_stores: Stores, make_policy: Callable[..., str], policy_pdf: Callable[..., Path]
) -> None:
    make_policy()
    ingest_policy_revision(
        source="NPPF",
        version_label="September 2023",
        effective_from="2023-09-05",
        file=str(policy_pdf("a.pdf", "2023")),
    )
    result = ingest_policy_revision(
        source="NPPF", version_label="December 2024", effective_from="2024-12-12", file=str(policy_pdf("b.pdf", "2024"))
    )

    assert result.superseded == ["rev_NPPF_2023_09"]
    old = flow_stores.policies.registry.get_revision("NPPF", "rev_NPPF_2023_09")
    assert (old.status, str(old.effective_to)) == (RevisionStatus.SUPERSEDED, "2024-12-11")
    dates = {
        m["effective_to"] for _, m in flow_stores.policies.vectors.iter_metadata({"revision_id": "rev_NPPF_2023_09"})
    }
    assert dates == {20241211}
    summary = Artifact.get(artifact_key("ingest", "NPPF", "rev_NPPF_2024_12"))
    assert summary is not None and "`rev_NPPF_2023_09` (now ends 2024-12-11)" in str(summary.data)


def test_running_the_same_ingestion_again_changes_nothing(
    flow_stores: Stores, make_policy: Callable[..., str], policy_pdf: Callable[..., Path]
) -> None:
    make_policy()
    pdf = policy_pdf("nppf.pdf", "2024")
    params = {"source": "NPPF", "version_label": "December 2024", "effective_from": "2024-12-12", "file": str(pdf)}
    first = ingest_policy_revision(**params)
    chunks = flow_stores.policies.vectors.count()

    again = ingest_policy_revision(**params)

    assert again.action == RegistrationAction.UNCHANGED and again.outcome is None
    assert again.status == RevisionStatus.ACTIVE and first.file_key == again.file_key
    assert flow_stores.policies.vectors.count() == chunks
    assert len(list(flow_stores.objects.list())) == 1


def test_another_file_for_a_live_revision_is_refused(
    flow_stores: Stores, make_policy: Callable[..., str], policy_pdf: Callable[..., Path]
) -> None:
    make_policy()
    params = {"source": "NPPF", "version_label": "December 2024", "effective_from": "2024-12-12"}
    ingest_policy_revision(**params, file=str(policy_pdf("a.pdf", "first")))
    with pytest.raises(RevisionAlreadyExistsError):
        ingest_policy_revision(**params, file=str(policy_pdf("b.pdf", "second")))
    assert len(list(flow_stores.objects.list())) == 1


def test_a_bad_pdf_fails_the_run_once_leaves_the_revision_failed_without_chunks_and_restores_the_old_one(
    flow_stores: Stores, make_policy: Callable[..., str], policy_pdf: Callable[..., Path], inbox: Path
) -> None:
    make_policy()
    ingest_policy_revision(
        source="NPPF", version_label="2023", effective_from="2023-09-05", file=str(policy_pdf("ok.pdf", "2023"))
    )
    bad = inbox / "encrypted.pdf"
    bad.write_bytes(ENCRYPTED_PASSWORD_PDF.read_bytes())

    state = ingest_policy_revision(
        source="NPPF", version_label="2024", effective_from="2024-12-12", file=str(bad), return_state=True
    )

    assert state.is_failed()
    with pytest.raises(ExtractionFailedError):
        state.result()
    failed = flow_stores.policies.registry.get_revision("NPPF", "rev_NPPF_2024_12")
    assert failed.status == RevisionStatus.FAILED and failed.error.startswith("encrypted:")
    assert flow_stores.policies.vectors.count_revision("NPPF", "rev_NPPF_2024_12") == 0
    restored = flow_stores.policies.registry.get_revision("NPPF", "rev_NPPF_2023_09")
    assert (restored.status, restored.effective_to) == (RevisionStatus.ACTIVE, None)

    def pipeline_runs() -> list[TaskRun]:
        with get_client(sync_client=True) as client:
            runs = client.read_task_runs(
                flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[state.state_details.flow_run_id]))
            )
        return [r for r in runs if r.name.startswith("extract-chunk-embed-store") and r.state and r.state.is_final()]

    # Prefect records task runs from their events, after the flow has returned: wait for the final one.
    eventually(lambda: bool(pipeline_runs()), within=30, every=0.2)
    pipeline = pipeline_runs()
    assert len(pipeline) == 1 and pipeline[0].run_count == 1, "a bad PDF must not be retried"
    summary = Artifact.get(artifact_key("ingest", "NPPF", "rev_NPPF_2024_12"))
    assert summary is not None and "failed" in str(summary.data) and "encrypted" in str(summary.data)


def test_a_failed_revision_is_replaced_when_the_ingestion_is_run_again_with_a_good_file(
    flow_stores: Stores, make_policy: Callable[..., str], policy_pdf: Callable[..., Path], inbox: Path
) -> None:
    make_policy()
    bad = inbox / "encrypted.pdf"
    bad.write_bytes(ENCRYPTED_PASSWORD_PDF.read_bytes())
    params = {"source": "NPPF", "version_label": "2024", "effective_from": "2024-12-12"}
    assert ingest_policy_revision(**params, file=str(bad), return_state=True).is_failed()

    result = ingest_policy_revision(**params, file=str(policy_pdf("good.pdf", "2024")))

    assert (result.action, result.status) == (RegistrationAction.REPLACED_FAILED, RevisionStatus.ACTIVE)
    assert [k.rsplit("/", 1)[-1] for k in flow_stores.objects.list()] == [result.file_key.rsplit("/", 1)[-1]]


def test_without_file_the_flow_finishes_a_registered_revision(
    flow_stores: Stores, make_policy: Callable[..., str]
) -> None:
    make_policy()
    register_revision(
        flow_stores.policies,
        "NPPF",
        RevisionCreate(version_label="2024", effective_from="2024-12-12"),
        policy_pdf_bytes("2024"),
    )
    assert flow_stores.policies.registry.get_revision("NPPF", "rev_NPPF_2024_12").status == RevisionStatus.PROCESSING

    result = ingest_policy_revision(source="NPPF", revision_id="rev_NPPF_2024_12")

    assert (result.action, result.status) == (RegistrationAction.RESUMED, RevisionStatus.ACTIVE)
    with pytest.raises(InvalidArgumentError, match="reindex"):
        ingest_policy_revision(source="NPPF", revision_id="rev_NPPF_2024_12")


def test_file_may_name_an_object_store_key_and_must_otherwise_be_inside_the_allowed_roots(
    flow_stores: Stores, make_policy: Callable[..., str], tmp_path: Path
) -> None:
    make_policy()
    flow_stores.objects.put_bytes("uploads/staged/nppf.pdf", policy_pdf_bytes("staged"))
    result = ingest_policy_revision(
        source="NPPF", version_label="2024", effective_from="2024-12-12", file="uploads/staged/nppf.pdf"
    )
    assert result.status == RevisionStatus.ACTIVE and result.file_key.startswith("policies/NPPF/rev_NPPF_2024_12/")

    outside = tmp_path / "outside.pdf"
    outside.write_bytes(policy_pdf_bytes("outside"))
    with pytest.raises(PathNotAllowedError):
        ingest_policy_revision(source="NPPF", version_label="2025", effective_from="2025-06-01", file=str(outside))
    assert [r.revision_id for r in flow_stores.policies.registry.list_revisions("NPPF")] == ["rev_NPPF_2024_12"]


def test_missing_parameters_are_reported_before_anything_is_stored(
    flow_stores: Stores, make_policy: Callable[..., str], policy_pdf: Callable[..., Path]
) -> None:
    make_policy()
    pdf = policy_pdf("x.pdf")
    with pytest.raises(InvalidArgumentError, match="version_label and effective_from"):
        ingest_policy_revision(source="NPPF", file=str(pdf))
    with pytest.raises(InvalidArgumentError, match="revision_id is required"):
        ingest_policy_revision(source="NPPF")
    with pytest.raises(InvalidArgumentError, match="effective_to"):
        ingest_policy_revision(
            source="NPPF", version_label="x", effective_from="2024-01-01", effective_to="2023-01-01", file=str(pdf)
        )
    assert list(flow_stores.objects.list()) == [] and flow_stores.policies.registry.list_revisions("NPPF") == []


@pytest.mark.parametrize("day", [0, 1.5, "2024-1-1", "2024-12-12T00:00:00"])
def test_a_date_parameter_is_taken_only_as_an_iso_string(
    flow_stores: Stores, make_policy: Callable[..., str], policy_pdf: Callable[..., Path], day: object
) -> None:
    """Issue 46: Prefect's lax parsing read a number as a Unix timestamp (``0`` as 1970-01-01)."""
    make_policy()
    pdf = policy_pdf("x.pdf")
    for name in ("effective_from", "effective_to"):
        dates = {"effective_from": "2024-01-01", name: day}
        with pytest.raises(ParameterTypeError):
            ingest_policy_revision(source="NPPF", version_label="x", file=str(pdf), **dates)  # type: ignore[arg-type]
    assert flow_stores.policies.registry.list_revisions("NPPF") == []
