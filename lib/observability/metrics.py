"""The process's Prometheus metrics, named by Prometheus' rules (``_seconds``, ``_total``, base units) and, where
OpenTelemetry's MCP semantic conventions name a metric, by theirs: ``mcp.server.operation.duration`` is
``mcp_server_operation_duration_seconds`` with its attributes as labels (``mcp_method_name``,
``gen_ai_tool_name``, ``error_type``). Labels are few and bounded: server, tool, outcome (``success`` or the
envelope's ``error_type``), search leg and mode, cache, store, pipeline and stage; never a query, a key or an id.

With several worker processes (``PROMETHEUS_MULTIPROC_DIR`` set before this module is imported) every
value is kept in that folder's files and ``/metrics`` sums them (``lib.observability.exposition``).
"""

from __future__ import annotations

from typing import Any

from prometheus_client import Counter, Histogram

OPERATION_BUCKETS = (
    0.001,
    0.0025,
    0.005,
    0.01,
    0.02,
    0.05,
    0.1,
    0.2,
    0.5,
    1.0,
    2.0,
    5.0,
    10.0,
    30.0,
    60.0,
    120.0,
    300.0,
)
"""OpenTelemetry's advice for ``mcp.server.operation.duration`` (0.01 … 300 s) with the millisecond range a
warm search answers in added below it."""

LEG_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
STAGE_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)

operation_duration = Histogram(
    "mcp_server_operation_duration_seconds",
    "MCP request duration as the server saw it (OpenTelemetry mcp.server.operation.duration)",
    ["server", "mcp_method_name", "gen_ai_tool_name", "error_type"],
    buckets=OPERATION_BUCKETS,
)
tool_calls = Counter(
    "policy_kb_tool_calls",
    "Tool calls by outcome: success, or the error envelope's error_type",
    ["server", "tool", "outcome"],
)
search_leg_duration = Histogram(
    "policy_kb_search_leg_duration_seconds",
    "Time in one leg of a search: resolve (which revisions), embed, dense, lexical, fuse",
    ["leg"],
    buckets=LEG_BUCKETS,
)
searches = Counter("policy_kb_searches", "Searches by store and mode (one per query)", ["domain", "mode"])
index_loads = Counter(
    "policy_kb_index_loads", "Corpus index slices loaded (load: a search waited; refresh: ahead of expiry)", ["kind"]
)
index_load_duration = Histogram(
    "policy_kb_index_load_duration_seconds",
    "Time to load or refresh one corpus index slice",
    ["kind"],
    buckets=LEG_BUCKETS,
)
cache_lookups = Counter("policy_kb_cache_lookups", "Lookups in a process cache", ["cache"])
cache_misses = Counter(
    "policy_kb_cache_misses", "Lookups a process cache could not answer (hit ratio: 1 - misses / lookups)", ["cache"]
)
store_errors = Counter(
    "policy_kb_store_errors", "Calls to a store that failed (redis, chroma, objects), by store", ["store"]
)
upload_bytes = Counter("policy_kb_upload_bytes", "Bytes received in uploads, by kind of upload", ["kind"])
ingestion_chunks = Counter("policy_kb_ingestion_chunks", "Chunks written by ingestion, by pipeline", ["pipeline"])
ingestion_stage = Histogram(
    "policy_kb_ingestion_stage_seconds",
    "Seconds one ingestion run spent in a stage (total: the whole run), by pipeline",
    ["pipeline", "stage"],
    buckets=STAGE_BUCKETS,
)
rate_limited = Counter(
    "policy_kb_rate_limited",
    "Requests refused with 429 because the caller was over its budget (RATE_LIMIT_PER_MINUTE), by server",
    ["server"],
)
admission_refused = Counter(
    "policy_kb_admission_refused",
    "Search tool calls the admission gate in front of /mcp refused with 503 (the work already admitted would make "
    "them wait past SEARCH_ADMISSION_WAIT_MS), by server",
    ["server"],
)
audit_findings = Counter(
    "policy_kb_audit_findings",
    "Findings of consistency audits run in this process, by store and kind",
    ["store", "kind"],
)


_LOOKUP_COUNTERS: dict[str, tuple[Any, Any]] = {}


def count_lookup(cache: str, *, hit: bool, times: int = 1) -> None:
    """``times`` lookups of ``cache``, all hits or all misses."""
    counters = _LOOKUP_COUNTERS.get(cache)
    if counters is None:  # ``labels`` takes a lock and builds a key; a handful of caches, bound once each
        counters = _LOOKUP_COUNTERS.setdefault(cache, (cache_lookups.labels(cache), cache_misses.labels(cache)))
    if times:
        counters[0].inc(times)
        if not hit:
            counters[1].inc(times)


def record_ingestion(pipeline: str, chunks: int, seconds: dict[str, float]) -> None:
    """One ingestion run: its chunks and the seconds of each stage it reports."""
    ingestion_chunks.labels(pipeline).inc(chunks)
    for stage, value in seconds.items():
        ingestion_stage.labels(pipeline, stage).observe(value)


def record_audit(store: str, counts: dict[str, int]) -> None:
    """One audit's findings per kind (kinds with none add nothing, but appear, so a rate is defined)."""
    for kind, count in counts.items():
        audit_findings.labels(store, kind).inc(count)
