"""A real OAuth 2.1 authorization server for the tests: Authlib's ``AuthorizationServer`` (Flask integration)
on loopback, issuing RS256 JWT access tokens (RFC 9068) by the client-credentials grant and by the
authorization-code grant with PKCE (S256 required), with its RFC 8414 metadata and JWKS. ``aud`` is the
request's RFC 8707 ``resource`` (Authlib leaves that to the server), or ``Issuer.force_audience`` when a test
sets it.

Clients (``CLIENTS``): ``agent-write`` may ask for read and write scopes, ``agent-read`` for read scopes only,
``agent-expired`` is given tokens already expired; ``ui-web`` (the web page) uses the authorization code, its
redirect URIs those a test adds (``Issuer.redirect_uris``). ``/authorize`` approves at once, as ``USER`` (no
login form), answering a page of its own that sends the browser back (``<meta refresh>``), so the return is a
navigation from the issuer's site, as after a real consent click. ``rotate()`` signs with a new key from then
on and publishes both; ``foreign_token`` signs with a key it never published.
"""

from __future__ import annotations

import html
import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar

import httpx
from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import AuthorizationCodeMixin, ClientMixin
from authlib.oauth2.rfc6749.errors import InvalidRequestError, OAuth2Error
from authlib.oauth2.rfc6749.grants import AuthorizationCodeGrant, ClientCredentialsGrant
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc9068 import JWTBearerTokenGenerator
from flask import Flask, jsonify, request
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey
from werkzeug.serving import make_server

SECRET = "s3cret-" + "c" * 24
SCOPES = ["policy:read", "policy:write", "documents:read", "documents:write", "kb:read", "kb:write", "governance:read"]


USER = "planner-7"
"""The one person ``/authorize`` signs in, at once."""
UI_CLIENT = "ui-web"


@dataclass
class Client(ClientMixin):
    client_id: str
    scopes: list[str]
    expires_in: int = 300
    grant_types: tuple[str, ...] = ("client_credentials",)
    redirect_uris: list[str] = field(default_factory=list)

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        return self.redirect_uris[0] if self.redirect_uris else None

    def get_allowed_scope(self, scope: str) -> str:
        return " ".join(s for s in (scope or "").split() if s in self.scopes)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri in self.redirect_uris

    def check_client_secret(self, client_secret: str) -> bool:
        return client_secret == SECRET

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method in ("client_secret_basic", "client_secret_post")

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code" and "authorization_code" in self.grant_types

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.grant_types


CLIENTS = {
    c.client_id: c
    for c in (
        Client("agent-write", SCOPES),
        Client("agent-read", [s for s in SCOPES if s.endswith(":read")]),
        Client("agent-expired", SCOPES, expires_in=-3600),
        Client(UI_CLIENT, SCOPES, grant_types=("authorization_code",)),
    )
}


@dataclass
class User:
    sub: str

    def get_user_id(self) -> str:
        return self.sub


@dataclass
class Code(AuthorizationCodeMixin):
    code: str
    client_id: str
    redirect_uri: str
    scope: str
    code_challenge: str
    code_challenge_method: str
    user: User
    expires_at: float

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope


class _Grant(ClientCredentialsGrant):
    TOKEN_ENDPOINT_AUTH_METHODS: ClassVar[list[str]] = ["client_secret_basic", "client_secret_post"]


class _S256Required(CodeChallenge):
    """PKCE for every client, confidential ones too, and S256 only (Authlib requires it of public ones)."""

    SUPPORTED_CODE_CHALLENGE_METHOD: ClassVar[list[str]] = ["S256"]

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if not data.get("code_challenge") or data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("PKCE with code_challenge_method=S256 is required")
        super().validate_code_challenge(grant, redirect_uri)


@dataclass
class Issuer:
    """The running authorization server: its URL (the issuer) and signing keys (the last one signs)."""

    url: str = ""
    keys: list[RSAKey] = field(default_factory=lambda: [RSAKey.generate_key(2048, parameters={"kid": "k1"})])
    codes: dict[str, Code] = field(default_factory=dict)
    force_audience: str | None = None

    @property
    def redirect_uris(self) -> list[str]:
        """Where the web page's client (``UI_CLIENT``) may be sent back to: a test adds its server's."""
        return CLIENTS[UI_CLIENT].redirect_uris

    def rotate(self) -> None:
        self.keys.append(RSAKey.generate_key(2048, parameters={"kid": f"k{len(self.keys) + 1}"}))

    def jwks(self) -> dict[str, Any]:
        return dict(KeySet(list(self.keys)).as_dict(private=False))

    def foreign_token(self, audience: str, scope: str = "policy:read policy:write") -> str:
        """A well-formed token for ``audience``, signed by a key this issuer never published."""
        stranger = RSAKey.generate_key(2048, parameters={"kid": "stranger"})
        return jwt.encode({"alg": "RS256", "kid": "stranger"}, self.claims(audience, scope), stranger)

    def claims(self, audience: str, scope: str) -> dict[str, Any]:
        now = int(time.time())
        return {"iss": self.url, "sub": "forger", "aud": audience, "scope": scope, "iat": now, "exp": now + 300}


