"""``ingest_policy_revision``: a policy PDF → a searchable revision (spec 001 PolicyIngestionJob).

Two ways in. With ``file`` (a path inside ``ALLOWED_FILE_ROOTS`` or an object-store key) the flow stores
the file content-addressed, registers the revision as ``processing`` and ingests it; running it again
with the same file is safe (``lib.policies.lifecycle.ensure_registered``). Without ``file`` it ingests a revision
that is already registered and still ``processing`` or ``failed``: the REST upload registers first and
then submits this flow. With ``title`` (and ``category``) a policy not registered yet is registered
first, as the CLI's ``ingest --title`` does, so a run started from the Prefect UI's form can begin a policy.

On any failure the revision ends ``failed`` with the error and without chunks, and the run fails.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated

from prefect import flow, task
from prefect.tasks import exponential_backoff
from pydantic import BaseModel, Field, ValidationError

from flows.artifacts import ProgressArtifact, publish_message, publish_outcome
from flows.common import IO_TASK_OPTIONS, flow_stores, log_event
from lib.dates import IsoDate
from lib.errors import InvalidArgumentError, KBError, PolicyAlreadyExistsError
from lib.policies.ingest import ingest_revision
from lib.policies.lifecycle import Registration, RegistrationAction, ensure_registered, fail_revision, read_source_file
from lib.policies.models import (
    REVISION_ID_PATTERN,
    SOURCE_PATTERN,
    IngestOutcome,
    PolicyCategory,
    PolicyCreate,
    RevisionCreate,
    RevisionStatus,
)
from lib.policies.stores import PolicyStores

FLOW = "ingest"


class IngestResult(BaseModel):
    """What an ingestion run did, as the flow's return value."""

    source: str
    revision_id: str
    action: RegistrationAction
    status: RevisionStatus
    version_label: str
    effective_from: date
    effective_to: date | None
    file_key: str
    superseded: list[str] = Field(default_factory=list)
    outcome: IngestOutcome | None = Field(default=None, description="None when the revision was already in place")


@task(name="store-and-register", **IO_TASK_OPTIONS)
def store_and_register(stores: PolicyStores, source: str, data: RevisionCreate, file: str) -> Registration:
    """Read the file, store it content-addressed and register the revision (or find it already there)."""
    return ensure_registered(stores, source, data, read_source_file(stores.objects, stores.settings, file))


@task(name="register-policy-if-new", **IO_TASK_OPTIONS)
def register_policy_if_new(stores: PolicyStores, data: PolicyCreate) -> bool:
    """Register the policy unless it exists (what the CLI's ``ingest --title`` does); True when registered."""
    if stores.registry.policy_exists(data.source):
        return False
    try:
        stores.registry.create_policy(data)
    except PolicyAlreadyExistsError:  # registered by someone else in between: the same end state
        return False
    log_event("ingest.policy_registered", source=data.source, category=data.category.value)
    return True


@task(name="load-registered-revision", **IO_TASK_OPTIONS)
def load_registered(stores: PolicyStores, source: str, revision_id: str) -> Registration:
    """An already-registered revision that still needs its chunks."""
    revision = stores.registry.get_revision(source, revision_id)
    if revision.resolvable:
        raise InvalidArgumentError(
            f"Revision '{revision_id}' of '{source}' is already {revision.status.value}; "
            "run reindex_policy_revision to rebuild its chunks",
            source=source,
            revision_id=revision_id,
        )
    return Registration(revision=revision, action=RegistrationAction.RESUMED)


@task(name="extract-chunk-embed-store", **IO_TASK_OPTIONS)
def run_pipeline(stores: PolicyStores, source: str, revision_id: str) -> IngestOutcome:
    """The one pipeline (``lib.policies.ingest``), its progress mirrored into a progress artifact."""
    return ingest_revision(stores, source, revision_id, progress=ProgressArtifact(FLOW, source, revision_id))


def settle_failure(stores: PolicyStores, source: str, revision_id: str, exc: BaseException) -> str:
    """Leave a revision that did not make it ``failed`` and chunk-free; return the recorded error.

    ``lib.policies.ingest`` already does this for a bad PDF; this covers the rest (retries exhausted on a store
    outage, a bug). If the stores are down even for this, the audit finds the revision stuck later.
    """
    error = f"{exc.error_type}: {exc.message}" if isinstance(exc, KBError) else f"internal: {type(exc).__name__}: {exc}"
    try:
        current = stores.registry.get_revision(source, revision_id)
        if current.status == RevisionStatus.PROCESSING or (
            current.status == RevisionStatus.FAILED and stores.vectors.count_revision(source, revision_id)
        ):
            fail_revision(stores.registry, stores.vectors, source, revision_id, error)
    except Exception as cleanup:  # the original error matters more; the audit catches what is left
        log_event("ingest.cleanup_failed", source=source, revision_id=revision_id, error=repr(cleanup))
    return error


