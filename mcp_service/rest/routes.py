"""The policy REST API's endpoints (spec 001 "API Design", PolicyRouter TS-01..TS-16), mounted at ``/api/v1``.

Handlers are thin: validate (FastAPI, from ``lib.policies.models`` and ``schemas``), call ``lib`` (sync
handlers run on FastAPI's worker threads), shape the JSON. Errors are raised, never answered here:
``errors.install_error_handlers`` maps them once.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Literal

import anyio.to_thread
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse

from lib.dates import iso, parse_date
from lib.errors import InvalidDateError
from lib.policies.compare import Comparison, compare_section
from lib.policies.lifecycle import register_revision, remove_revision, sync_policy_chunks, update_revision
from lib.policies.models import Policy, PolicyCategory, PolicyCreate, PolicyUpdate, Revision, RevisionUpdate
from lib.policies.registry import check_revision_id, check_source
from lib.policies.stores import PolicyStores
from mcp_service.health import DeepHealth, deep_health
from mcp_service.rest.errors import ApiError, error_responses
from mcp_service.rest.jobs import start_ingestion
from mcp_service.rest.schemas import (
    Links,
    PolicyDetail,
    PolicyList,
    PolicyOut,
    ReindexAccepted,
    RevisionAccepted,
    RevisionDeleted,
    SideEffects,
)
from mcp_service.rest.upload import UPLOAD_SCHEMA, read_upload
from mcp_service.views import RevisionStatusInfo, Snapshot, revision_info, revision_status, snapshot

API_PREFIX = "/api/v1"


def policy_stores(request: Request) -> PolicyStores:
    """The policy stores of the app's ``Stores`` (``rest.app``), opened on the first request that needs them."""
    stores: PolicyStores = request.app.state.stores.policies
    return stores


Policies = Annotated[PolicyStores, Depends(policy_stores)]


def _links(source: str, revision_id: str) -> Links:
    base = f"{API_PREFIX}/policies/{source}/revisions/{revision_id}"
    return Links(self=base, status=f"{base}/status")


def _policy_out(stores: PolicyStores, policy: Policy, revisions: list[Revision]) -> PolicyOut:
    current = stores.resolver.resolve_for_policy(policy.source, date.today()).revision
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


router = APIRouter()


@router.get("/health", response_model=DeepHealth, tags=["health"], responses={503: {"model": DeepHealth}})
def health(stores: Policies) -> JSONResponse:
    """Redis, Chroma and the object store each reached and counted; 503 when one is down."""
    report = deep_health(stores)
    return JSONResponse(report.model_dump(mode="json"), status_code=200 if report.status == "ok" else 503)


@router.post(
    "/policies", status_code=201, response_model=PolicyOut, tags=["policies"], responses=error_responses(400, 409)
)
def create_policy(body: PolicyCreate, stores: Policies) -> PolicyOut:
    """Register a policy document, with no revisions yet (TS-01..TS-03)."""
    policy = stores.registry.create_policy(body)
    return _policy_out(stores, policy, [])


@router.get("/policies", response_model=PolicyList, tags=["policies"])
def list_policies(
    stores: Policies,
    status: Annotated[Literal["active", "all"], Query(description="active: only policies in force today")] = "all",
    source: Annotated[str | None, Query(description="Only this slug")] = None,
    category: Annotated[PolicyCategory | None, Query()] = None,
) -> PolicyList:
    """Every policy with its revision in force today (TS-07)."""
    policies = [
        p for p in stores.registry.list_policies() if source in (None, p.source) and category in (None, p.category)
    ]
    revisions = stores.registry.revisions_by_source([p.source for p in policies])
    out = [_policy_out(stores, p, revisions.get(p.source, [])) for p in policies]
    if status == "active":
        out = [p for p in out if p.current_revision is not None]
    return PolicyList(policies=out, total=len(out))


@router.get("/policies/effective", response_model=Snapshot, tags=["policies"], responses=error_responses(400))
def effective_snapshot(
    stores: Policies,
    on: Annotated[str | None, Query(alias="date", description="YYYY-MM-DD", examples=["2024-03-15"])] = None,
) -> Snapshot:
    """Which revision of every policy was in force on ``date`` (TS-10, TS-11)."""
    try:
        day = parse_date(on if on is not None else "", field="date")
    except InvalidDateError as exc:
        raise ApiError(400, "invalid_effective_date", exc.message, date=on) from exc
    titles = {p.source: p.title for p in stores.registry.list_policies()}
    return snapshot(day, stores.resolver.resolve_snapshot(day), titles)


@router.get("/policies/{source}", response_model=PolicyDetail, tags=["policies"], responses=error_responses(400, 404))
def get_policy(source: str, stores: Policies) -> PolicyDetail:
    """A policy with all its revisions, newest first (TS-08, TS-09)."""
    policy = stores.registry.get_policy(check_source(source))
    revisions = stores.registry.list_revisions(source)
    return PolicyDetail(**_policy_out(stores, policy, revisions).model_dump(), revisions=revisions)


