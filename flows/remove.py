"""``remove_policy_revision``: a revision out of every store (spec 001 FR-011).

Registry entry first (searches stop seeing it at once), then its chunks, then its file unless another
revision uses the same one. The sole active revision of a policy is refused
(``cannot_delete_sole_revision``): upload its replacement first.
"""

from __future__ import annotations

from typing import Annotated

from prefect import flow, task
from pydantic import Field

from flows.artifacts import publish_message
from flows.common import IO_TASK_OPTIONS, flow_kb, log_event
from lib.kb import KnowledgeBase
from lib.policies.lifecycle import RemovedRevision, remove_revision
from lib.policies.models import REVISION_ID_PATTERN, SOURCE_PATTERN

FLOW = "remove"


@task(name="remove-revision", **IO_TASK_OPTIONS)
def run_remove(kb: KnowledgeBase, source: str, revision_id: str) -> RemovedRevision:
    return remove_revision(kb, source, revision_id)


@flow(name="remove_policy_revision", validate_parameters=True)
def remove_policy_revision(
    source: Annotated[str, Field(pattern=SOURCE_PATTERN)],
    revision_id: Annotated[str, Field(pattern=REVISION_ID_PATTERN)],
) -> RemovedRevision:
    """Delete a revision everywhere: registry entry, chunks, and its file unless another revision shares it.

    Args:
        source: Policy slug, e.g. NPPF.
        revision_id: Revision to remove, e.g. rev_NPPF_2021_07. The sole active revision of a policy is refused.
    """
    kb = flow_kb()
    log_event("remove.started", source=source, revision_id=revision_id)
    removed = run_remove(kb, source, revision_id)
    publish_message(
        FLOW,
        source,
        revision_id,
        "removed",
        [("Chunks removed", removed.chunks_removed), ("File removed", "yes" if removed.file_removed else "no")],
    )
    log_event(
        "remove.done",
        source=source,
        revision_id=revision_id,
        chunks_removed=removed.chunks_removed,
        file_removed=removed.file_removed,
    )
    return removed
