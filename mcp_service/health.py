"""Liveness (``/health``: the process answers; no store is touched, no auth) and the deep check behind
``/api/v1/health``: Redis, Chroma and the object store each reached, timed and counted."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from itertools import islice

from pydantic import BaseModel, Field
from starlette.requests import Request
from starlette.responses import JSONResponse

from lib.kb import KnowledgeBase

logger = logging.getLogger(__name__)

MAX_COUNTED_FILES = 10_000


async def liveness(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


class Check(BaseModel):
    ok: bool
    latency_ms: float
    counts: dict[str, int] = Field(default_factory=dict)
    error: str = ""


class DeepHealth(BaseModel):
    status: str = Field(description="ok when every store answered, else degraded (HTTP 503)")
    checks: dict[str, Check]
    search_cache: dict[str, float] = Field(description="Revision embeddings cached in this process")


def _timed(name: str, probe: Callable[[], dict[str, int]]) -> Check:
    started = time.perf_counter()
    try:
        counts = probe()
    except Exception as exc:
        logger.warning("health.check_failed store=%s error=%s", name, type(exc).__name__)
        return Check(ok=False, latency_ms=_ms(started), error=f"{type(exc).__name__}: {exc}"[:300])
    return Check(ok=True, latency_ms=_ms(started), counts=counts)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)


def _registry_counts(kb: KnowledgeBase) -> dict[str, int]:
    kb.registry.ping()
    sources = kb.registry.list_sources()
    revisions = [r for revs in kb.registry.revisions_by_source(sources).values() for r in revs]
    counts = {"policies": len(sources), "revisions": len(revisions)}
    for revision in revisions:
        counts[f"revisions_{revision.status.value}"] = counts.get(f"revisions_{revision.status.value}", 0) + 1
    return counts


def _object_counts(kb: KnowledgeBase) -> dict[str, int]:
    kb.objects.exists("health/probe")
    return {"policy_files": sum(1 for _ in islice(kb.objects.list("policies/"), MAX_COUNTED_FILES))}


def deep_health(kb: KnowledgeBase) -> DeepHealth:
    checks = {
        "redis": _timed("redis", lambda: _registry_counts(kb)),
        "chroma": _timed("chroma", lambda: {"policy_chunks": kb.vectors.count()}),
        "object_store": _timed("object_store", lambda: _object_counts(kb)),
    }
    cache = kb.vectors.cache
    return DeepHealth(
        status="ok" if all(c.ok for c in checks.values()) else "degraded",
        checks=checks,
        search_cache={
            "revisions": len(cache),
            "megabytes": round(cache.nbytes / 2**20, 1),
            "exact_searches": kb.vectors.exact_searches,
            "fallback_searches": kb.vectors.fallback_searches,
        },
    )
