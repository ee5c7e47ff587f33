"""Is a process of the stack up? One cheap check per process, shared by ``stack up``/``status``, the
readiness waits of the Procfile and the tests. A check never raises: it answers ``Health``."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx
import redis

from deployments.stack.layout import OTHER_SERVERS, StackLayout

WORK_POOL = "policy-kb"
_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class Health:
    ok: bool
    detail: str


def _http(url: str, ok_detail: str) -> Health:
    try:
        response = httpx.get(url, timeout=_TIMEOUT_S)
    except httpx.HTTPError as exc:
        return Health(False, type(exc).__name__)
    return Health(response.status_code == 200, ok_detail if response.status_code == 200 else str(response.status_code))


def _all_of(checks: list[Health]) -> Health:
    """Healthy when every one is; the detail of each that is not (else all of them)."""
    failing = [check.detail for check in checks if not check.ok]
    return Health(not failing, ", ".join(failing or [check.detail for check in checks]))


def _redis(layout: StackLayout) -> Health:
    try:
        client = redis.Redis.from_url(layout.redis_url, socket_connect_timeout=_TIMEOUT_S, socket_timeout=_TIMEOUT_S)
        aof = client.config_get("appendonly").get("appendonly")
    except (redis.RedisError, OSError) as exc:
        return Health(False, type(exc).__name__)
    return Health(True, f"PONG, appendonly {aof}")


def _worker(layout: StackLayout) -> Health:
    """Online when the Prefect server lists a worker of the pool with a recent heartbeat."""
    url = f"{layout.prefect_api_url}/work_pools/{WORK_POOL}/workers/filter"
    try:
        response = httpx.post(url, json={}, timeout=_TIMEOUT_S)
    except httpx.HTTPError as exc:
        return Health(False, type(exc).__name__)
    if response.status_code != 200:
        return Health(False, f"pool {WORK_POOL}: {response.status_code}")
    online = [w["name"] for w in response.json() if w.get("status") == "ONLINE"]
    return Health(
        bool(online), f"pool {WORK_POOL}: {len(online)} online" if online else f"pool {WORK_POOL}: none online"
    )


CHECKS: dict[str, Callable[[StackLayout], Health]] = {
    "redis": _redis,
    "chroma": lambda layout: _http(f"{layout.url('chroma')}/api/v2/heartbeat", "heartbeat"),
    "s3": lambda layout: _http(f"{layout.url('s3')}/", "S3 API"),
    "prefect": lambda layout: _http(f"{layout.prefect_api_url}/health", "API healthy"),
    "worker": _worker,
    "replica-a": lambda layout: _http(f"{layout.url('replica-a')}/health", "/health 200"),
    "replica-b": lambda layout: _http(f"{layout.url('replica-b')}/health", "/health 200"),
    "servers": lambda layout: _all_of(
        [_http(f"{layout.url(name)}/health", f"{name} /health 200") for name in OTHER_SERVERS]
    ),
}


def check(name: str, layout: StackLayout) -> Health:
    return CHECKS[name](layout)


def wait_healthy(
    names: list[str], layout: StackLayout, timeout: float, alive: Callable[[], bool] = lambda: True
) -> None:
    """Return when every named process is healthy; ``TimeoutError`` naming the others after ``timeout``
    seconds, or ``RuntimeError`` as soon as ``alive()`` says the processes' supervisor has gone."""
    deadline = time.monotonic() + timeout
    pending = list(names)
    while pending:
        pending = [name for name in pending if not check(name, layout).ok]
        if not pending:
            return
        if not alive():
            raise RuntimeError(f"the stack stopped while waiting for {', '.join(pending)}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"not healthy within {timeout:g} s: {', '.join(pending)}")
        time.sleep(0.25)
