"""The policy REST API (spec 001 "API Design", PolicyRouter TS-01..TS-16), mounted at ``/api/v1``.

FastAPI, because the OpenAPI document (``/api/v1/openapi.json``) is then generated from the very pydantic
models that validate requests (``lib.policies.models``) and shape responses, so it cannot drift from the code.
The one exception is the upload, parsed by hand so its size is checked while it streams in; its
multipart schema is declared explicitly. Handlers are thin: validate, call ``lib`` (on a worker
thread), shape the JSON. Every error has the body ``{"error": {"code", "message", "details"}}``,
mapped once in ``install_error_handlers``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import date
from typing import Annotated, Any, Literal

import anyio.to_thread
from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, ValidationError
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.types import Message, Receive

from lib.dates import iso, parse_date
from lib.errors import FileTooLargeError, InvalidDateError, KBError
from lib.kb import KnowledgeBase
from lib.policies.lifecycle import register_revision, remove_revision, sync_policy_chunks, update_revision
from lib.policies.models import (
    Policy,
    PolicyCategory,
    PolicyCreate,
    PolicyUpdate,
    Revision,
    RevisionCreate,
    RevisionUpdate,
)
from lib.policies.registry import check_revision_id, check_source
from mcp_service.health import DeepHealth, deep_health
from mcp_service.jobs import start_ingestion
from mcp_service.views import RevisionInfo, RevisionStatusInfo, Snapshot, revision_info, revision_status, snapshot

logger = logging.getLogger(__name__)

API_PREFIX = "/api/v1"
FORM_OVERHEAD = 64 * 1024
"""Bytes of multipart framing and text fields allowed on top of ``MAX_UPLOAD_BYTES``."""


# -- errors ---------------------------------------------------------------------------------------


class ErrorDetail(BaseModel):
    code: str = Field(description="Machine-readable, e.g. policy_not_found, revision_overlap")
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class ErrorResponse(BaseModel):
    error: ErrorDetail


class ApiError(Exception):
    """An HTTP-level refusal that has no ``lib`` error type (a malformed query, a missing form field)."""

    def __init__(self, status: int, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.details = status, code, message, details


def _error(status: int, code: str, message: str, details: dict[str, Any] | None = None) -> JSONResponse:
    body = {"error": {"code": code, "message": message, "details": jsonable_encoder(details or {})}}
    return JSONResponse(body, status_code=status)


def install_error_handlers(app: FastAPI) -> None:
    async def kb_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, KBError)
        return _error(exc.http_status, exc.error_type, exc.message, exc.details)

    async def api_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        return _error(exc.status, exc.code, exc.message, exc.details)

    async def invalid_request(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        errors = jsonable_encoder(exc.errors(), exclude={"input", "ctx", "url"})
        if any(err["loc"][-1] == "source" and err["loc"][0] == "body" for err in exc.errors()):
            return _error(400, "invalid_source", "source must be an UPPER_SNAKE_CASE slug such as NPPF or LTN_1_20")
        return _error(422, "validation_error", "The request does not match the schema", {"errors": errors})

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return _error(exc.status_code, code, str(exc.detail))

    async def crash(request: Request, exc: Exception) -> JSONResponse:
        logger.exception("rest.crashed method=%s path=%s", request.method, request.url.path)
        return _error(500, "internal", "The server failed unexpectedly; the error has been logged")

    app.add_exception_handler(KBError, kb_error)
    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, crash)


def _errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return {status: {"model": ErrorResponse} for status in statuses}


# -- response models ------------------------------------------------------------------------------


class PolicyOut(BaseModel):
    source: str
    title: str
    description: str
    category: PolicyCategory
    current_revision: RevisionInfo | None = Field(description="The revision in force today; null if none")
    revision_count: int
    created_at: str
    updated_at: str


class PolicyDetail(PolicyOut):
    revisions: list[Revision] = Field(description="Every revision, newest effective_from first")


class PolicyList(BaseModel):
    policies: list[PolicyOut]
    total: int


class Links(BaseModel):
    self: str
    status: str


class SideEffects(BaseModel):
    superseded: list[RevisionInfo] = Field(
        default_factory=list, description="Revisions this one closed (auto-supersession: effective_to set)"
    )


class RevisionAccepted(BaseModel):
    source: str
    revision_id: str
    version_label: str
    effective_from: str
    effective_to: str | None
    status: str
    ingestion_job_id: str
    links: Links
    side_effects: SideEffects


class RevisionDeleted(BaseModel):
    source: str
    revision_id: str
    status: Literal["deleted"] = "deleted"
    chunks_removed: int
    file_removed: bool


class ReindexAccepted(BaseModel):
    source: str
    revision_id: str
    status: Literal["reindexing"] = "reindexing"
    ingestion_job_id: str
    links: Links


# -- helpers --------------------------------------------------------------------------------------


def get_kb(request: Request) -> KnowledgeBase:
    return request.app.state.kb  # type: ignore[no-any-return]


KB = Annotated[KnowledgeBase, Depends(get_kb)]


def _links(source: str, revision_id: str) -> Links:
    base = f"{API_PREFIX}/policies/{source}/revisions/{revision_id}"
    return Links(self=base, status=f"{base}/status")


def _policy_out(kb: KnowledgeBase, policy: Policy, revisions: list[Revision]) -> PolicyOut:
    current = kb.resolver.resolve_for_policy(policy.source, date.today()).revision
    return PolicyOut(
        source=policy.source,
        title=policy.title,
        description=policy.description,
        category=policy.category,
        current_revision=revision_info(current) if current else None,
        revision_count=len(revisions),
        created_at=policy.created_at.isoformat(),
        updated_at=policy.updated_at.isoformat(),
    )


def _bounded(receive: Receive, limit: int) -> Callable[[], Awaitable[Message]]:
    """``receive`` that refuses a body longer than ``limit`` as it streams, never holding more."""
    seen = 0

    async def bounded() -> Message:
        nonlocal seen
        message = await receive()
        seen += len(message.get("body", b""))
        if seen > limit:
            raise FileTooLargeError(f"The upload is larger than the {limit - FORM_OVERHEAD} byte limit")
        return message

    return bounded


UPLOAD_SCHEMA: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file", "version_label", "effective_from"],
                    "properties": {
                        "file": {"type": "string", "format": "binary", "description": "The PDF (checked by content)"},
                        "version_label": {"type": "string", "example": "December 2024"},
                        "effective_from": {"type": "string", "format": "date"},
                        "effective_to": {"type": "string", "format": "date", "description": "Omit: in force"},
                        "notes": {"type": "string"},
                        "revision_id": {"type": "string", "description": "Default rev_{SOURCE}_{YYYY}_{MM}"},
                    },
                }
            }
        },
    }
}

# -- routes ---------------------------------------------------------------------------------------

router = APIRouter()


@router.get("/health", response_model=DeepHealth, tags=["health"], responses={503: {"model": DeepHealth}})
def health(kb: KB) -> JSONResponse:
    """Redis, Chroma and the object store each reached and counted; 503 when one is down."""
    report = deep_health(kb)
    return JSONResponse(report.model_dump(mode="json"), status_code=200 if report.status == "ok" else 503)


@router.post("/policies", status_code=201, response_model=PolicyOut, tags=["policies"], responses=_errors(400, 409))
def create_policy(body: PolicyCreate, kb: KB) -> PolicyOut:
    """Register a policy document, with no revisions yet (TS-01..TS-03)."""
    policy = kb.registry.create_policy(body)
    return _policy_out(kb, policy, [])


@router.get("/policies", response_model=PolicyList, tags=["policies"])
def list_policies(
    kb: KB,
    status: Annotated[Literal["active", "all"], Query(description="active: only policies in force today")] = "all",
    source: Annotated[str | None, Query(description="Only this slug")] = None,
    category: Annotated[PolicyCategory | None, Query()] = None,
) -> PolicyList:
    """Every policy with its revision in force today (TS-07)."""
    policies = [p for p in kb.registry.list_policies() if source in (None, p.source) and category in (None, p.category)]
    revisions = kb.registry.revisions_by_source([p.source for p in policies])
    out = [_policy_out(kb, p, revisions.get(p.source, [])) for p in policies]
    if status == "active":
        out = [p for p in out if p.current_revision is not None]
    return PolicyList(policies=out, total=len(out))


@router.get("/policies/effective", response_model=Snapshot, tags=["policies"], responses=_errors(400))
def effective_snapshot(
    kb: KB,
    on: Annotated[str | None, Query(alias="date", description="YYYY-MM-DD", examples=["2024-03-15"])] = None,
) -> Snapshot:
    """Which revision of every policy was in force on ``date`` (TS-10, TS-11)."""
    try:
        day = parse_date(on if on is not None else "", field="date")
    except InvalidDateError as exc:
        raise ApiError(400, "invalid_effective_date", exc.message, date=on) from exc
    titles = {p.source: p.title for p in kb.registry.list_policies()}
    return snapshot(day, kb.resolver.resolve_snapshot(day), titles)


@router.get("/policies/{source}", response_model=PolicyDetail, tags=["policies"], responses=_errors(400, 404))
def get_policy(source: str, kb: KB) -> PolicyDetail:
    """A policy with all its revisions, newest first (TS-08, TS-09)."""
    policy = kb.registry.get_policy(check_source(source))
    revisions = kb.registry.list_revisions(source)
    return PolicyDetail(**_policy_out(kb, policy, revisions).model_dump(), revisions=revisions)


@router.patch("/policies/{source}", response_model=PolicyOut, tags=["policies"], responses=_errors(400, 404))
def patch_policy(source: str, body: PolicyUpdate, kb: KB) -> PolicyOut:
    """Change title, description or category; the chunks' copy of the title follows."""
    policy = kb.registry.update_policy(check_source(source), body)
    if body.title is not None:
        sync_policy_chunks(kb, source)
    return _policy_out(kb, policy, kb.registry.list_revisions(source))


