"""Sign-in at the OAuth issuer (``OAUTH_ISSUER_URL``) for the web page: the authorization-code flow with PKCE
(RFC 6749 4.1, RFC 7636 S256), the page being a confidential client (``UI_OAUTH_CLIENT_ID``/``_SECRET``).

    GET /ui/auth/start?next=   a new state and code verifier, kept in a signed short-lived cookie; off to the
                               issuer's ``authorization_endpoint`` (RFC 8414 metadata) with the challenge
    GET /ui/auth/callback      the state checked against that cookie, the code exchanged at the
                               ``token_endpoint`` (plain httpx, client_secret_basic, with the verifier), the
                               access token verified by the server's own ``JwtVerifier`` (audience, issuer,
                               signature) and its scopes read: ``policy:read`` or ``policy:write``

The session then holds ``sub``, whether it may write and until when; the token is dropped. The flow cookie is
``SameSite=Lax`` (the issuer's redirect back is a cross-site navigation, which a ``Strict`` cookie would miss),
path ``/ui/auth``, 10 minutes, and used once. The callback answers a page that moves on by ``<meta refresh>``
rather than a redirect: a navigation that came from another site carries no ``Strict`` cookie along its
redirects, and the session cookie is ``Strict``. Both were seen in Chromium (``tests/mcp_service/test_ui_oauth.py``:
with a ``Strict`` flow cookie, or a 303 instead of the page, the person ends on the sign-in form again).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import secrets
import time
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit

import httpx
from itsdangerous import BadSignature, URLSafeTimedSerializer
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from lib.config import OAuthSettings
from mcp_service.auth import OAuthResource
from mcp_service.auth.tokens import FETCH_TIMEOUT_S, JwtVerifier, issuer_metadata
from mcp_service.ui.signin import MAX_AGE_S, SESSION_SUB, SESSION_UNTIL, SESSION_WRITE, safe_next

logger = logging.getLogger(__name__)

FLOW_COOKIE = "policy_kb_ui_oauth"
FLOW_MAX_AGE_S = 600
CALLBACK_PATH = "/ui/auth/callback"


def challenge_of(verifier: str) -> str:
    """RFC 7636 S256: BASE64URL(SHA256(verifier)), unpadded."""
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


class SignInRefused(Exception):
    """Why an issuer sign-in ended without a session (shown on the sign-in form, logged; never a token)."""

    def __init__(self, reason: str, message: str, status: int = 401) -> None:
        super().__init__(message)
        self.reason, self.status = reason, status


@dataclass
class IssuerSignIn:
    """The page's client at the issuer, over the server's OAuth resource (its verifier and resource URL)."""

    resource: OAuthResource
    issuer: str
    client_id: str
    client_secret: str
    session_secret: str
    _endpoints: tuple[str, str] | None = field(default=None, init=False)

    @classmethod
    def from_settings(cls, settings: OAuthSettings, resource: OAuthResource | None, secret: str) -> IssuerSignIn | None:
        if resource is None or not settings.issuer_url or not settings.ui_client_id:
            return None
        client_secret = settings.ui_client_secret.get_secret_value() if settings.ui_client_secret else ""
        return cls(resource, settings.issuer_url, settings.ui_client_id, client_secret, secret)

    @property
    def label(self) -> str:
        return urlsplit(self.issuer).netloc or self.issuer

    @property
    def redirect_uri(self) -> str:
        return self.resource.resource_url + CALLBACK_PATH

    @property
    def _flows(self) -> URLSafeTimedSerializer:
        return URLSafeTimedSerializer(self.session_secret, salt="policy-kb-ui-oauth-flow")

    async def endpoints(self) -> tuple[str, str]:
        """``authorization_endpoint`` and ``token_endpoint`` from the issuer's metadata (fetched once)."""
        if self._endpoints is None:
            async with httpx.AsyncClient(timeout=FETCH_TIMEOUT_S) as client:
                metadata = await issuer_metadata(client, self.issuer)
            self._endpoints = (str(metadata["authorization_endpoint"]), str(metadata["token_endpoint"]))
        return self._endpoints

    async def start(self, request: Request) -> Response:
        root = request.scope.get("root_path", "")
        wanted = safe_next(request.query_params.get("next"), root)
        state, verifier = secrets.token_urlsafe(32), secrets.token_urlsafe(64)
        try:
            authorize, _ = await self.endpoints()
        except (httpx.HTTPError, ValueError) as exc:
            raise SignInRefused(
                "issuer_unreachable", f"The issuer could not be reached ({type(exc).__name__}).", 502
            ) from exc
        query = urlencode(
            {
                "response_type": "code",
                "client_id": self.client_id,
                "redirect_uri": self.redirect_uri,
                "scope": " ".join(self.resource.scopes),
                "state": state,
                "code_challenge": challenge_of(verifier),
                "code_challenge_method": "S256",
                "resource": self.resource.resource_url,
            }
        )
        response = RedirectResponse(f"{authorize}?{query}", status_code=303)
        response.set_cookie(
            FLOW_COOKIE,
            self._flows.dumps({"state": state, "verifier": verifier, "next": wanted}),
            max_age=FLOW_MAX_AGE_S,
            path=f"{root}/auth",
            httponly=True,
            samesite="lax",
            secure=request.url.scheme == "https",
        )
        return response

    async def finish(self, request: Request) -> str:
        """The callback: a session opened in ``request.session`` and where to go next, or ``SignInRefused``."""
        flow = self._flow(request.cookies.get(FLOW_COOKIE))
        state = request.query_params.get("state") or ""
        if flow is None or not hmac.compare_digest(state.encode(), str(flow.get("state", "")).encode()):
            raise SignInRefused("bad_state", "That sign-in was not started here, or took too long: start again.")
        if request.query_params.get("error"):
            raise SignInRefused("issuer_refused", f"The issuer refused: {request.query_params['error']}.", 403)
        try:
            token = await self._exchange(request.query_params.get("code") or "", str(flow["verifier"]))
        except (httpx.HTTPError, ValueError) as exc:
            raise SignInRefused(
                "issuer_unreachable", f"The issuer could not be reached ({type(exc).__name__}).", 502
            ) from exc
        verifier = self.resource.verifier
        access = await verifier.verify_token(token)
        if access is None or access.resource is None:
            audiences = verifier.audiences if isinstance(verifier, JwtVerifier) else []
            raise SignInRefused("invalid_token", f"The issuer's token is not valid here (for {audiences}).")
        write = f"{self.resource.scope}:write" in access.scopes
        if not write and f"{self.resource.scope}:read" not in access.scopes:
            raise SignInRefused("insufficient_scope", f"That account may not read {self.resource.scope}.", 403)
        until = min(access.expires_at or 0, int(time.time()) + MAX_AGE_S)
        subject = access.subject or access.client_id
        request.session.clear()
        request.session.update({SESSION_SUB: subject, SESSION_WRITE: write, SESSION_UNTIL: until})
        logger.info("ui.signin_issuer sub=%s write=%s until=%d", subject, write, until)
        return str(flow["next"])

    def _flow(self, cookie: str | None) -> dict[str, object] | None:
        if not cookie:
            return None
        try:
            flow = self._flows.loads(cookie, max_age=FLOW_MAX_AGE_S)
        except BadSignature:
            return None
        return flow if isinstance(flow, dict) else None

    async def _exchange(self, code: str, verifier: str) -> str:
        _, token_endpoint = await self.endpoints()
        data = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect_uri,
            "code_verifier": verifier,
            "resource": self.resource.resource_url,
        }
        async with httpx.AsyncClient(timeout=FETCH_TIMEOUT_S) as client:
            response = await client.post(token_endpoint, data=data, auth=(self.client_id, self.client_secret))
        if response.status_code != 200:
            error = (
                response.json().get("error", "?")
                if response.headers.get("content-type", "").startswith("application/json")
                else response.status_code
            )
            raise SignInRefused("exchange_failed", f"The issuer did not give a token ({error}).")
        token = response.json().get("access_token")
        if not isinstance(token, str) or not token:
            raise SignInRefused("exchange_failed", "The issuer's answer held no access token.")
        return token