@flow(name="ingest_policy_revision", validate_parameters=True)
def ingest_policy_revision(
    source: Annotated[str, Field(pattern=SOURCE_PATTERN)],
    version_label: str | None = None,
    effective_from: IsoDate | None = None,
    effective_to: IsoDate | None = None,
    notes: str = "",
    file: str | None = None,
    revision_id: Annotated[str | None, Field(pattern=REVISION_ID_PATTERN)] = None,
    title: Annotated[str | None, Field(max_length=300)] = None,
    category: PolicyCategory = PolicyCategory.NATIONAL_POLICY,
) -> IngestResult:
    """Store a policy PDF, register its revision and make it searchable, or finish a registered revision.

    Args:
        source: Policy slug in UPPER_SNAKE_CASE, e.g. NPPF or LTN_1_20. The policy must be registered.
        version_label: Human-readable version, e.g. "December 2024". Required with file.
        effective_from: First day the revision is in force (YYYY-MM-DD). Required with file.
        effective_to: Last day in force (YYYY-MM-DD); leave empty while it is the current revision.
        notes: Free-text notes on this revision.
        file: PDF path inside ALLOWED_FILE_ROOTS, or an object-store key. Leave empty to ingest a revision
            that is already registered and still processing or failed.
        revision_id: Revision id; defaults to rev_{SOURCE}_{YYYY}_{MM} of effective_from. Required without file.
        title: Title of the policy, to register it first if it is new (e.g. "National Planning Policy
            Framework"); ignored when the policy exists. Leave empty for a registered policy.
        category: Category of a policy registered with title.
    """
    stores = flow_stores().policies
    if title:
        register_policy_if_new(stores, PolicyCreate(source=source, title=title, category=category))
    if file:
        if version_label is None or effective_from is None:
            raise InvalidArgumentError("version_label and effective_from are required when file is given")
        try:
            data = RevisionCreate(
                revision_id=revision_id,
                version_label=version_label,
                effective_from=effective_from,
                effective_to=effective_to,
                notes=notes,
            )
        except ValidationError as exc:
            raise InvalidArgumentError(f"Invalid revision parameters: {exc.errors()[0]['msg']}") from exc
        log_event("ingest.started", source=source, revision_id=data.resolved_revision_id(source), file=file)
        registration = store_and_register(stores, source, data, file)
    else:
        if not revision_id:
            raise InvalidArgumentError("revision_id is required when file is omitted")
        log_event("ingest.started", source=source, revision_id=revision_id, file="(registered)")
        registration = load_registered(stores, source, revision_id)

    revision = registration.revision
    superseded = [r.revision_id for r in registration.superseded]
    if superseded:
        log_event("ingest.superseded", source=source, revision_id=revision.revision_id, closed=",".join(superseded))
    if registration.action == RegistrationAction.UNCHANGED:
        log_event("ingest.unchanged", source=source, revision_id=revision.revision_id, status=revision.status.value)
        publish_message(
            FLOW,
            source,
            revision.revision_id,
            "already in place",
            [("Status", revision.status.value), ("Chunks", revision.chunk_count), ("File", revision.file_path)],
        )
        return _result(registration, revision.status, None)

    try:
        delays = exponential_backoff(backoff_factor=stores.settings.jobs.ingest_retry_delay_seconds)
        outcome = run_pipeline.with_options(retry_delay_seconds=delays)(stores, source, revision.revision_id)
    except Exception as exc:
        error = settle_failure(stores, source, revision.revision_id, exc)
        log_event("ingest.failed", source=source, revision_id=revision.revision_id, error=error)
        publish_message(FLOW, source, revision.revision_id, "failed", [("Status", "failed"), ("Error", error)])
        raise

    final = stores.registry.get_revision(source, revision.revision_id)
    publish_outcome(FLOW, final, outcome, superseded=registration.superseded, action=registration.action.value)
    log_event(
        "ingest.done",
        source=source,
        revision_id=final.revision_id,
        status=final.status.value,
        pages=outcome.page_count,
        chunks=outcome.chunks_created,
        method=outcome.extraction_method,
        seconds=outcome.seconds.get("total", 0.0),
    )
    return _result(registration.model_copy(update={"revision": final}), final.status, outcome)


def _result(registration: Registration, status: RevisionStatus, outcome: IngestOutcome | None) -> IngestResult:
    revision = registration.revision
    return IngestResult(
        source=revision.source,
        revision_id=revision.revision_id,
        action=registration.action,
        status=status,
        version_label=revision.version_label,
        effective_from=revision.effective_from,
        effective_to=revision.effective_to,
        file_key=revision.file_path,
        superseded=[r.revision_id for r in registration.superseded],
        outcome=outcome,
    )
