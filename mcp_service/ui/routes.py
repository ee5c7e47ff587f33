"""The web page's views (issue 26), each one call into the ``lib`` functions the MCP tools and REST routes call:

    /search                 search_policy as of a date            -> citations linking their page
    /page/{s}/{rev}/{n}     get_policy_section beside the page     (image: /image/{s}/{rev}/{n}.png, page_image)
    /original/{s}/{rev}     the stored original, to download
    /policies               list_policies, each with its timeline and contents
    /policies/{s}/timeline  list_revisions as bars in time; /policies/{s}/compare: compare_section's diff
    /policies/{s}/contents  list_policy_sections, each opening its page
    /governance             the governance documents in force on a date with their chains; the policies too
    /ingestion              revisions processing (revision_status) and failed, the last audit (``last_audit``)

A handler reads its query, calls ``lib`` on a worker thread (searches on the search lane) and renders a
template; an htmx request (``HX-Request``) gets only the part it swaps in. ``lib``'s typed errors are shown
with their HTTP status (``app.kb_error``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from lib.dates import parse_date
from lib.governance.catalog import lifecycle
from lib.governance.in_force import in_force_ids, replacements
from lib.policies.audit_record import last_audit
from lib.policies.compare import compare_section
from lib.policies.models import RevisionStatus
from lib.policies.page_images import page_image
from lib.policies.registry import check_revision_id, check_source
from lib.policies.search import search_policy
from lib.policies.sections import get_policy_section, list_policy_sections
from lib.policies.stores import PolicyStores
from lib.retrieval.queries import MAX_QUERY_CHARS
from mcp_service.search_lane import run_search
from mcp_service.ui.shapes import chain, diff_runs, timeline
from mcp_service.views import revision_status, snapshot

T = TypeVar("T")
TEMPLATES = Jinja2Templates(directory=Path(__file__).parent / "templates")
MODES = ("hybrid", "dense", "lexical")
N_RESULTS = 10
MAX_MARKED_WORDS = 600
"""A section longer than this (a whole chapter) is shown on its page unmarked: it would mark the page entire."""


async def threaded(work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    return await anyio.to_thread.run_sync(partial(work, *args, **kwargs))


def _stores(request: Request) -> PolicyStores:
    stores: PolicyStores = request.app.state.stores.policies
    return stores


def render(request: Request, name: str, status_code: int = 200, **context: Any) -> Response:
    """``name`` with the page's common context; the ``part`` template alone for an htmx request when given."""
    part = context.pop("part", None)
    swapped = request.headers.get("HX-Request") and not request.headers.get("HX-History-Restore-Request")
    chosen = part if part is not None and swapped else name
    root = request.scope.get("root_path", "")
    session = request.session if "session" in request.scope else {}
    context = {"root": root, "signed_in": request.app.state.keys.open is False, "who": session.get("sub"), **context}
    return TEMPLATES.TemplateResponse(request, chosen, context, status_code=status_code)


def _day(value: str | None) -> str:
    return value.strip() if value and value.strip() else date.today().isoformat()


async def home(request: Request) -> Response:
    return RedirectResponse(f"{request.scope.get('root_path', '')}/search", status_code=303)


async def search(request: Request) -> Response:
    stores = _stores(request)
    params = request.query_params
    question = (params.get("q") or "").strip()[:MAX_QUERY_CHARS]
    day = _day(params.get("date"))
    chosen = [s for s in params.getlist("source") if s]
    mode = params.get("mode") or "hybrid"
    mode = mode if mode in MODES else "hybrid"
    policies = await threaded(stores.registry.list_policies)
    result = None
    if question:
        work = partial(search_policy, stores, question, sources=chosen or None, effective_date=day,
                       n_results=N_RESULTS, mode=mode)  # fmt: skip
        result = await run_search(work, stores.settings.search)
    return render(request, "search.html", part="_results.html", question=question, day=day, chosen=chosen,
                  mode=mode, modes=MODES, policies=policies, result=result)  # fmt: skip


async def cited_page(request: Request) -> Response:
    stores = _stores(request)
    source, revision_id = _ids(request)
    number = int(request.path_params["page"])
    revision = await threaded(stores.registry.get_revision, source, revision_id)
    chunk, ref = request.query_params.get("chunk") or "", request.query_params.get("section") or ""
    section = None
    if ref:
        section = await threaded(get_policy_section, stores, source, ref, revision_id=revision_id)
    return render(request, "page.html", revision=revision, source=source, number=number, chunk=chunk, ref=ref,
                  section=section, page_count=revision.page_count)  # fmt: skip


async def page_png(request: Request) -> Response:
    stores = _stores(request)
    source, revision_id = _ids(request)
    number = int(request.path_params["page"])
    chunk, ref = request.query_params.get("chunk") or None, request.query_params.get("section") or None
    highlight = None
    if chunk is None and ref is not None:
        section = await threaded(get_policy_section, stores, source, ref, revision_id=revision_id)
        highlight = section.text if len(section.text.split()) <= MAX_MARKED_WORDS else None
    image = await threaded(page_image, stores, source, number, revision_id=revision_id, chunk_id=chunk,
                           highlight=highlight)  # fmt: skip
    headers = {"Cache-Control": "private, max-age=3600", "X-Highlighted": str(image.render.highlighted)}
    return Response(image.render.png, media_type="image/png", headers=headers)


