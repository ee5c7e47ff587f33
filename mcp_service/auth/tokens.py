"""JWT access tokens of one OAuth 2.1 authorization server, verified as the MCP authorization specification's
resource server must (``auth`` decides what a verified token may do).

``JwtVerifier`` is the SDK's ``TokenVerifier``: it finds the issuer's JWKS through its RFC 8414 metadata
(``/.well-known/oauth-authorization-server``, else OpenID discovery), keeps it ``OAUTH_JWKS_CACHE_SECONDS``,
refetches it when a token names a ``kid`` it does not hold (key rotation) but at most once per
``OAUTH_JWKS_MIN_REFRESH_SECONDS`` (so forged kids cannot make it hammer the issuer), and checks the
signature with an algorithm of ``OAUTH_ALGORITHMS`` that matches the key (never ``none``, never HS*: a
public key is never an HMAC secret), then ``iss``, ``exp``/``nbf`` (with ``OAUTH_LEEWAY_SECONDS``) and
``aud`` (the server's resource URL, or ``OAUTH_AUDIENCE``). Any failure is ``None`` and a logged reason,
never the token.

The checks are joserfc's (Authlib's JOSE library): its compact parsing is several times cheaper than PyJWT's,
which tests each base64url character in a Python generator (figures: docs/performance.md › Authentication,
``docs/decisions/0030-oauth-resource-server.md``). A verified token is still remembered (``VERIFIED_CACHE``
tokens, least recently used out) until its ``exp`` (plus the leeway): an agent presents the same token on every
call of a session, and a dictionary lookup costs ~1% of a signature verification. Remembered tokens are
forgotten when a refetched JWKS drops a key that was published before (a withdrawn key).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
from cachetools import LRUCache
from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import Key, import_key
from joserfc.jwt import JWTClaimsRegistry
from mcp.server.auth.provider import AccessToken

from lib.config import OAuthSettings

logger = logging.getLogger(__name__)

FETCH_TIMEOUT_S = 5.0
VERIFIED_CACHE = 4096


class TokenRefused(ValueError):
    """A token this server does not verify: an algorithm it does not accept, or a key it does not hold."""


def metadata_urls(issuer: str) -> list[str]:
    """Where RFC 8414 (then OpenID Connect discovery) puts an issuer's metadata."""
    parts = urlsplit(issuer)
    origin, path = f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
    return [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{issuer.rstrip('/')}/.well-known/openid-configuration",
    ]