@router.post(
    "/policies/{source}/revisions",
    status_code=202,
    response_model=RevisionAccepted,
    tags=["revisions"],
    openapi_extra=UPLOAD_SCHEMA,
    responses=_errors(400, 404, 409, 413, 422),
)
async def upload_revision(source: str, request: Request) -> JSONResponse:
    """Upload a revision's PDF: stored, registered as ``processing``, ingestion started (TS-04..TS-06).

    Poll ``links.status`` for progress. A revision starting after the one in force closes it
    (``side_effects.superseded``); overlapping dates are refused (409)."""
    kb = get_kb(request)
    check_source(source)
    await anyio.to_thread.run_sync(kb.registry.get_policy, source)
    limit = kb.settings.max_upload_bytes
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit + FORM_OVERHEAD:
        raise FileTooLargeError(f"The upload is larger than the {limit} byte limit")
    bounded = Request(request.scope, _bounded(request.receive, limit + FORM_OVERHEAD))
    async with bounded.form(max_files=1, max_fields=16, max_part_size=FORM_OVERHEAD) as form:
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise ApiError(422, "validation_error", "Send the PDF as the multipart field 'file'")
        if upload.size is not None and upload.size > limit:
            raise FileTooLargeError(f"The upload is larger than the {limit} byte limit")
        content = await upload.read()
        fields = {k: v for k, v in form.items() if k != "file" and isinstance(v, str) and v.strip()}
    for name in ("effective_from", "effective_to"):
        if name in fields:
            parse_date(fields[name], field=name)
    try:
        data = RevisionCreate(**fields)
    except ValidationError as exc:
        errors = jsonable_encoder(exc.errors(), exclude={"input", "ctx", "url"})
        raise ApiError(422, "validation_error", "The revision fields are invalid", errors=errors) from exc
    created = await anyio.to_thread.run_sync(register_revision, kb, source, data, content)
    revision = created.revision
    job_id = await anyio.to_thread.run_sync(lambda: start_ingestion(kb.settings, source, revision.revision_id))
    body = RevisionAccepted(
        source=source,
        revision_id=revision.revision_id,
        version_label=revision.version_label,
        effective_from=revision.effective_from.isoformat(),
        effective_to=iso(revision.effective_to),
        status=revision.status.value,
        ingestion_job_id=job_id,
        links=_links(source, revision.revision_id),
        side_effects=SideEffects(superseded=[revision_info(r) for r in created.superseded]),
    )
    return JSONResponse(body.model_dump(mode="json"), status_code=202, headers={"Location": body.links.self})