async def original(request: Request) -> Response:
    stores = _stores(request)
    source, revision_id = _ids(request)
    revision = await threaded(stores.registry.get_revision, source, revision_id)
    pdf = await threaded(stores.objects.get_bytes, revision.file_path)
    disposition = f'attachment; filename="{source}-{revision_id}.pdf"'
    return Response(pdf, media_type="application/pdf", headers={"Content-Disposition": disposition})


async def policies(request: Request) -> Response:
    stores = _stores(request)
    listed = await threaded(stores.registry.list_policies)
    revisions = await threaded(stores.registry.revisions_by_source, [p.source for p in listed])
    return render(request, "policies.html", policies=listed, revisions=revisions)


async def policy_timeline(request: Request) -> Response:
    stores = _stores(request)
    source = check_source(request.path_params["source"])
    policy = await threaded(stores.registry.get_policy, source)
    revisions = await threaded(stores.registry.list_revisions, source)
    today = date.today()
    return render(request, "timeline.html", policy=policy, revisions=revisions, figure=timeline(revisions, today),
                  today=today.isoformat())  # fmt: skip


async def policy_compare(request: Request) -> Response:
    stores = _stores(request)
    source = check_source(request.path_params["source"])
    params = request.query_params
    ref = (params.get("section_ref") or "").strip()
    old, new = params.get("from") or None, params.get("to") or None
    comparison = await threaded(compare_section, stores, source, ref, from_revision_id=old, to_revision_id=new)
    runs = diff_runs(comparison.diff.rendered) if comparison.diff is not None else []
    return render(request, "compare.html", part="_compare.html", source=source, comparison=comparison, runs=runs)


async def policy_contents(request: Request) -> Response:
    stores = _stores(request)
    source = check_source(request.path_params["source"])
    chosen = request.query_params.get("revision") or None
    policy = await threaded(stores.registry.get_policy, source)
    revisions = await threaded(stores.registry.list_revisions, source)
    listed = await threaded(list_policy_sections, stores, source, revision_id=chosen)
    chapters: list[tuple[str, list[Any]]] = []
    for entry in listed.sections:
        if not chapters or chapters[-1][0] != entry.chapter:
            chapters.append((entry.chapter, []))
        chapters[-1][1].append(entry)
    return render(request, "contents.html", policy=policy, revisions=revisions, listed=listed, chapters=chapters)


async def governance(request: Request) -> Response:
    day = parse_date(_day(request.query_params.get("date")), field="date")
    stores = request.app.state.stores
    records = await threaded(stores.governance.registry.records)
    lifecycles = {doc_id: lifecycle(record) for doc_id, record in records.items()}
    live, replaced_by = in_force_ids(lifecycles, day), replacements(lifecycles)
    documents = [(records[i], chain(i, replaced_by)) for i in sorted(live)]
    policy_stores = _stores(request)
    titles = {p.source: p.title for p in await threaded(policy_stores.registry.list_policies)}
    in_force = snapshot(day, await threaded(policy_stores.resolver.resolve_snapshot, day), titles)
    return render(request, "governance.html", day=day.isoformat(), documents=documents, indexed=len(records),
                  in_force=in_force)  # fmt: skip


async def ingestion(request: Request) -> Response:
    stores = _stores(request)
    listed = await threaded(stores.registry.list_policies)
    by_source = await threaded(stores.registry.revisions_by_source, [p.source for p in listed])
    revisions = [r for revs in by_source.values() for r in revs]
    running = [revision_status(r) for r in revisions if r.status == RevisionStatus.PROCESSING]
    failed = [r for r in revisions if r.status == RevisionStatus.FAILED]
    counts = {status.value: sum(r.status == status for r in revisions) for status in RevisionStatus}
    audit = await threaded(last_audit, stores.registry)
    return render(request, "ingestion.html", part="_progress.html", running=running, failed=failed, counts=counts,
                  audit=audit)  # fmt: skip


def _ids(request: Request) -> tuple[str, str]:
    return check_source(request.path_params["source"]), check_revision_id(request.path_params["revision_id"])


ROUTES = [
    Route("/", home),
    Route("/search", search),
    Route("/page/{source}/{revision_id}/{page:int}", cited_page),
    Route("/image/{source}/{revision_id}/{page:int}.png", page_png),
    Route("/original/{source}/{revision_id}", original),
    Route("/policies", policies),
    Route("/policies/{source}/timeline", policy_timeline),
    Route("/policies/{source}/compare", policy_compare),
    Route("/policies/{source}/contents", policy_contents),
    Route("/governance", governance),
    Route("/ingestion", ingestion),
]
