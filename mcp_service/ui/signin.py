"""Who may see the web page: the same keys as the API (``MCP_API_KEY``, or the read-only ``MCP_READ_API_KEY``,
which may do everything but add a plan: ``Keys.may_write``), typed once into a sign-in form and then carried by
a signed session cookie.

The cookie is Starlette's ``SessionMiddleware`` (itsdangerous-signed, ``HttpOnly``, ``SameSite=Strict``, path
``/ui``, 12 hours). Its secret is ``UI_SESSION_SECRET``, or else derived from ``MCP_API_KEY``, so every replica
accepts every other's cookie without one more setting and changing the key signs everyone out. The session
holds a fingerprint of the key used, checked on each request: a read key taken away ends its sessions too.
With no ``MCP_API_KEY`` (and no issuer sign-in) the page is open, like the API.

Where ``OAUTH_ISSUER_URL`` and ``UI_OAUTH_CLIENT_ID`` are set, a person may instead sign in at the issuer
(``issuer``): that session holds the caller's ``sub``, whether it may write, and until when (the token's
``exp``, at most the cookie's 12 hours), never the token. The secret is then derived from the client secret too.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import time
from urllib.parse import quote

from pydantic import SecretStr
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from lib.config import AuthSettings

logger = logging.getLogger(__name__)

COOKIE = "policy_kb_ui"
MAX_AGE_S = 12 * 60 * 60
SESSION_KEY = "key"
SESSION_SUB, SESSION_WRITE, SESSION_UNTIL = "sub", "write", "until"
"""What an issuer sign-in keeps in the session (``issuer``): who, whether it may write, until when (epoch s)."""
OPEN_PATHS = ("/signin", "/static/", "/auth/")
"""Paths of the UI app (below its mount) served before signing in."""


def _raw(value: SecretStr | None) -> bytes:
    return value.get_secret_value().encode() if value is not None else b""


def fingerprint(key: bytes) -> str:
    """What the session keeps of the key it was opened with (never the key)."""
    return hashlib.sha256(b"policy-kb-ui-key:" + key).hexdigest()[:32]


class Keys:
    """The keys a sign-in is checked against, from the settings, compared in constant time."""

    def __init__(self, auth: AuthSettings, *, client_secret: SecretStr | None = None) -> None:
        """``client_secret``: the issuer sign-in's, when it is on (``issuer``); it is then part of the secret
        derived, so a page with OAuth and no key never signs its cookies with a secret anyone can derive."""
        self._keys = [k for k in (_raw(auth.api_key), _raw(auth.read_api_key) if auth.api_key else b"") if k]
        self._write_key = _raw(auth.api_key)
        self.issuer = client_secret is not None
        explicit = _raw(auth.ui_session_secret)
        material = _raw(auth.api_key) + (b"\0" + _raw(client_secret) if client_secret is not None else b"")
        self.secret = (explicit or hashlib.sha256(b"policy-kb-ui-session:" + material).digest()).hex()

    @property
    def keyed(self) -> bool:
        """Whether a key sign-in is offered (a key is configured)."""
        return bool(self._keys)

    @property
    def open(self) -> bool:
        return not self._keys and not self.issuer

    def accepts(self, typed: str) -> str | None:
        """The fingerprint of the key ``typed`` is, or ``None``; every key is compared, whichever matches."""
        presented = typed.strip().encode()
        matched = [hmac.compare_digest(presented, key) for key in self._keys]
        return next((fingerprint(key) for key, ok in zip(self._keys, matched, strict=True) if ok), None)

    def signed_in(self, request: Request) -> bool:
        if self.open:
            return True
        held = request.session.get(SESSION_KEY)
        if isinstance(held, str) and any(hmac.compare_digest(held, fingerprint(k)) for k in self._keys):
            return True
        until = request.session.get(SESSION_UNTIL)
        return (
            self.issuer
            and isinstance(request.session.get(SESSION_SUB), str)
            and isinstance(until, int)
            and (time.time() < until)
        )

    def may_write(self, request: Request) -> bool:
        """Whether the signed-in person may change the store (add a plan): the full key, an issuer sign-in
        whose token held the write scope, or an open page; the read-only key reads only, as on the API."""
        if self.open:
            return True
        held = request.session.get(SESSION_KEY)
        if isinstance(held, str) and self._write_key and hmac.compare_digest(held, fingerprint(self._write_key)):
            return True
        return self.signed_in(request) and request.session.get(SESSION_WRITE) is True


def safe_next(value: str | None, root: str) -> str:
    """Where to go after signing in: a path of the page itself, never another site (``//host``, ``https:``)."""
    if value and value.startswith(root + "/") and not value.startswith("//") and "\\" not in value:
        return value
    return root + "/"


class SignInRequired:
    """Sends a request without a signed-in session to the sign-in form (a page) or answers 401 (htmx)."""

    def __init__(self, app: ASGIApp, *, keys: Keys) -> None:
        self.app = app
        self.keys = keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope)
        below = scope["path"][len(scope.get("root_path", "")) :]
        if scope["type"] != "http" or below.startswith(OPEN_PATHS) or self.keys.signed_in(request):
            await self.app(scope, receive, send)
            return
        root = scope.get("root_path", "")
        if request.headers.get("HX-Request"):
            response: Response = Response("Sign in again", status_code=401, headers={"HX-Redirect": f"{root}/signin"})
        else:
            target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            response = RedirectResponse(f"{root}/signin?next={quote(target, safe='/')}", status_code=303)
        await response(scope, receive, send)
