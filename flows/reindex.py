"""``reindex_policy_revision``: rebuild a revision's chunks from its stored file (spec 001 FR-012).

New chunks are written before stale ones are deleted, so searches find the revision throughout. A
revision still ``processing`` is refused, as is a second reindex of a revision already being reindexed
(``lib.policies.reindex``); both fail the run with ``cannot_reindex`` and are never retried.
"""

from __future__ import annotations

from typing import Annotated

from prefect import flow, task
from pydantic import BaseModel, Field

from flows.artifacts import ProgressArtifact, publish_message, publish_outcome
from flows.common import IO_TASK_OPTIONS, flow_stores, log_event
from lib.policies.models import REVISION_ID_PATTERN, SOURCE_PATTERN, IngestOutcome, RevisionStatus
from lib.policies.reindex import reindex_revision
from lib.policies.stores import PolicyStores

FLOW = "reindex"


class ReindexResult(BaseModel):
    source: str
    revision_id: str
    status: RevisionStatus
    chunks_before: int
    outcome: IngestOutcome


@task(name="reindex-from-stored-file", **IO_TASK_OPTIONS)
def run_reindex(stores: PolicyStores, source: str, revision_id: str) -> IngestOutcome:
    return reindex_revision(stores, source, revision_id, progress=ProgressArtifact(FLOW, source, revision_id))


@flow(name="reindex_policy_revision", validate_parameters=True)
def reindex_policy_revision(
    source: Annotated[str, Field(pattern=SOURCE_PATTERN)],
    revision_id: Annotated[str, Field(pattern=REVISION_ID_PATTERN)],
) -> ReindexResult:
    """Rebuild a revision's chunks from its stored file; searches keep finding it throughout.

    Args:
        source: Policy slug, e.g. NPPF.
        revision_id: Revision to rebuild, e.g. rev_NPPF_2024_12. Refused while it is processing.
    """
    stores = flow_stores().policies
    before = stores.registry.get_revision(source, revision_id)
    log_event("reindex.started", source=source, revision_id=revision_id, status=before.status.value)
    try:
        outcome = run_reindex(stores, source, revision_id)
    except Exception as exc:
        error = getattr(exc, "error_type", type(exc).__name__)
        log_event("reindex.failed", source=source, revision_id=revision_id, error=f"{error}: {exc}")
        publish_message(FLOW, source, revision_id, "failed", [("Error", f"{error}: {exc}")])
        raise
    final = stores.registry.get_revision(source, revision_id)
    publish_outcome(FLOW, final, outcome)
    log_event(
        "reindex.done",
        source=source,
        revision_id=revision_id,
        chunks_before=before.chunk_count,
        chunks=outcome.chunks_created,
        removed=outcome.chunks_removed,
        seconds=outcome.seconds.get("total", 0.0),
    )
    return ReindexResult(
        source=source, revision_id=revision_id, status=final.status, chunks_before=before.chunk_count, outcome=outcome
    )