@router.patch("/policies/{source}", response_model=PolicyOut, tags=["policies"], responses=error_responses(400, 404))
def patch_policy(source: str, body: PolicyUpdate, stores: Policies) -> PolicyOut:
    """Change title, description or category; the chunks' copy of the title follows."""
    policy = stores.registry.update_policy(check_source(source), body)
    if body.title is not None:
        sync_policy_chunks(stores.registry, stores.vectors, source)
    return _policy_out(stores, policy, stores.registry.list_revisions(source))


@router.post(
    "/policies/{source}/revisions",
    status_code=202,
    response_model=RevisionAccepted,
    tags=["revisions"],
    openapi_extra=UPLOAD_SCHEMA,
    responses=error_responses(400, 404, 409, 413, 422),
)
async def upload_revision(source: str, request: Request) -> JSONResponse:
    """Upload a revision's PDF: stored, registered as ``processing``, ingestion started (TS-04..TS-06).

    Poll ``links.status`` for progress. A revision starting after the one in force closes it
    (``side_effects.superseded``); overlapping dates are refused (409)."""
    stores = policy_stores(request)
    check_source(source)
    await anyio.to_thread.run_sync(stores.registry.get_policy, source)
    content, data = await read_upload(request, stores.settings.files.max_upload_bytes)
    created = await anyio.to_thread.run_sync(register_revision, stores, source, data, content)
    revision = created.revision
    job_id = await anyio.to_thread.run_sync(lambda: start_ingestion(stores.settings, source, revision.revision_id))
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
    responses=error_responses(400, 404),
)
def get_revision(source: str, revision_id: str, stores: Policies) -> Revision:
    """The full revision record, ingestion metadata included."""
    return stores.registry.get_revision(check_source(source), check_revision_id(revision_id))


@router.get(
    "/policies/{source}/revisions/{revision_id}/status",
    response_model=RevisionStatusInfo,
    tags=["revisions"],
    responses=error_responses(400, 404),
)
def get_revision_status(source: str, revision_id: str, stores: Policies) -> RevisionStatusInfo:
    """Ingestion phase and percent, as recorded in Redis by whichever worker runs it (TS-16)."""
    return revision_status(stores.registry.get_revision(check_source(source), check_revision_id(revision_id)))


@router.patch(
    "/policies/{source}/revisions/{revision_id}",
    response_model=Revision,
    tags=["revisions"],
    responses=error_responses(400, 404, 409),
)
def patch_revision(source: str, revision_id: str, body: RevisionUpdate, stores: Policies) -> Revision:
    """Change label, notes or dates (re-checked for overlap); searches follow at once (TS-12)."""
    return update_revision(stores.registry, stores.vectors, check_source(source), check_revision_id(revision_id), body)


@router.delete(
    "/policies/{source}/revisions/{revision_id}",
    response_model=RevisionDeleted,
    tags=["revisions"],
    responses=error_responses(400, 404, 409),
)
def delete_revision(source: str, revision_id: str, stores: Policies) -> RevisionDeleted:
    """Remove a revision, its chunks and its file; the sole active revision is refused (TS-13, TS-14)."""
    removed = remove_revision(stores, check_source(source), check_revision_id(revision_id))
    return RevisionDeleted(
        source=source, revision_id=revision_id, chunks_removed=removed.chunks_removed, file_removed=removed.file_removed
    )


@router.post(
    "/policies/{source}/revisions/{revision_id}/reindex",
    status_code=202,
    response_model=ReindexAccepted,
    tags=["revisions"],
    responses=error_responses(400, 404, 409),
)
def reindex(source: str, revision_id: str, stores: Policies) -> ReindexAccepted:
    """Re-run ingestion from the stored file; 409 while the revision is processing (TS-15)."""
    job_id = start_ingestion(stores.settings, check_source(source), check_revision_id(revision_id), reindex=True)
    return ReindexAccepted(
        source=source, revision_id=revision_id, ingestion_job_id=job_id, links=_links(source, revision_id)
    )


_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@router.get(
    "/policies/{source}/compare",
    response_model=Comparison,
    tags=["policies"],
    responses=error_responses(400, 404),
)
def compare(
    source: str,
    stores: Policies,
    section_ref: Annotated[str, Query(description="e.g. Para 116, Policy TR6, Chapter 9")],
    from_: Annotated[
        str | None, Query(alias="from", description="A revision id, or a YYYY-MM-DD date (the revision in force)")
    ] = None,
    to: Annotated[str | None, Query(description="A revision id, or a YYYY-MM-DD date (the revision in force)")] = None,
) -> Comparison:
    """One section in two revisions: both texts cited, a word diff, and where a renumbered section went
    (the MCP tool ``compare_policy_section``). Without ``from``/``to``: the newest revision and the one before."""

    def side(value: str | None) -> dict[str, str | None]:
        is_day = value is not None and _ISO_DAY.match(value) is not None
        return {"revision_id": None if is_day else value, "date": value if is_day else None}

    old, new = side(from_), side(to)
    return compare_section(
        stores,
        check_source(source),
        section_ref,
        from_revision_id=old["revision_id"],
        from_date=old["date"],
        to_revision_id=new["revision_id"],
        to_date=new["date"],
    )
