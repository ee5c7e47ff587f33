"""Adding a plan from the page (``/plans/new``, issue 44): a council's PDF with its name, title, version label
and dates, taken through the flow the REST upload takes (``register_revision``, then ``start_ingestion``: a
Prefect deployment where one is configured, else a background run of the same flow), then its progress,
polled by htmx from ``/plans/{source}/{revision_id}/status`` until the plan is searchable or failed.

Adding is a write: only the full key or an issuer sign-in with the write scope may (``signin.Keys.may_write``);
the read-only key sees why not. The session cookie is ``SameSite=Strict``, so another site cannot post here
on someone's behalf. Each mistake is answered beside the form, its values kept (the file must be chosen
again: a browser never refills a file input)."""

from __future__ import annotations

import logging
from datetime import date
from typing import Any

from pydantic import ValidationError
from starlette.datastructures import FormData, UploadFile
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from lib.errors import FileTooLargeError, KBError
from lib.policies.lifecycle import register_revision
from lib.policies.models import PolicyCategory, PolicyCreate, RevisionCreate
from lib.policies.registry import check_revision_id, check_source
from lib.policies.stores import PolicyStores
from lib.text.filetypes import FileKind, detect_file_type
from mcp_service.rest.jobs import start_ingestion
from mcp_service.ui.forms import Problems, read_day, read_model_errors
from mcp_service.ui.rendering import may_write, policy_stores, render, threaded
from mcp_service.views import revision_status

logger = logging.getLogger(__name__)

FORM_OVERHEAD = 64 * 1024
"""Bytes of multipart framing and text fields allowed on top of the upload limit."""
FIELDS = ("source", "title", "category", "version_label", "effective_from", "effective_to")
PHASES = {
    "": "waiting to start",
    "fetch": "fetching the file",
    "extract": "reading the pages",
    "chunk": "finding its sections",
    "embed": "indexing what each passage says",
    "store": "storing",
    "done": "done",
}
"""Each ingestion phase (``views.ProgressInfo.phase``) as the progress line says it."""


def _form(request: Request, status_code: int = 200, **context: Any) -> Response:
    values = {name: "" for name in FIELDS} | {"category": PolicyCategory.LOCAL_PLAN.value}
    values |= context.pop("values", {})
    return render(
        request,
        "plan_new.html",
        status_code=status_code,
        values=values,
        categories=[c.value for c in PolicyCategory],
        problems=context.pop("problems", Problems()),
        **context,
    )


async def plan_form(request: Request) -> Response:
    return _form(request)


def _refused(request: Request) -> Response:
    logger.warning("ui.plan_refused reason=read_only who=%s", request.session.get("sub") or "key")
    problems = Problems(
        {
            "form": "Adding a plan changes the store: sign in with the full key (or an account "
            "that may write). The read-only key can search and check quotes only."
        }
    )
    return _form(request, 403, problems=problems)


async def _read(request: Request, limit: int) -> tuple[FormData | None, str]:
    """The posted form, or ``None`` and why (too large, or of no declared length)."""
    declared = request.headers.get("content-length", "")
    if not declared.isdigit():
        return None, "The browser sent the form without its length: send it again."
    if int(declared) > limit + FORM_OVERHEAD:
        return None, f"The PDF is larger than the {limit // (1024 * 1024)} MB this server accepts."
    return await request.form(max_files=1, max_fields=16, max_part_size=FORM_OVERHEAD), ""


def _validate(form: FormData, problems: Problems) -> tuple[dict[str, str], RevisionCreate | None]:
    values = {name: str(form.get(name) or "").strip() for name in FIELDS}
    start = read_day(values["effective_from"], "effective_from", "In force from", problems, default=None)
    end = read_day(values["effective_to"], "effective_to", "In force until", problems, default=date.max)
    end = None if end == date.max else end
    if start and end and end < start:
        problems.add("effective_to", "In force until: the last day in force is on or after the first.")
    if problems:
        return values, None
    try:
        data = RevisionCreate(version_label=values["version_label"], effective_from=start, effective_to=end)
    except ValidationError as exc:
        read_model_errors(exc, problems, FIELDS)
        return values, None
    return values, data


