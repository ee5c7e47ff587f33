"""A real OAuth 2.1 authorization server for the tests: Authlib's ``AuthorizationServer`` (Flask integration)
on loopback, issuing RS256 JWT access tokens (RFC 9068) by the client-credentials grant, with its RFC 8414
metadata and JWKS. ``aud`` is the request's RFC 8707 ``resource`` (Authlib leaves that to the server).

Clients (``CLIENTS``): ``agent-write`` may ask for read and write scopes, ``agent-read`` for read scopes only,
``agent-expired`` is given tokens already expired. ``rotate()`` signs with a new key from then on and
publishes both; ``foreign_token`` signs with a key it never published.
"""

from __future__ import annotations

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
from authlib.oauth2.rfc6749 import ClientMixin
from authlib.oauth2.rfc6749.grants import ClientCredentialsGrant
from authlib.oauth2.rfc9068 import JWTBearerTokenGenerator
from flask import Flask, jsonify, request
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey
from werkzeug.serving import make_server

SECRET = "s3cret-" + "c" * 24
SCOPES = ["policy:read", "policy:write", "documents:read", "documents:write", "kb:read", "kb:write",
          "governance:read"]  # fmt: skip


@dataclass
class Client(ClientMixin):
    client_id: str
    scopes: list[str]
    expires_in: int = 300

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> None:
        return None

    def get_allowed_scope(self, scope: str) -> str:
        return " ".join(s for s in (scope or "").split() if s in self.scopes)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return False

    def check_client_secret(self, client_secret: str) -> bool:
        return client_secret == SECRET

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method in ("client_secret_basic", "client_secret_post")

    def check_response_type(self, response_type: str) -> bool:
        return False

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type == "client_credentials"


CLIENTS = {
    c.client_id: c
    for c in (
        Client("agent-write", SCOPES),
        Client("agent-read", [s for s in SCOPES if s.endswith(":read")]),
        Client("agent-expired", SCOPES, expires_in=-3600),
    )
}


class _Grant(ClientCredentialsGrant):
    TOKEN_ENDPOINT_AUTH_METHODS: ClassVar[list[str]] = ["client_secret_basic", "client_secret_post"]


@dataclass
class Issuer:
    """The running authorization server: its URL (the issuer) and signing keys (the last one signs)."""

    url: str = ""
    keys: list[RSAKey] = field(default_factory=lambda: [RSAKey.generate_key(2048, parameters={"kid": "k1"})])

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

    class Tokens(JWTBearerTokenGenerator):
        def get_jwks(self) -> KeySet:
            return KeySet([issuer.keys[-1]])

        def get_audiences(self, client: Client, user: object, scope: str) -> str:
            return request.form.get("resource") or client.get_client_id()

    server.register_token_generator(
        "default", Tokens(issuer.url, expires_generator=lambda client, grant_type: client.expires_in)
    )

    @app.post("/token")
    def token() -> Any:
        return server.create_token_response()

    @app.get("/authorize")
    def authorize() -> Any:
        return jsonify({"error": "unsupported_response_type"}), 400  # no interactive grant in these tests

    @app.get("/.well-known/oauth-authorization-server")
    def metadata() -> Any:
        return jsonify({
            "issuer": issuer.url, "token_endpoint": f"{issuer.url}/token",
            "authorization_endpoint": f"{issuer.url}/authorize", "jwks_uri": f"{issuer.url}/jwks",
            "grant_types_supported": ["client_credentials"], "scopes_supported": SCOPES,
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "response_types_supported": ["code"],
        })  # fmt: skip

    @app.get("/jwks")
    def jwks() -> Any:
        return jsonify(issuer.jwks())

    return app


@contextmanager
def running_issuer() -> Iterator[Issuer]:
    """The authorization server on a free loopback port, in a thread, for as long as the block runs."""
    os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"  # plain http on loopback
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one access line per token request otherwise
    issuer = Issuer()
    holder: dict[str, Any] = {}
    server = make_server("127.0.0.1", 0, lambda environ, start: holder["app"](environ, start), threaded=True)
    issuer.url = f"http://127.0.0.1:{server.server_port}"
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
    response = httpx.post(f"{issuer.url}/token", auth=(client, SECRET),
                          data={"grant_type": "client_credentials", "scope": scope, "resource": resource})  # fmt: skip
    response.raise_for_status()
    return str(response.json()["access_token"])