class JwtVerifier:
    """Verifies RS/PS/ES/EdDSA-signed JWT access tokens against the issuer's published keys."""

    def __init__(self, settings: OAuthSettings, audiences: list[str]) -> None:
        if not settings.issuer_url:
            raise ValueError("JwtVerifier needs OAUTH_ISSUER_URL")
        self.issuer = settings.issuer_url
        self.audiences = audiences
        self.algorithms = list(settings.algorithms)
        self.cache_s = settings.jwks_cache_seconds
        self.min_refresh_s = settings.jwks_min_refresh_seconds
        self.leeway = settings.leeway_seconds
        self.keys: dict[str, dict[str, Any]] = {}
        self._built: dict[tuple[str, str], Key] = {}
        self._registries = {alg: jws.JWSRegistry(algorithms=[alg]) for alg in self.algorithms}
        self._claims = JWTClaimsRegistry(
            leeway=self.leeway,
            iss={"essential": True, "value": self.issuer},
            aud={"essential": True, "values": list(audiences)},
            exp={"essential": True},
        )
        self.fetched_at = float("-inf")
        self.jwks_uri: str | None = None
        self._lock = anyio.Lock()
        self._verified: LRUCache[str, tuple[AccessToken, float, float]] = LRUCache(VERIFIED_CACHE)

    async def verify_token(self, token: str) -> AccessToken | None:
        remembered = self._verified.get(token)
        if remembered is not None:
            access, not_before, expires = remembered
            if not_before - self.leeway <= time.time() <= expires + self.leeway:
                return access
            self._verified.pop(token, None)
        try:
            claims = await self.claims(token)
        except (JoseError, ValueError, httpx.HTTPError) as exc:
            logger.warning("oauth.token_refused reason=%s detail=%r", type(exc).__name__, str(exc)[:200])
            return None
        scope = claims.get("scope", "")
        scopes = scope.split() if isinstance(scope, str) else [str(s) for s in scope]
        audience = claims.get("aud")
        given = [audience] if isinstance(audience, str) else list(audience or [])
        access = AccessToken(
            token=token,
            client_id=str(claims.get("client_id") or claims.get("azp") or claims.get("sub") or ""),
            scopes=scopes,
            expires_at=int(claims["exp"]) if "exp" in claims else None,
            resource=next((a for a in given if a in self.audiences), None),
            subject=str(claims["sub"]) if claims.get("sub") is not None else None,
            claims={"iss": claims.get("iss")},
        )
        if access.resource is not None:
            self._verified[token] = (access, float(claims.get("nbf", 0)), float(claims["exp"]))
        return access

    async def claims(self, token: str) -> dict[str, Any]:
        """The verified claims, or an exception saying why not (``JoseError``, ``TokenRefused``, ``ValueError``)."""
        compact = jws.extract_compact(token.encode("ascii"))  # size limits, three segments, a JSON header
        header = compact.headers()
        alg, kid = header.get("alg"), header.get("kid")
        if alg not in self._registries or "b64" in header:  # RFC 7797 unencoded payloads are not JWTs
            raise TokenRefused(f"alg {alg!r} is not accepted")
        key = await self.key(kid, alg)
        if not jws.validate_compact(compact, key, [alg], self._registries[alg]):
            raise TokenRefused("bad signature")
        claims = json.loads(compact.payload or b"")
        if not isinstance(claims, dict):
            raise TokenRefused("the payload is not a JSON object")
        self._claims.validate(claims)  # iss, aud, exp (required); nbf, iat when present; with the leeway
        return claims

    async def key(self, kid: str | None, alg: str) -> Key:
        """The published key ``kid`` as a key of ``alg`` (its own ``alg``, when it names one, must be that)."""
        if time.monotonic() - self.fetched_at > self.cache_s:
            await self.refresh(force=False)
        found = self._lookup(kid)
        if found is None and time.monotonic() - self.fetched_at >= self.min_refresh_s:
            await self.refresh(force=True)  # a rotated key: the issuer publishes it before signing with it
            found = self._lookup(kid)
        if found is None:
            raise TokenRefused(f"no published key with kid {kid!r}")
        name, data = found
        if data.get("alg", alg) != alg:
            raise TokenRefused(f"key {name!r} is for {data['alg']}, not {alg}")
        built = self._built.get((name, alg))
        if built is None:
            built = self._built[(name, alg)] = import_key(data)
        return built

    def _lookup(self, kid: str | None) -> tuple[str, dict[str, Any]] | None:
        if kid is None:
            return next(iter(self.keys.items())) if len(self.keys) == 1 else None
        data = self.keys.get(kid)
        return (kid, data) if data is not None else None

    async def refresh(self, *, force: bool) -> None:
        async with self._lock:
            now = time.monotonic()
            stale = now - self.fetched_at > self.cache_s
            if not stale and not (force and now - self.fetched_at >= self.min_refresh_s):
                return  # another caller refreshed while this one waited
            self.fetched_at = now  # even a failed fetch waits out min_refresh_s before the next
            async with httpx.AsyncClient(timeout=FETCH_TIMEOUT_S) as client:
                if self.jwks_uri is None:
                    self.jwks_uri = await self._discover(client)
                response = await client.get(self.jwks_uri)
                response.raise_for_status()
            keys = {
                str(data.get("kid", "")): data
                for data in response.json().get("keys", [])
                if data.get("use", "sig") == "sig" and data.get("kty") in ("RSA", "EC", "OKP")  # never "oct"
            }
            if set(self.keys) - set(keys):
                self._verified.clear()  # a key was withdrawn: what it signed is checked again
            self.keys, self._built = keys, {}
            logger.info("oauth.jwks_fetched issuer=%s keys=%d", self.issuer, len(keys))

    async def _discover(self, client: httpx.AsyncClient) -> str:
        return str((await issuer_metadata(client, self.issuer))["jwks_uri"])


async def issuer_metadata(client: httpx.AsyncClient, issuer: str) -> dict[str, Any]:
    """The issuer's RFC 8414 metadata (the first of ``metadata_urls`` that answers), which must name ``issuer``."""
    for url in metadata_urls(issuer):
        response = await client.get(url)
        if response.status_code == 200:
            metadata: dict[str, Any] = response.json()
            if metadata.get("issuer") != issuer:
                raise ValueError(f"metadata at {url} names issuer {metadata.get('issuer')!r}")
            return metadata
    raise ValueError(f"no authorization server metadata for {issuer}")
