"""What every view of the page shares: the templates (with the citation formatter as a global), ``render`` (the
whole page, or the part an htmx request swaps in), ``lib`` calls on a worker thread, the policy stores, and
whether the person signed in may write."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from lib.citation import page_citation
from lib.policies.stores import PolicyStores
from mcp_service.ui.shapes import citation
from mcp_service.ui.words import spoken

T = TypeVar("T")
TEMPLATES = Jinja2Templates(directory=Path(__file__).parent / "templates")
TEMPLATES.env.globals["citation"] = citation
TEMPLATES.env.globals["page_citation"] = page_citation
TEMPLATES.env.filters["spoken"] = spoken


async def threaded(work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    return await anyio.to_thread.run_sync(partial(work, *args, **kwargs))


def policy_stores(request: Request) -> PolicyStores:
    stores: PolicyStores = request.app.state.stores.policies
    return stores


def may_write(request: Request) -> bool:
    """Whether this session may add a plan (``signin.Keys.may_write``)."""
    return bool(request.app.state.keys.may_write(request))


def render(request: Request, name: str, status_code: int = 200, **context: Any) -> Response:
    """``name`` with the page's common context; the ``part`` template alone for an htmx request when given."""
    part = context.pop("part", None)
    swapped = request.headers.get("HX-Request") and not request.headers.get("HX-History-Restore-Request")
    chosen = part if part is not None and swapped else name
    root = request.scope.get("root_path", "")
    session = request.session if "session" in request.scope else {}
    context = {
        "root": root,
        "signed_in": request.app.state.keys.open is False,
        "who": session.get("sub"),
        "writer": may_write(request) if "session" in request.scope else False,
        **context,
    }
    return TEMPLATES.TemplateResponse(request, chosen, context, status_code=status_code)
