"""What metrics and traces cost per tool call: the instrumentation one hybrid ``search_policy`` call runs, timed
in process around empty work, in four modes.

Per call the service runs (counted from a real call's scrape, ``tests/mcp_service/test_metrics.py``): the
operation middleware (``OperationMetrics``: one histogram observation, one counter), five search legs
(``measured``: a histogram observation each; a span for embed, dense and lexical, an event on the current span
for resolve and fuse), one Redis command inside resolve (``store_call``: a span), four cache lookups
(``count_lookup``) and one search counted, all inside the MCP SDK's own server span (there in every mode: the SDK
makes it). The work inside is empty, so what is timed is the instrumentation alone:

- ``bare``: the same calls with every instrumentation helper replaced by a no-op (the floor: Python calls);
- ``metrics``: the real helpers, spans and events replaced by a no-op context (metrics only);
- ``shipped``: the real helpers as a process without ``OTEL_EXPORTER_OTLP_ENDPOINT`` runs them (metrics, and
  OpenTelemetry's no-op tracer);
- ``tracing``: the real helpers under the SDK's ``TracerProvider`` with a ``BatchSpanProcessor`` whose
  exporter drops every batch (tracing on, the export itself left out: it runs on the processor's thread).

Metrics cost = metrics − bare; no-op tracing cost = shipped − metrics; tracing cost = tracing − metrics.
Medians of ``--repeats`` runs of ``--calls`` calls each, wall clock (this machine is shared: CPU time printed too).

    .venv/bin/python benchmarks/observability.py [--calls 20000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mcp.server.context import ServerRequestContext  # noqa: E402
from mcp_types import Tool  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult  # noqa: E402

SDK_TRACER = trace.get_tracer("mcp-python-sdk")
"""The tracer the SDK's server span comes from (its ``mcp.shared._otel``, private, opens the same span)."""

import lib.observability.instruments as instruments  # noqa: E402
from lib.observability import measured, store_call  # noqa: E402
from lib.observability.metrics import count_lookup, searches  # noqa: E402
from mcp_service.observability.operations import OperationMetrics  # noqa: E402

LEGS = ("resolve", "embed", "dense", "lexical", "fuse")
LOOKUPS = (("query_embeddings", False), ("corpus_index", True), ("answers", False), ("answers", False))


class Dropped(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


async def _tools() -> list[Tool]:
    return [Tool(name="search_policy", input_schema={"type": "object"})]


async def _answer(ctx: Any) -> dict[str, Any]:
    return {"content": [], "structuredContent": {"status": "success"}}


def _drive(coroutine: Any) -> Any:
    """Run a coroutine that never suspends, without an event loop's per-call cost."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    raise RuntimeError("the coroutine suspended")


def call_path(instrumented: bool) -> Callable[[], None]:
    middleware = OperationMetrics("policy-kb-mcp", _tools)
    ctx = ServerRequestContext.__new__(ServerRequestContext)
    ctx.method, ctx.params = "tools/call", {"name": "search_policy", "arguments": {}}
    asyncio.run(middleware(ctx, _answer))  # the tool names, read once

    @contextlib.contextmanager
    def nothing(*args: object, **kwargs: object) -> Iterator[None]:
        yield

    leg = measured if instrumented else nothing
    store = store_call if instrumented else nothing
    lookup = count_lookup if instrumented else (lambda cache, *, hit: None)
    search_counter = searches.labels("policies", "hybrid")

    def work() -> None:
        for name in LEGS:
            with leg(name):
                if name == "resolve":
                    with store("redis", "GET"):
                        pass
        for cache, hit in LOOKUPS:
            lookup(cache, hit=hit)
        if instrumented:
            search_counter.inc()

    async def tool(ctx: Any) -> dict[str, Any]:
        work()
        return await _answer(ctx)

    async def server(ctx: Any) -> Any:
        # The MCP SDK's server span is in every mode: the SDK makes it whatever this project does.
        with SDK_TRACER.start_as_current_span("tools/call search_policy", kind=trace.SpanKind.SERVER):
            return await (middleware(ctx, tool) if instrumented else tool(ctx))

    return lambda: _drive(server(ctx))


@contextlib.contextmanager
def no_span(*args: object, **kwargs: object) -> Iterator[None]:
    yield


def timed(call: Callable[[], None], calls: int, repeats: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(calls):
            call()
        walls.append((time.perf_counter() - wall) / calls * 1e6)
        cpus.append((time.process_time() - cpu) / calls * 1e6)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    results: dict[str, tuple[float, float]] = {}
    results["bare"] = timed(call_path(False), args.calls, args.repeats)
    real = instruments.span, instruments.span_event, instruments.tracing_on
    instruments.span = instruments.span_event = no_span  # type: ignore[assignment]
    instruments.tracing_on = lambda: False
    results["metrics"] = timed(call_path(True), args.calls, args.repeats)
    instruments.span, instruments.span_event, instruments.tracing_on = real
    results["shipped"] = timed(call_path(True), args.calls, args.repeats)
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Dropped(), max_queue_size=65536))
    trace.set_tracer_provider(provider)
    results["tracing"] = timed(call_path(True), args.calls, args.repeats)
    provider.shutdown()

    print(f"{'mode':<10} {'µs/call wall':>13} {'µs/call CPU':>12}")
    for mode, (wall, cpu) in results.items():
        print(f"{mode:<10} {wall:>13.1f} {cpu:>12.1f}")
    for column, what in ((1, "CPU"), (0, "wall")):
        metrics = results["metrics"][column] - results["bare"][column]
        noop = results["shipped"][column] - results["metrics"][column]
        tracing = results["tracing"][column] - results["metrics"][column]
        print(
            f"{what}: metrics {metrics / 1000:.4f} ms/call (goal ≤ 0.1), tracing off {noop / 1000:.4f} ms/call, "
            f"tracing on (SDK, export dropped) {tracing / 1000:.4f} ms/call (goal ≤ 0.3)"
        )


if __name__ == "__main__":
    main()
