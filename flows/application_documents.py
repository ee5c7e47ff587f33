"""Application documents through Prefect (spec 003): a whole application's files in, one document out.

``ingest_application_documents`` takes a folder (every file directly in it) or a list of paths, all
inside ``ALLOWED_FILE_ROOTS``, and ingests them one after another through ``lib.documents.ingest``. Documents
run in sequence on purpose: each already uses every core (one single-threaded Tesseract per core for
its scanned pages, all cores for its embeddings), so running two at once would only make them fight.

One bad file does not stop the rest. A file's permanent failure (encrypted, unreadable, unsupported, a
path outside the roots) becomes its row in the outcome table and the run still completes; a store outage
is retried by the task and, if it persists, recorded too, and the run ends ``Failed`` after the other
files are done, so it shows red and can simply be run again (finished files answer ``already_ingested``).

``remove_application_document`` deletes one document everywhere: registry entry, chunks, original.
"""

from __future__ import annotations

import time
from pathlib import PurePath
from typing import Annotated

from prefect import flow, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from pydantic import BaseModel, Field

from flows.common import IO_TASK_OPTIONS, artifact_key, flow_stores, is_transient, log_event
from lib.documents.deletion import delete_document
from lib.documents.ingest import ingest_document, list_application_files
from lib.documents.models import DeletedDocument, IngestResult, IngestSuccess, SkippedDocument
from lib.documents.registry import check_application_ref
from lib.documents.stores import DocumentStores
from lib.errors import KBError

FLOW = "application-documents"


class DocumentOutcome(BaseModel):
    """One row of the outcome table: what happened to one file."""

    file: str
    status: str = Field(description="success | already_ingested | skipped | error")
    document_id: str = ""
    document_type: str = ""
    chunks: int = 0
    extraction_method: str = ""
    contains_drawings: bool = False
    error_type: str = Field(default="", description="The spec's error type, or the skip reason")
    message: str = ""
    seconds: float = 0.0


class ApplicationIngestResult(BaseModel):
    application_ref: str
    documents: list[DocumentOutcome]

    def count(self, status: str) -> int:
        return sum(outcome.status == status for outcome in self.documents)


@task(name="ingest-application-document", **IO_TASK_OPTIONS)
def ingest_file(stores: DocumentStores, path: str, application_ref: str) -> IngestResult:
    """One file through ``lib.documents.ingest.ingest_document``; store outages are retried, bad files are not."""
    return ingest_document(stores, path, application_ref)


@task(name="remove-application-document", **IO_TASK_OPTIONS)
def remove_document(stores: DocumentStores, document_id: str) -> DeletedDocument:
    return delete_document(stores, document_id)


def _outcome(file: str, result: IngestResult, seconds: float) -> DocumentOutcome:
    row = DocumentOutcome(file=file, status=result.status, seconds=round(seconds, 2))
    if isinstance(result, IngestSuccess):
        return row.model_copy(
            update={
                "document_id": result.document_id,
                "document_type": result.document_type,
                "chunks": result.chunks_created,
                "extraction_method": result.extraction_method,
                "contains_drawings": result.contains_drawings,
            }
        )
    if isinstance(result, SkippedDocument):
        message = f"average image ratio {result.image_ratio} over {result.total_pages} pages"
        return row.model_copy(update={"error_type": result.reason, "message": message})
    return row.model_copy(update={"document_id": result.document_id})


def _failure(file: str, exc: BaseException, seconds: float) -> DocumentOutcome:
    if isinstance(exc, KBError):
        error_type, message = exc.error_type, exc.message
    else:
        error_type, message = "internal", f"{type(exc).__name__}: {exc}"
    return DocumentOutcome(file=file, status="error", error_type=error_type, message=message, seconds=round(seconds, 2))


def _publish(result: ApplicationIngestResult) -> None:
    ref = result.application_ref
    counts = ", ".join(
        f"{result.count(status)} {status}" for status in ("success", "already_ingested", "skipped", "error")
    )
    create_table_artifact(
        [row.model_dump() for row in result.documents],
        key=artifact_key(FLOW, ref),
        description=f"Documents of application {ref}: {counts}",
    )
    create_markdown_artifact(
        f"# Application {ref}\n\n{len(result.documents)} files: {counts}\n",
        key=artifact_key(FLOW, "summary", ref),
        description=f"Ingestion of application {ref}",
    )


@flow(name="ingest_application_documents", validate_parameters=True)
def ingest_application_documents(
    application_ref: Annotated[str, Field(min_length=1, max_length=100)],
    folder_or_paths: str | list[str],
) -> ApplicationIngestResult:
    """Ingest every document of a planning application; one row per file in the outcome table.

    Args:
        application_ref: Planning application reference, e.g. 25/01178/REM.
        folder_or_paths: A folder inside ALLOWED_FILE_ROOTS (every file directly in it), or a list of file
            paths inside those roots.
    """
    stores = flow_stores().documents
    ref = check_application_ref(application_ref)
    if isinstance(folder_or_paths, str):
        paths = [str(path) for path in list_application_files(stores.settings.files.allowed_roots, folder_or_paths)]
    else:
        paths = list(folder_or_paths)
    log_event("application_documents.started", application_ref=ref, files=len(paths))

    rows: list[DocumentOutcome] = []
    unfinished: list[BaseException] = []
    for path in paths:
        name = PurePath(path).name
        started = time.perf_counter()
        try:
            ingested = ingest_file(stores, path, ref)
        except Exception as exc:  # one file's failure is its row; the others still run
            row = _failure(name, exc, time.perf_counter() - started)
            if is_transient(exc) or not isinstance(exc, KBError):
                unfinished.append(exc)
        else:
            row = _outcome(name, ingested, time.perf_counter() - started)
        rows.append(row)
        log_event(
            "application_documents.file",
            application_ref=ref,
            document_id=row.document_id,
            file=name,
            status=row.status,
            error_type=row.error_type,
            chunks=row.chunks,
            seconds=row.seconds,
        )

    result = ApplicationIngestResult(application_ref=ref, documents=rows)
    _publish(result)
    log_event(
        "application_documents.done",
        application_ref=ref,
        files=len(rows),
        success=result.count("success"),
        already_ingested=result.count("already_ingested"),
        skipped=result.count("skipped"),
        errors=result.count("error"),
    )
    if unfinished:
        raise unfinished[0]  # a store outage or a bug: the run must show as failed and be run again
    return result


@flow(name="remove_application_document", validate_parameters=True)
def remove_application_document(document_id: Annotated[str, Field(min_length=1, max_length=200)]) -> DeletedDocument:
    """Delete an application document everywhere: registry entry, chunks, original file.

    Args:
        document_id: Document id, e.g. 25_01178_REM_a1b2c3 (list_ingested_documents gives them).
    """
    stores = flow_stores().documents
    removed = remove_document(stores, document_id)
    file_state = "removed" if removed.file_removed else "not found"
    create_markdown_artifact(
        f"# Removed `{removed.document_id}` of application {removed.application_ref}\n\n"
        f"{removed.chunks_removed} chunks removed; original file {file_state}\n",
        key=artifact_key(FLOW, "removed", removed.document_id),
        description=f"Removal of {removed.document_id}",
    )
    log_event(
        "application_documents.removed",
        application_ref=removed.application_ref,
        document_id=removed.document_id,
        chunks_removed=removed.chunks_removed,
        file_removed=removed.file_removed,
    )
    return removed
