"""The web page's views (issues 26 and 44), each one call into the ``lib`` functions the MCP tools and REST routes call:

    /search                 search_policy as of a date            -> citations linking their page
    /page/{s}/{rev}/{n}     get_policy_section beside the page     (image: /image/{s}/{rev}/{n}.png, page_image)
    /original/{s}/{rev}     the stored original, to download
    /policies               list_policies, each with its timeline and contents
    /policies/{s}/timeline  list_revisions as bars in time; /policies/{s}/compare: compare_section's diff
    /policies/{s}/contents  list_policy_sections, each opening its page
    /governance             the governance documents in force on a date with their chains; the policies too
    /ingestion              revisions processing (revision_status) and failed, the last audit (``last_audit``)
    /verify                 verify_quote as of a date (``quotes``); /plans/new: add a plan (``plans``)

Each revision is described by its standing on the date asked, in words (``words``); a form's mistakes are
answered beside the form, its values kept (``forms``).

A handler reads its query, calls ``lib`` on a worker thread (searches on the search lane) and renders a
template; an htmx request (``HX-Request``) gets only the part it swaps in. ``lib``'s typed errors are shown
with their HTTP status (``app.kb_error``).
"""

from __future__ import annotations

from datetime import date
from functools import partial
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from lib.errors import KBError
from lib.governance.catalog import lifecycle
from lib.governance.in_force import in_force_ids, replacements
from lib.policies.audit_record import last_audit
from lib.policies.compare import compare_section
from lib.policies.models import Revision, RevisionStatus
from lib.policies.page_images import page_image
from lib.policies.registry import check_revision_id, check_source
from lib.policies.search import search_policy
from lib.policies.sections import get_policy_section, list_policy_sections
from lib.retrieval import MAX_QUERY_CHARS
from mcp_service.search_lane import run_search
from mcp_service.ui.forms import Problems, read_day
from mcp_service.ui.moves import changes_within, where_it_went
from mcp_service.ui.plans import PLAN_ROUTES
from mcp_service.ui.quotes import QUOTE_ROUTES
from mcp_service.ui.rendering import policy_stores, render, threaded
from mcp_service.ui.shapes import chain, diff_runs, timeline
from mcp_service.ui.words import nothing_in_force, spoken, standing
from mcp_service.views import revision_status, snapshot

MODES = ("hybrid", "dense", "lexical")
N_RESULTS = 10
MAX_MARKED_WORDS = 600
"""A section longer than this (a whole chapter) is shown on its page unmarked: it would mark the page entire."""


async def home(request: Request) -> Response:
    return RedirectResponse(f"{request.scope.get('root_path', '')}/search", status_code=303)


def _standings(revisions: list[Revision], day: date) -> dict[str, str]:
    """Each revision's standing on ``day`` in words, by revision id (``words.standing``)."""
    today, by_source = date.today(), {r.source for r in revisions}
    peers = {source: [r for r in revisions if r.source == source] for source in by_source}
    return {r.revision_id: standing(r, day, peers[r.source], today) for r in revisions}


async def search(request: Request) -> Response:
    stores = policy_stores(request)
    params = request.query_params
    question = (params.get("q") or "").strip()[:MAX_QUERY_CHARS]
    problems = Problems()
    day = read_day(params.get("date"), "date", "In force on", problems, default=date.today()) or date.today()
    chosen = [s for s in params.getlist("source") if s]
    mode = params.get("mode") or "hybrid"
    mode = mode if mode in MODES else "hybrid"
    policies = await threaded(stores.registry.list_policies)
    titles = {p.source: p.title for p in policies}
    result, standings, empty = None, {}, None
    if question and not problems:
        work = partial(
            search_policy, stores, question, sources=chosen or None, effective_date=day, n_results=N_RESULTS, mode=mode
        )
        try:
            result = await run_search(work, stores.settings.search)
        except KBError as refused:
            problems.add("form", refused.message)
        by_source = await threaded(stores.registry.revisions_by_source, chosen or list(titles))
        revisions = [r for revs in by_source.values() for r in revs]
        standings = _standings(revisions, day)
        empty = nothing_in_force(revisions, day)
    return render(
        request,
        "search.html",
        status_code=400 if problems else 200,
        part="_results.html",
        question=question,
        day=day.isoformat(),
        day_spoken=spoken(day),
        typed_day=params.get("date") or day.isoformat(),
        chosen=chosen,
        mode=mode,
        modes=MODES,
        policies=policies,
        result=result,
        titles=titles,
        standings=standings,
        empty=empty,
        problems=problems,
    )


async def cited_page(request: Request) -> Response:
    stores = policy_stores(request)
    source, revision_id = _ids(request)
    number = int(request.path_params["page"])
    revision = await threaded(stores.registry.get_revision, source, revision_id)
    policy = await threaded(stores.registry.get_policy, source)
    peers = await threaded(stores.registry.list_revisions, source)
    chunk, ref = request.query_params.get("chunk") or "", request.query_params.get("section") or ""
    section = None
    if ref:
        section = await threaded(get_policy_section, stores, source, ref, revision_id=revision_id)
    today = date.today()
    day = read_day(request.query_params.get("date"), "date", "As of", Problems(), default=today) or today
    return render(
        request,
        "page.html",
        revision=revision,
        source=source,
        number=number,
        chunk=chunk,
        ref=ref,
        section=section,
        page_count=revision.page_count,
        title=policy.title,
        standing=standing(revision, day, peers, today),
    )


