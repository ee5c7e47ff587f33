"""The kb engine's HTTP API (spec 002: what the ``kb`` MCP server calls), under ``/api/v1`` beside the policies.

Thin handlers over ``lib.notes`` (the functions the ``kb`` server's in-process engine calls too): search,
jobs (a JSON note or a multipart file, ingested by the Prefect flow ``ingest_kb_document``), documents with
their chunks, tags, in-place note updates and the status.
Errors are raised and mapped once by ``errors.install_error_handlers`` (``{"error": {code, message, details}}``).
"""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any, Literal

import anyio.to_thread
from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, ValidationError
from starlette.datastructures import UploadFile

from lib.composition import Stores
from lib.errors import FileTooLargeError
from lib.notes import engine
from lib.notes.ingest import update_note
from lib.notes.jobs import DEFAULT_LIST, MAX_LIST, new_file_job, new_note_job
from lib.notes.models import DocumentDetail, DocumentOut, JobOut, JobRecord, JobStatus, SearchResult
from lib.notes.search import DEFAULT_TOP, search_notes
from lib.notes.status import EngineStatus, engine_status
from lib.notes.stores import NoteStores
from lib.observability.metrics import upload_bytes
from mcp_service.rest.errors import ApiError, error_responses, validation_details
from mcp_service.rest.upload import FORM_OVERHEAD
from mcp_service.search_lane import run_search

TAG = "kb"


def note_stores(request: Request) -> NoteStores:
    """The kb engine's stores of the app's ``Stores`` (``rest.app``), opened on the first request that needs them."""
    stores: NoteStores = request.app.state.stores.notes
    return stores


Notes = Annotated[NoteStores, Depends(note_stores)]
DocumentId = Annotated[int, Path(ge=1, description="The integer id the registry allocated")]


class SearchRequest(BaseModel):
    query: str = Field(min_length=1, description="What to look for")
    top: int = Field(default=DEFAULT_TOP, ge=1, description="How many chunks, 1..MAX_RESULTS")
    tags: list[str] | None = Field(default=None, description="Only documents carrying ALL of these tags")
    fts_only: bool = Field(default=False, description="Rank by words only (the lexical mode)")
    mode: Literal["hybrid", "dense", "lexical"] | None = Field(default=None, description="Default hybrid")


class NoteJobRequest(BaseModel):
    text: str = Field(min_length=1)
    tags: list[str] = Field(default_factory=list)
    title: str | None = None
    source_path: str | None = None


class JobAccepted(BaseModel):
    job_id: str
    status: JobStatus


class JobList(BaseModel):
    jobs: list[JobOut]


class DocumentList(BaseModel):
    documents: list[DocumentOut]


class TagsRequest(BaseModel):
    tags: list[str] = Field(min_length=1)


class NoteUpdate(BaseModel):
    text: str = Field(min_length=1)


JOB_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": NoteJobRequest.model_json_schema()},
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {
                        "file": {"type": "string", "format": "binary", "description": "PDF, Markdown or plain text"},
                        "tags": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "Repeated fields, or one comma-separated field",
                        },
                        "source_path": {"type": "string"},
                    },
                }
            },
        },
    }
}

router = APIRouter(tags=[TAG])


@router.post("/search", response_model=SearchResult, responses=error_responses(400, 422))
async def search(body: SearchRequest, stores: Notes) -> SearchResult:
    """The best chunks by meaning and words (``hybrid``), meaning (``dense``) or words (``lexical``/``fts_only``)."""
    work = partial(search_notes, stores, body.query, body.top, body.tags, fts_only=body.fts_only, mode=body.mode)
    return await run_search(work, stores.settings.search)