def _register(stores: PolicyStores, values: dict[str, str], data: RevisionCreate, pdf: bytes, name: str) -> str:
    """Register the policy (when new) and the revision, as the REST API's two calls would; the revision id.
    The file is checked first, so a refused one leaves no empty plan registered."""
    detect_file_type(pdf, {FileKind.PDF}, file_name=name)
    limit = stores.settings.files.max_upload_bytes
    if len(pdf) > limit:  # before the policy is registered: a refused file leaves no empty plan behind
        raise FileTooLargeError(f"The PDF is larger than the {limit} byte limit")
    source = values["source"]
    if not stores.registry.policy_exists(source):
        stores.registry.create_policy(
            PolicyCreate(source=source, title=values["title"], category=PolicyCategory(values["category"]))
        )
    return register_revision(stores, source, data, pdf).revision.revision_id


async def add_plan(request: Request) -> Response:
    if not may_write(request):
        return _refused(request)
    stores = policy_stores(request)
    form, refused = await _read(request, stores.settings.files.max_upload_bytes)
    if form is None:
        return _form(request, 413, problems=Problems({"file": refused}))
    problems = Problems()
    values, data = _validate(form, problems)
    try:
        PolicyCreate(source=values["source"], title=values["title"] or "-", category=values["category"])
    except ValidationError as exc:
        read_model_errors(exc, problems, FIELDS)
    exists = not problems and await threaded(stores.registry.policy_exists, values["source"])
    if not exists and not values["title"]:
        problems.add("title", "Title: a new plan needs its title, for example Fenland Local Plan.")
    upload = form.get("file")
    if not isinstance(upload, UploadFile) or not upload.filename:
        problems.add("file", "PDF: choose the plan's PDF file.")
    if problems or data is None or not isinstance(upload, UploadFile):
        return _form(request, 400, values=values, problems=problems)
    pdf = await upload.read()
    try:
        revision_id = await threaded(_register, stores, values, data, pdf, upload.filename or "")
    except KBError as failed:
        if failed.error_type in ("unsupported_file_type", "file_too_large"):
            problems.add("file", f"The plan (PDF): {failed.message.rstrip('.')}. Choose the PDF file again.")
        else:
            problems.add("form", failed.message)
        return _form(request, failed.http_status, values=values, problems=problems)
    job = await threaded(start_ingestion, stores.settings, values["source"], revision_id)
    logger.info("ui.plan_added source=%s revision_id=%s job_id=%s", values["source"], revision_id, job)
    root = request.scope.get("root_path", "")
    return RedirectResponse(f"{root}/plans/{values['source']}/{revision_id}", status_code=303)


async def _status_context(request: Request) -> dict[str, Any]:
    stores = policy_stores(request)
    source = check_source(request.path_params["source"])
    revision_id = check_revision_id(request.path_params["revision_id"])
    revision = await threaded(stores.registry.get_revision, source, revision_id)
    policy = await threaded(stores.registry.get_policy, source)
    info = revision_status(revision)
    return {"revision": revision, "policy": policy, "info": info, "phase": PHASES.get(info.progress.phase, "")}


async def plan_progress(request: Request) -> Response:
    return render(request, "plan_progress.html", **await _status_context(request))


async def plan_status(request: Request) -> Response:
    return render(request, "_plan_status.html", **await _status_context(request))


PLAN_ROUTES = [
    Route("/plans/new", plan_form, methods=["GET"]),
    Route("/plans/new", add_plan, methods=["POST"]),
    Route("/plans/{source}/{revision_id}", plan_progress),
    Route("/plans/{source}/{revision_id}/status", plan_status),
]