def create_issuer_app(issuer: Issuer) -> Flask:
    app = Flask("test-issuer")
    server = AuthorizationServer(app, query_client=CLIENTS.get, save_token=lambda token, request: None)
    server.register_grant(_Grant)

    class Codes(AuthorizationCodeGrant):
        TOKEN_ENDPOINT_AUTH_METHODS: ClassVar[list[str]] = ["client_secret_basic", "client_secret_post"]

        def save_authorization_code(self, code: str, request: Any) -> None:
            data = request.payload.data
            challenge, method = data.get("code_challenge", ""), data.get("code_challenge_method", "")
            issuer.codes[code] = Code(
                code,
                request.client.client_id,
                request.payload.redirect_uri,
                request.payload.scope or "",
                challenge,
                method,
                request.user,
                time.time() + 60,
            )

        def query_authorization_code(self, code: str, client: Client) -> Code | None:
            found = issuer.codes.get(code)
            if found and found.client_id == client.client_id and found.expires_at > time.time():
                return found
            return None

        def delete_authorization_code(self, authorization_code: Code) -> None:
            issuer.codes.pop(authorization_code.code, None)

        def authenticate_user(self, authorization_code: Code) -> User:
            return authorization_code.user

    server.register_grant(Codes, [_S256Required(required=True)])

    class Tokens(JWTBearerTokenGenerator):
        def get_jwks(self) -> KeySet:
            return KeySet([issuer.keys[-1]])

        def get_audiences(self, client: Client, user: object, scope: str) -> str:
            return issuer.force_audience or request.form.get("resource") or client.get_client_id()

    server.register_token_generator(
        "default", Tokens(issuer.url, expires_generator=lambda client, grant_type: client.expires_in)
    )

    @app.post("/token")
    def token() -> Any:
        return server.create_token_response()

    @app.get("/authorize")
    def authorize() -> Any:
        user = User(USER)  # approved at once: no login form
        try:
            grant = server.get_consent_grant(end_user=user)
        except OAuth2Error as error:
            return server.handle_error_response(None, error)
        answer = server.create_authorization_response(grant_user=user, grant=grant)
        back = html.escape(answer.headers["Location"])
        # A page of the issuer's that sends the browser back, as a consent page would once clicked: the
        # navigation back to the client then comes from the issuer's site, not from the client's own page.
        return f'<meta http-equiv="refresh" content="0; url={back}"><a id="back" href="{back}">back</a>'

    @app.get("/.well-known/oauth-authorization-server")
    def metadata() -> Any:
        return jsonify(
            {
                "issuer": issuer.url,
                "token_endpoint": f"{issuer.url}/token",
                "authorization_endpoint": f"{issuer.url}/authorize",
                "jwks_uri": f"{issuer.url}/jwks",
                "grant_types_supported": ["client_credentials", "authorization_code"],
                "scopes_supported": SCOPES,
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
                "response_types_supported": ["code"],
            }
        )

    @app.get("/jwks")
    def jwks() -> Any:
        return jsonify(issuer.jwks())

    return app


@contextmanager
def running_issuer(host: str = "127.0.0.1") -> Iterator[Issuer]:
    """The authorization server on a free loopback port, in a thread, for as long as the block runs; its URL
    names ``host`` (``localhost`` makes it another site than a service at 127.0.0.1, as an issuer would be)."""
    os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"  # plain http on loopback
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one access line per token request otherwise
    issuer = Issuer()
    holder: dict[str, Any] = {}
    server = make_server("127.0.0.1", 0, lambda environ, start: holder["app"](environ, start), threaded=True)
    issuer.url = f"http://{host}:{server.server_port}"
    holder["app"] = create_issuer_app(issuer)
    thread = threading.Thread(target=server.serve_forever, name="test-issuer", daemon=True)
    thread.start()
    try:
        yield issuer
    finally:
        server.shutdown()
        thread.join(timeout=10)


def token(issuer: Issuer, client: str, scope: str, resource: str) -> str:
    """An access token from the running issuer by the client-credentials grant, for ``resource`` (its ``aud``)."""
    response = httpx.post(
        f"{issuer.url}/token",
        auth=(client, SECRET),
        data={"grant_type": "client_credentials", "scope": scope, "resource": resource},
    )
    response.raise_for_status()
    return str(response.json()["access_token"])
