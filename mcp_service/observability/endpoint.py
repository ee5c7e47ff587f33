"""``GET /metrics``: the process's metrics in Prometheus' text format, plus what a server adds at scrape time
(``collectors``: the policy registry's revision counts).

Behind the service's bearer auth like every route but ``/health``; with ``METRICS_API_KEY`` set, ``/metrics``
is exempt from it and takes that key instead (a scraper then holds no key that reads the knowledge base).
With ``PROMETHEUS_MULTIPROC_DIR`` set (several worker processes), the values of every worker's files are
summed (prometheus-client's ``MultiProcessCollector``); the process collector (memory, CPU, open files) would
then be this worker's alone, so every worker's figures are read instead, labelled ``pid`` (``processes``).
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, Sequence
from functools import partial

import anyio.to_thread
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lib.config import ObservabilitySettings
from mcp_service.observability.processes import WorkerProcesses


def exposition(settings: ObservabilitySettings, collectors: Sequence[Collector] = ()) -> bytes:
    """The text a scrape reads: every metric of this process (of every worker, in multiprocess mode)."""
    if settings.multiproc_dir is not None:
        merged = CollectorRegistry()
        MultiProcessCollector(merged, path=str(settings.multiproc_dir))
        merged.register(WorkerProcesses(settings.multiproc_dir))
        text = generate_latest(merged)
    else:
        text = generate_latest(REGISTRY)
    if collectors:
        own = CollectorRegistry(auto_describe=False)
        for collector in collectors:
            own.register(collector)
        text += generate_latest(own)
    return text


def metrics_endpoint(
    settings: ObservabilitySettings, collectors: Sequence[Collector] = ()
) -> Callable[[Request], Awaitable[Response]]:
    key = settings.metrics_api_key.get_secret_value().encode() if settings.metrics_api_key else None

    async def metrics(request: Request) -> Response:
        if key is not None and not _presents(request.headers, key):
            return JSONResponse(
                {"error": {"code": "unauthorized", "message": "/metrics needs METRICS_API_KEY as a bearer token"}},
                401,
                headers={"WWW-Authenticate": 'Bearer realm="policy-kb-metrics"'},
            )
        # Off the event loop: a collector may read Redis (the registry's revisions).
        text = await anyio.to_thread.run_sync(partial(exposition, settings, collectors))
        return Response(text, media_type=CONTENT_TYPE_LATEST)

    return metrics


def _presents(headers: Headers, key: bytes) -> bool:
    scheme, _, token = headers.get("authorization", "").strip().partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), key)