async def page_png(request: Request) -> Response:
    stores = policy_stores(request)
    source, revision_id = _ids(request)
    number = int(request.path_params["page"])
    chunk, ref = request.query_params.get("chunk") or None, request.query_params.get("section") or None
    highlight = None
    if chunk is None and ref is not None:
        section = await threaded(get_policy_section, stores, source, ref, revision_id=revision_id)
        highlight = section.text if len(section.text.split()) <= MAX_MARKED_WORDS else None
    image = await threaded(
        page_image, stores, source, number, revision_id=revision_id, chunk_id=chunk, highlight=highlight
    )
    headers = {"Cache-Control": "private, max-age=3600", "X-Highlighted": str(image.render.highlighted)}
    return Response(image.render.png, media_type="image/png", headers=headers)


async def original(request: Request) -> Response:
    stores = policy_stores(request)
    source, revision_id = _ids(request)
    revision = await threaded(stores.registry.get_revision, source, revision_id)
    pdf = await threaded(stores.objects.get_bytes, revision.file_path)
    disposition = f'attachment; filename="{source}-{revision_id}.pdf"'
    return Response(pdf, media_type="application/pdf", headers={"Content-Disposition": disposition})


async def policies(request: Request) -> Response:
    stores = policy_stores(request)
    listed = await threaded(stores.registry.list_policies)
    revisions = await threaded(stores.registry.revisions_by_source, [p.source for p in listed])
    return render(request, "policies.html", policies=listed, revisions=revisions)


async def policy_timeline(request: Request) -> Response:
    stores = policy_stores(request)
    source = check_source(request.path_params["source"])
    problems = Problems()
    today = date.today()
    typed = request.query_params.get("date") or ""
    day = read_day(typed, "date", "As of", problems, default=today) or today
    policy = await threaded(stores.registry.get_policy, source)
    revisions = await threaded(stores.registry.list_revisions, source)
    return render(
        request,
        "timeline.html",
        status_code=400 if problems else 200,
        policy=policy,
        revisions=revisions,
        figure=timeline(revisions, today, day),
        day=day,
        typed_day=typed or day.isoformat(),
        problems=problems,
        empty=nothing_in_force(revisions, day),
    )


async def policy_compare(request: Request) -> Response:
    stores = policy_stores(request)
    source = check_source(request.path_params["source"])
    params = request.query_params
    ref = (params.get("section_ref") or "").strip()
    old, new = params.get("from") or None, params.get("to") or None
    if not ref:
        problems = Problems({"section_ref": "Section: give the reference to compare, for example Para 11."})
        return render(
            request,
            "compare.html",
            status_code=400,
            part="_compare.html",
            source=source,
            comparison=None,
            problems=problems,
        )
    comparison = await threaded(compare_section, stores, source, ref, from_revision_id=old, to_revision_id=new)
    movement = where_it_went(comparison)
    within = changes_within(comparison, movement)
    runs = diff_runs(within.rendered) if within is not None else []
    policy = await threaded(stores.registry.get_policy, source)
    return render(
        request,
        "compare.html",
        part="_compare.html",
        source=source,
        comparison=comparison,
        runs=runs,
        movement=movement,
        within=within,
        title=policy.title,
        problems=Problems(),
    )


async def policy_contents(request: Request) -> Response:
    stores = policy_stores(request)
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
    problems, typed = Problems(), request.query_params.get("date") or ""
    day = read_day(typed, "date", "In force on", problems, default=date.today()) or date.today()
    stores = request.app.state.stores
    records = await threaded(stores.governance.registry.records)
    lifecycles = {doc_id: lifecycle(record) for doc_id, record in records.items()}
    live, replaced_by = in_force_ids(lifecycles, day), replacements(lifecycles)
    documents = [(records[i], chain(i, replaced_by)) for i in sorted(live)]
    policies = policy_stores(request)
    titles = {p.source: p.title for p in await threaded(policies.registry.list_policies)}
    in_force = snapshot(day, await threaded(policies.resolver.resolve_snapshot, day), titles)
    return render(
        request,
        "governance.html",
        status_code=400 if problems else 200,
        day=day.isoformat(),
        typed_day=typed or day.isoformat(),
        documents=documents,
        indexed=len(records),
        in_force=in_force,
        problems=problems,
    )


async def ingestion(request: Request) -> Response:
    stores = policy_stores(request)
    listed = await threaded(stores.registry.list_policies)
    by_source = await threaded(stores.registry.revisions_by_source, [p.source for p in listed])
    revisions = [r for revs in by_source.values() for r in revs]
    running = [revision_status(r) for r in revisions if r.status == RevisionStatus.PROCESSING]
    failed = [r for r in revisions if r.status == RevisionStatus.FAILED]
    counts = {status.value: sum(r.status == status for r in revisions) for status in RevisionStatus}
    audit = await threaded(last_audit, stores.registry)
    return render(
        request, "ingestion.html", part="_progress.html", running=running, failed=failed, counts=counts, audit=audit
    )


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
    *QUOTE_ROUTES,
    *PLAN_ROUTES,
]
