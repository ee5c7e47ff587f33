"""``cleanup_kb_uploads``: chunked uploads abandoned past ``KB_UPLOAD_TTL_SECONDS`` (spec 002: no finish within
10 minutes) lose their staged chunks and tracking; chunk objects that no upload tracks (a crash between a
finish's two deletes) go too. Scheduled every few minutes (``prefect.yaml``); the kb tools also clean an
expired upload when it is next touched, so the schedule only bounds how long abandoned bytes stay stored.
It also ingests each kb job whose runner died holding it (a claim past its lease,
``lib.notes.jobs.take_over_stale``): nothing else would end it, its own run having come and gone."""

from __future__ import annotations

import uuid

from prefect import flow, task
from prefect.artifacts import create_markdown_artifact
from prefect.runtime import flow_run

from flows.common import IO_TASK_OPTIONS, flow_stores, log_event
from flows.kb_documents import ingest
from lib.notes.jobs import take_over_stale
from lib.notes.stores import NoteStores
from lib.notes.uploads import UploadCleanup, upload_staging

ARTIFACT_KEY = "kb-uploads-cleanup"


@task(name="clean-kb-uploads", **IO_TASK_OPTIONS)
def cleanup_task(stores: NoteStores) -> UploadCleanup:
    return upload_staging(stores).cleanup()


@flow(name="cleanup_kb_uploads", validate_parameters=True)
def cleanup_kb_uploads() -> UploadCleanup:
    """Remove abandoned kb uploads (tracking in Redis, chunks in the object store) and unowned chunk objects."""
    stores = flow_stores()
    cleaned = cleanup_task(stores.notes)
    log_event("kb_uploads.cleaned", expired=cleaned.expired_uploads, orphan_objects=cleaned.orphan_objects)
    runner = flow_run.get_id() or f"local-{uuid.uuid4().hex}"
    taken = take_over_stale(stores.notes.jobs, runner, lambda job: ingest(stores.notes, job))
    if taken:
        log_event("kb_jobs.taken_over", runner=runner, jobs=taken)
    create_markdown_artifact(
        key=ARTIFACT_KEY,
        markdown=f"Abandoned uploads removed: **{cleaned.expired_uploads}**; "
        f"unowned chunk objects removed: **{cleaned.orphan_objects}**",
        description="kb chunked uploads cleaned",
    )
    return cleaned
