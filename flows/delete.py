"""``delete_policy_revision``: a revision out of every store (spec 001 FR-011, what REST ``DELETE`` does).

Not to be confused with the MCP tool ``remove_policy_revision`` (spec 000 FR-006), which removes only the
revision's chunks and leaves its registry entry and file for a re-ingestion.

Registry entry first (searches stop seeing it at once), then its chunks, then its file unless another
revision uses the same one. The sole active revision of a policy is refused
(``cannot_delete_sole_revision``): upload its replacement first.
"""

from __future__ import annotations

from typing import Annotated

from prefect import flow, task
from pydantic import Field

from flows.artifacts import publish_message
from flows.common import IO_TASK_OPTIONS, flow_stores, log_event
from lib.policies.lifecycle import RemovedRevision, remove_revision
from lib.policies.models import REVISION_ID_PATTERN, SOURCE_PATTERN
from lib.policies.stores import PolicyStores

FLOW = "delete"


@task(name="delete-revision", **IO_TASK_OPTIONS)
def run_delete(stores: PolicyStores, source: str, revision_id: str) -> RemovedRevision:
    return remove_revision(stores, source, revision_id)


@flow(name="delete_policy_revision", validate_parameters=True)
def delete_policy_revision(
    source: Annotated[str, Field(pattern=SOURCE_PATTERN)],
    revision_id: Annotated[str, Field(pattern=REVISION_ID_PATTERN)],
) -> RemovedRevision:
    """Delete a revision everywhere: registry entry, chunks, and its file unless another revision shares it.

    Args:
        source: Policy slug, e.g. NPPF.
        revision_id: Revision to delete, e.g. rev_NPPF_2021_07. The sole active revision of a policy is refused.
    """
    stores = flow_stores().policies
    log_event("delete.started", source=source, revision_id=revision_id)
    removed = run_delete(stores, source, revision_id)
    publish_message(
        FLOW,
        source,
        revision_id,
        "deleted",
        [("Chunks removed", removed.chunks_removed), ("File removed", "yes" if removed.file_removed else "no")],
    )
    log_event(
        "delete.done",
        source=source,
        revision_id=revision_id,
        chunks_removed=removed.chunks_removed,
        file_removed=removed.file_removed,
    )
    return removed
