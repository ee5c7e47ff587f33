"""The verify-a-quote box (``/verify``, issue 44): ``lib.policies.quotes.verify_quote``, the function the MCP
tool and REST call, against the revisions in force on the date asked; the page shows its classification in
plain words, the word-by-word difference and each change of meaning it names, and the citation to copy."""

from __future__ import annotations

from datetime import date

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from lib.errors import KBError
from lib.policies.quotes import verify_quote
from mcp_service.ui.forms import Problems, read_day
from mcp_service.ui.rendering import policy_stores, render, threaded
from mcp_service.ui.words import nothing_in_force, spoken

MAX_QUOTE_CHARS = 4000

MEANINGS = {
    "exact": "Exact: these words are in the revision in force, character for character.",
    "normalised": "The same words: they differ only in typography, spacing, line-end hyphens or an omission "
    "marked with an ellipsis.",
    "close": "Close: a slip that does not change the meaning. Cite the text as the document prints it.",
    "altered": "Altered: the quote changes the meaning of what the document says. Do not cite it as it stands.",
    "not_found": "Not found in the revision in force on that day.",
    "not_in_force": "Not in force on that day: these words are only in another revision, named below.",
}
"""What each classification means, as the box says it."""


async def verify(request: Request) -> Response:
    stores = policy_stores(request)
    params = request.query_params
    quote = (params.get("quote") or "").strip()
    problems = Problems()
    typed = params.get("date") or ""
    day = read_day(typed, "date", "In force on", problems, default=date.today()) or date.today()
    chosen = [s for s in params.getlist("source") if s]
    policies = await threaded(stores.registry.list_policies)
    titles = {p.source: p.title for p in policies}
    if len(quote) > MAX_QUOTE_CHARS:
        problems.add("quote", f"Quote: at most {MAX_QUOTE_CHARS:,} characters; this one has {len(quote):,}.")
    checked, empty = None, None
    if quote and not problems:
        try:
            checked = await threaded(verify_quote, stores, quote, sources=chosen or None, effective_date=day)
        except KBError as refused:
            problems.add("quote", refused.message)
        by_source = await threaded(stores.registry.revisions_by_source, chosen or list(titles))
        empty = nothing_in_force([r for revs in by_source.values() for r in revs], day)
    return render(
        request,
        "verify.html",
        status_code=400 if problems else 200,
        part="_verify.html",
        quote=quote,
        day=day.isoformat(),
        day_spoken=spoken(day),
        typed_day=typed or day.isoformat(),
        chosen=chosen,
        policies=policies,
        titles=titles,
        checked=checked,
        empty=empty,
        problems=problems,
        meanings=MEANINGS,
    )


QUOTE_ROUTES = [Route("/verify", verify)]