@router.get(
    "/policies/{source}/revisions/{revision_id}",
    response_model=Revision,
    tags=["revisions"],
    responses=_errors(400, 404),
)
def get_revision(source: str, revision_id: str, kb: KB) -> Revision:
    """The full revision record, ingestion metadata included."""
    return kb.registry.get_revision(check_source(source), check_revision_id(revision_id))


@router.get(
    "/policies/{source}/revisions/{revision_id}/status",
    response_model=RevisionStatusInfo,
    tags=["revisions"],
    responses=_errors(400, 404),
)
def get_revision_status(source: str, revision_id: str, kb: KB) -> RevisionStatusInfo:
    """Ingestion phase and percent, as recorded in Redis by whichever worker runs it (TS-16)."""
    return revision_status(kb.registry.get_revision(check_source(source), check_revision_id(revision_id)))


@router.patch(
    "/policies/{source}/revisions/{revision_id}",
    response_model=Revision,
    tags=["revisions"],
    responses=_errors(400, 404, 409),
)
def patch_revision(source: str, revision_id: str, body: RevisionUpdate, kb: KB) -> Revision:
    """Change label, notes or dates (re-checked for overlap); searches follow at once (TS-12)."""
    return update_revision(kb, check_source(source), check_revision_id(revision_id), body)