@router.post(
    "/jobs",
    status_code=202,
    response_model=JobAccepted,
    openapi_extra=JOB_BODY,
    responses=error_responses(400, 413, 415, 422),
)
async def create_job(request: Request) -> JSONResponse:
    """Queue a note (JSON) or a file (multipart) for ingestion; the job id comes back at once."""
    stores = note_stores(request)
    content_type = request.headers.get("content-type", "")
    if content_type.startswith("multipart/form-data"):
        data, filename, tags, source_path = await _read_file_form(request, stores.settings.kb.max_upload_bytes)
        job = await anyio.to_thread.run_sync(
            lambda: new_file_job(stores, stores.jobs, data, filename, tags, source_path=source_path)
        )
    elif content_type.startswith("application/json"):
        try:
            note = NoteJobRequest.model_validate_json(await request.body())
        except ValidationError as exc:
            errors = validation_details(exc.errors())
            raise ApiError(422, "validation_error", "The request does not match the schema", errors=errors) from exc
        job = await anyio.to_thread.run_sync(
            lambda: new_note_job(stores.jobs, note.text, note.tags, title=note.title, source_path=note.source_path)
        )
    else:
        raise ApiError(415, "unsupported_media_type", "Send a JSON note or a multipart/form-data file")
    status = await anyio.to_thread.run_sync(_submit, request.app.state.stores, job)
    return JSONResponse(JobAccepted(job_id=job.job_id, status=status).model_dump(mode="json"), status_code=202)


def _submit(stores: Stores, job: JobRecord) -> JobStatus:
    from flows.kb_documents import submit_queued_job  # Prefect is a heavy import only jobs need

    return submit_queued_job(stores, job.job_id)


async def _read_file_form(request: Request, limit: int) -> tuple[bytes, str, list[str], str | None]:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit + FORM_OVERHEAD:
        raise FileTooLargeError(f"The upload is larger than the {limit} byte limit")
    async with request.form(max_files=1, max_fields=256, max_part_size=FORM_OVERHEAD) as form:
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise ApiError(422, "validation_error", "Send the file as the multipart field 'file'")
        if upload.size is not None and upload.size > limit:
            raise FileTooLargeError(f"The upload is larger than the {limit} byte limit")
        data = await upload.read()
        upload_bytes.labels("kb_file").inc(len(data))
        filename = upload.filename or "upload"
        tags = [t.strip() for value in form.getlist("tags") if isinstance(value, str) for t in value.split(",")]
        source_path = form.get("source_path")
    return data, filename, [t for t in tags if t], source_path if isinstance(source_path, str) else None


@router.get("/jobs", response_model=JobList)
def list_jobs(
    stores: Notes,
    status: Annotated[JobStatus | None, Query(description="Only jobs in this state")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIST)] = DEFAULT_LIST,
) -> JobList:
    """Recent jobs, newest first."""
    return JobList(jobs=engine.jobs(stores, status, limit))


@router.get("/jobs/{job_id}", response_model=JobOut, responses=error_responses(404))
def get_job(job_id: str, stores: Notes) -> JobOut:
    return engine.job(stores, job_id)


@router.get("/documents", response_model=DocumentList, responses=error_responses(422))
def list_documents(stores: Notes, source_path: Annotated[str, Query(min_length=1)]) -> DocumentList:
    """The documents ingested with this ``source_path``."""
    return DocumentList(documents=engine.documents_with_source_path(stores, source_path))


@router.get("/documents/{document_id}", response_model=DocumentDetail, responses=error_responses(404))
def get_document(document_id: DocumentId, stores: Notes) -> DocumentDetail:
    """A document with its live chunks in order."""
    return engine.document_detail(stores, document_id)


@router.post("/documents/{document_id}/tags", response_model=DocumentOut, responses=error_responses(400, 404))
def add_tags(document_id: DocumentId, body: TagsRequest, stores: Notes) -> DocumentOut:
    """Add tags; searches filter by them from the next query on."""
    return engine.change_tags(stores, document_id, body.tags, add=True)


@router.delete("/documents/{document_id}/tags/{tag:path}", response_model=DocumentOut, responses=error_responses(404))
def remove_tag(document_id: DocumentId, tag: str, stores: Notes) -> DocumentOut:
    """Remove one tag (URL-encoded: ``collection%3Amemory``); removing an absent tag changes nothing."""
    return engine.change_tags(stores, document_id, [tag], add=False)


@router.patch("/notes/{document_id}", response_model=DocumentOut, responses=error_responses(400, 404, 409))
def patch_note(document_id: DocumentId, body: NoteUpdate, stores: Notes) -> DocumentOut:
    """Replace a note's text in place; searches see the old text until the new one is stored, then only the new."""
    return DocumentOut.of(update_note(stores, document_id, body.text))


@router.get("/status", response_model=EngineStatus)
def status(stores: Notes) -> EngineStatus:
    """Version, model, device, document and chunk counts, and the job queue."""
    return engine_status(stores)
