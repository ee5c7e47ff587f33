"""The ``/ui`` sub-application: the views (``routes``), the sign-in (``signin``, and ``issuer`` where an OAuth
issuer is configured), the stylesheet and htmx served
from ``static/`` (no build step, nothing fetched from elsewhere: the Content-Security-Policy allows this
origin only), ``lib``'s typed errors shown on a page with their HTTP status."""

from __future__ import annotations

import logging
from pathlib import Path

from pydantic import SecretStr
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lib.composition import Stores
from lib.config import Settings
from lib.errors import KBError
from mcp_service.auth import OAuthResource
from mcp_service.ui.issuer import FLOW_COOKIE, IssuerSignIn, SignInRefused
from mcp_service.ui.rendering import render
from mcp_service.ui.routes import ROUTES
from mcp_service.ui.signin import COOKIE, MAX_AGE_S, SESSION_KEY, Keys, SignInRequired, safe_next

logger = logging.getLogger(__name__)

UI_PREFIX = "/ui"
STATIC = Path(__file__).parent / "static"
POLICY = (
    "default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'self'"
)
"""The browser may load nothing from another origin, and run no inline script or style."""


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("Content-Security-Policy", POLICY)
                headers.setdefault("X-Content-Type-Options", "nosniff")
                headers.setdefault("Referrer-Policy", "same-origin")
            await send(message)

        await self.app(scope, receive, with_headers)


def _form(request: Request, status_code: int = 200, *, next: str = "", error: str = "") -> Response:
    keys: Keys = request.app.state.keys
    issuer: IssuerSignIn | None = request.app.state.issuer
    return render(
        request,
        "signin.html",
        status_code=status_code,
        next=next,
        error=error,
        open=keys.open,
        keyed=keys.keyed,
        issuer=issuer.label if issuer else "",
    )


async def signin_form(request: Request) -> Response:
    keys: Keys = request.app.state.keys
    root = request.scope.get("root_path", "")
    if keys.signed_in(request) and not keys.open:
        return RedirectResponse(safe_next(request.query_params.get("next"), root), status_code=303)
    return _form(request, next=request.query_params.get("next") or "")


async def signin(request: Request) -> Response:
    keys: Keys = request.app.state.keys
    form = await request.form()
    typed, wanted = str(form.get("key") or ""), str(form.get("next") or "")
    held = keys.accepts(typed)
    if held is None:
        client = request.client.host if request.client else "-"
        logger.warning("ui.signin_refused client_ip=%s", client)
        return _form(request, 401, next=wanted, error="That key is not valid.")
    request.session.clear()
    request.session[SESSION_KEY] = held
    return RedirectResponse(safe_next(wanted, request.scope.get("root_path", "")), status_code=303)


async def issuer_start(request: Request) -> Response:
    issuer: IssuerSignIn | None = request.app.state.issuer
    if issuer is None:
        return RedirectResponse(f"{request.scope.get('root_path', '')}/signin", status_code=303)
    try:
        return await issuer.start(request)
    except SignInRefused as refused:
        logger.warning("ui.signin_refused via=issuer reason=%s", refused.reason)
        return _form(request, refused.status, next=request.query_params.get("next") or "", error=str(refused))


async def issuer_callback(request: Request) -> Response:
    issuer: IssuerSignIn | None = request.app.state.issuer
    root = request.scope.get("root_path", "")
    if issuer is None:
        return RedirectResponse(f"{root}/signin", status_code=303)
    try:
        wanted = await issuer.finish(request)
    except SignInRefused as refused:
        client = request.client.host if request.client else "-"
        logger.warning("ui.signin_refused via=issuer reason=%s client_ip=%s", refused.reason, client)
        response = _form(request, refused.status, error=str(refused))
    else:
        response = render(request, "signed_in.html", next=wanted)
    response.delete_cookie(FLOW_COOKIE, path=f"{root}/auth")
    return response


async def signout(request: Request) -> Response:
    request.session.clear()
    return RedirectResponse(f"{request.scope.get('root_path', '')}/signin", status_code=303)


async def kb_error(request: Request, exc: Exception) -> Response:
    error = exc if isinstance(exc, KBError) else KBError(str(exc))
    return render(request, "error.html", status_code=error.http_status, part="_error.html", error=error)


def create_ui_app(stores: Stores, oauth: OAuthResource | None = None, settings: Settings | None = None) -> Starlette:
    """The page over ``stores`` (the policy stores, and the governance ones for ``/governance``), to mount at
    ``UI_PREFIX`` behind no bearer auth: it checks the same keys at its sign-in (``signin``) and, with the
    server's ``oauth`` resource and ``UI_OAUTH_CLIENT_ID``, signs in at the same issuer (``issuer``)."""
    settings = settings or stores.settings
    wants_issuer = oauth is not None and bool(settings.oauth.ui_client_id)
    keys = Keys(
        settings.auth, client_secret=(settings.oauth.ui_client_secret or SecretStr("")) if wants_issuer else None
    )
    issuer = IssuerSignIn.from_settings(settings.oauth, oauth, keys.secret)
    routes = [
        Route("/signin", signin_form, methods=["GET"]),
        Route("/signin", signin, methods=["POST"]),
        Route("/signout", signout, methods=["POST"]),
        Route("/auth/start", issuer_start, methods=["GET"]),
        Route("/auth/callback", issuer_callback, methods=["GET"]),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
        *ROUTES,
    ]
    middleware = [
        Middleware(SecurityHeaders),
        Middleware(
            SessionMiddleware,
            secret_key=keys.secret,
            session_cookie=COOKIE,
            max_age=MAX_AGE_S,
            path=UI_PREFIX,
            same_site="strict",
        ),
        Middleware(SignInRequired, keys=keys),
    ]
    app = Starlette(routes=routes, middleware=middleware, exception_handlers={KBError: kb_error})
    app.state.stores = stores
    app.state.keys = keys
    app.state.issuer = issuer
    return app
