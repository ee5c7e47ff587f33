"""Liveness (``/health``: the process answers; no store is touched, no auth) and the deep check behind
``/api/v1/health``: Redis, Chroma and the object store each reached, timed and counted, and a cheap
consistency check of registry against Chroma (spec 001 NFR-004, "consistency check in health endpoint").

The consistency section compares counts only, never chunk contents: per registered revision, Chroma's
chunks with its ``revision_ref`` against the registry's ``chunk_count`` (``processing`` revisions are in
flight and not judged; ``failed`` ones should have none), and the collection's total against the sum of
those, whose difference is the orphan chunks (chunks of no registered revision). Only when there are
orphans are chunk metadata pages read, to name the revisions they claim. Both loops stop at
``CONSISTENCY_BUDGET_S`` and say so (``complete: false``). The full audit (stale metadata, missing and
unreferenced files, stuck revisions, repairs) stays in the ``consistency_audit`` flow. Counts are as read
now: a write in flight can show as a difference for one check, and inconsistency never turns the status
to ``degraded`` (that is for stores that do not answer).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from itertools import islice

from pydantic import BaseModel, Field
from starlette.requests import Request
from starlette.responses import JSONResponse

from lib.policies.audit import chunk_owner
from lib.policies.chunks import revision_ref
from lib.policies.models import RevisionStatus
from lib.policies.stores import PolicyStores

logger = logging.getLogger(__name__)

MAX_COUNTED_FILES = 10_000
CONSISTENCY_BUDGET_S = 2.0
MAX_NAMED_ORPHANS = 50


async def liveness(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


class Check(BaseModel):
    ok: bool
    latency_ms: float
    counts: dict[str, int] = Field(default_factory=dict)
    error: str = ""


class CountMismatch(BaseModel):
    source: str
    revision_id: str
    status: str
    registry_chunk_count: int = Field(description="0 expected for a failed revision")
    stored_chunks: int


class Consistency(BaseModel):
    """Registry against Chroma by counts (cheap); the full audit is the ``consistency_audit`` flow."""

    ok: bool = Field(description="No count mismatch and no orphan chunks (as far as checked)")
    complete: bool = Field(description="Every revision counted and every orphan named within the time budget")
    revisions_checked: int
    count_mismatches: list[CountMismatch] = Field(default_factory=list)
    orphan_chunks: int = Field(description="Chunks in Chroma that belong to no registered revision")
    orphan_revisions: list[str] = Field(
        default_factory=list, description="revision_ref (source:revision_id) values the orphan chunks carry"
    )
    latency_ms: float
    error: str = ""


class DeepHealth(BaseModel):
    status: str = Field(description="ok when every store answered, else degraded (HTTP 503)")
    checks: dict[str, Check]
    consistency: Consistency
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


def _registry_counts(stores: PolicyStores) -> dict[str, int]:
    stores.registry.ping()
    sources = stores.registry.list_sources()
    revisions = [r for revs in stores.registry.revisions_by_source(sources).values() for r in revs]
    counts = {"policies": len(sources), "revisions": len(revisions)}
    for revision in revisions:
        counts[f"revisions_{revision.status.value}"] = counts.get(f"revisions_{revision.status.value}", 0) + 1
    return counts


def _object_counts(stores: PolicyStores) -> dict[str, int]:
    stores.objects.exists("health/probe")
    return {"policy_files": sum(1 for _ in islice(stores.objects.list("policies/"), MAX_COUNTED_FILES))}


def consistency_check(stores: PolicyStores, budget_s: float = CONSISTENCY_BUDGET_S) -> Consistency:
    """Count mismatches and orphan chunks within ``budget_s`` seconds (see the module docstring)."""
    started = time.perf_counter()
    deadline = started + budget_s
    try:
        total = stores.vectors.count()
        revisions = [
            r for revs in stores.registry.revisions_by_source(stores.registry.list_sources()).values() for r in revs
        ]
        mismatches: list[CountMismatch] = []
        counted = checked = 0
        for rev in revisions:
            if time.perf_counter() > deadline:
                break
            stored = stores.vectors.count_revision(rev.source, rev.revision_id)
            counted += stored
            checked += 1
            expected = 0 if rev.status == RevisionStatus.FAILED else rev.chunk_count
            if rev.status != RevisionStatus.PROCESSING and stored != expected:
                mismatches.append(
                    CountMismatch(
                        source=rev.source,
                        revision_id=rev.revision_id,
                        status=rev.status.value,
                        registry_chunk_count=expected,
                        stored_chunks=stored,
                    )
                )
        complete = checked == len(revisions)
        orphans = max(0, total - counted) if complete else 0
        registered = {revision_ref(r.source, r.revision_id) for r in revisions}
        named, named_all = _orphan_revisions(stores, registered, deadline) if orphans else ([], True)
    except Exception as exc:
        logger.warning("health.consistency_failed error=%s", type(exc).__name__)
        return Consistency(
            ok=False,
            complete=False,
            revisions_checked=0,
            orphan_chunks=0,
            latency_ms=_ms(started),
            error=f"{type(exc).__name__}: {exc}"[:300],
        )
    return Consistency(
        ok=not mismatches and not orphans,
        complete=complete and (named_all or not orphans),
        revisions_checked=checked,
        count_mismatches=mismatches,
        orphan_chunks=orphans,
        orphan_revisions=named,
        latency_ms=_ms(started),
    )


def _orphan_revisions(stores: PolicyStores, registered: set[str], deadline: float) -> tuple[list[str], bool]:
    """The ``revision_ref`` values of chunks whose revision is not registered, read page by page until
    ``deadline``; and whether the whole collection was read."""
    found: set[str] = set()
    for _, meta in stores.vectors.iter_metadata():
        source, revision_id = chunk_owner(meta)
        ref = revision_ref(source, revision_id)
        if ref not in registered:
            found.add(ref)
        if time.perf_counter() > deadline or len(found) >= MAX_NAMED_ORPHANS:
            return sorted(found), False
    return sorted(found), True


def deep_health(stores: PolicyStores) -> DeepHealth:
    checks = {
        "redis": _timed("redis", lambda: _registry_counts(stores)),
        "chroma": _timed("chroma", lambda: {"policy_chunks": stores.vectors.count()}),
        "object_store": _timed("object_store", lambda: _object_counts(stores)),
    }
    cache = stores.vectors.cache
    return DeepHealth(
        status="ok" if all(c.ok for c in checks.values()) else "degraded",
        checks=checks,
        consistency=consistency_check(stores),
        search_cache={
            "revisions": len(cache),
            "megabytes": round(cache.nbytes / 2**20, 1),
            "exact_searches": stores.vectors.exact_searches,
            "fallback_searches": stores.vectors.fallback_searches,
        },
    )