@router.delete(
    "/policies/{source}/revisions/{revision_id}",
    response_model=RevisionDeleted,
    tags=["revisions"],
    responses=_errors(400, 404, 409),
)
def delete_revision(source: str, revision_id: str, kb: KB) -> RevisionDeleted:
    """Remove a revision, its chunks and its file; the sole active revision is refused (TS-13, TS-14)."""
    removed = remove_revision(kb, check_source(source), check_revision_id(revision_id))
    return RevisionDeleted(source=source, revision_id=revision_id, chunks_removed=removed.chunks_removed,
                           file_removed=removed.file_removed)  # fmt: skip


@router.post(
    "/policies/{source}/revisions/{revision_id}/reindex",
    status_code=202,
    response_model=ReindexAccepted,
    tags=["revisions"],
    responses=_errors(400, 404, 409),
)
def reindex(source: str, revision_id: str, kb: KB) -> ReindexAccepted:
    """Re-run ingestion from the stored file; 409 while the revision is processing (TS-15)."""
    job_id = start_ingestion(kb.settings, check_source(source), check_revision_id(revision_id), reindex=True)
    return ReindexAccepted(source=source, revision_id=revision_id, ingestion_job_id=job_id,
                           links=_links(source, revision_id))  # fmt: skip


def create_rest_app(kb: KnowledgeBase) -> FastAPI:
    """The ``/api/v1`` sub-application (mounted by ``app.py``), with its OpenAPI at ``/openapi.json``."""
    app = FastAPI(
        title="policy-kb REST API",
        version="1.0",
        description="Policies and their revisions in time (spec 001). Errors: {'error': {code, message, details}}.",
        openapi_url="/openapi.json",
        docs_url=None,
        redoc_url=None,
    )
    app.state.kb = kb
    install_error_handlers(app)
    app.include_router(router)
    return app
