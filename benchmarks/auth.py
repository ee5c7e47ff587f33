"""What checking a caller costs per request: a JWT access token (JWKS cached) next to a static key.

    .venv/bin/python benchmarks/auth.py [--calls 5000]

Runs the tests' real authorization server (``tests/mcp_service/oauth_server.py``: Authlib, RS256, 2048-bit
keys) on loopback for one token, then times, in one event loop: the full verification of a token (the
signature, ``iss``, ``exp``/``nbf`` and ``aud`` checks, JWKS already fetched), ``verify_token`` of a token
already verified (what every call of a session after its first pays), ``hmac.compare_digest`` of a static
key, and the whole auth middleware (``BearerAuthMiddleware``, rate limits off) in front of an app that does
nothing, with each credential: the difference is what a request pays for its token. Goal: ≤ 0.2 ms per call.
"""

from __future__ import annotations

import argparse
import hmac
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
from pydantic import SecretStr

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lib.config import load_settings  # noqa: E402
from mcp_service.auth import BearerAuthMiddleware, OAuthResource  # noqa: E402
from mcp_service.auth.tokens import JwtVerifier  # noqa: E402
from tests.mcp_service.oauth_server import SECRET, running_issuer  # noqa: E402

RESOURCE = "http://127.0.0.1:3003"
KEY = "full-key-" + "f" * 32
BATCHES = 5


async def per_call_ms(call: Callable[[], Awaitable[Any]], calls: int) -> float:
    """The median over ``BATCHES`` batches of the mean time of one call, in ms."""
    await call()  # warm: the JWKS fetched, the key built
    batches = []
    for _ in range(BATCHES):
        started = time.perf_counter()
        for _ in range(calls):
            await call()
        batches.append((time.perf_counter() - started) / calls * 1000)
    return statistics.median(batches)


async def measure(issuer_url: str, token: str, calls: int) -> dict[str, float]:
    settings = load_settings(oauth_issuer_url=issuer_url)
    verifier = JwtVerifier(settings.oauth, [RESOURCE, RESOURCE + "/mcp"])
    assert await verifier.verify_token(token) is not None, "the token does not verify"
    oauth = OAuthResource(verifier, RESOURCE, RESOURCE + "/.well-known/oauth-protected-resource/mcp", "policy")

    async def nothing(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})

    middleware = BearerAuthMiddleware(nothing, api_key=SecretStr(KEY), oauth=oauth)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        if message["type"] == "http.response.start":
            assert message["status"] == 200, message

    def request(credential: str) -> Callable[[], Awaitable[None]]:
        scope = {
            "type": "http",
            "method": "GET",
            "path": "/api/v1/policies",
            "client": ("127.0.0.1", 1),
            "headers": [(b"authorization", f"Bearer {credential}".encode())],
        }
        return lambda: middleware(scope, receive, send)

    presented, expected = KEY.encode(), KEY.encode()

    async def compare_key() -> bool:
        return hmac.compare_digest(presented, expected)

    return {
        "full verification, every call (JwtVerifier.claims: signature, iss, exp, aud)": await per_call_ms(
            lambda: verifier.claims(token), calls
        ),
        "verify_token, the token seen before (verified-token cache)": await per_call_ms(
            lambda: verifier.verify_token(token), calls
        ),
        "hmac.compare_digest (static key)": await per_call_ms(compare_key, calls),
        "auth middleware, token": await per_call_ms(request(token), calls),
        "auth middleware, static key": await per_call_ms(request(KEY), calls),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=5000)
    args = parser.parse_args()
    with running_issuer() as issuer:
        response = httpx.post(
            f"{issuer.url}/token",
            auth=("agent-write", SECRET),
            data={"grant_type": "client_credentials", "scope": "policy:read policy:write", "resource": RESOURCE},
        )
        response.raise_for_status()
        results = anyio.run(measure, issuer.url, response.json()["access_token"], args.calls)
    print(f"| check | ms per call (median of {BATCHES} batches of {args.calls}) |")
    print("|---|---|")
    for name, ms in results.items():
        print(f"| {name} | {ms:.4f} |")


if __name__ == "__main__":
    main()
