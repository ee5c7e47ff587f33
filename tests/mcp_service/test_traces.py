"""Spans, recorded by the OpenTelemetry SDK's in-memory exporter: a tool call made by the MCP SDK's client under
a span of the test's is one trace, from the client's span through the server's ``tools/call`` span (parented on
the ``traceparent`` the client put in the request's ``_meta``) down to the search legs and the Chroma query."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.mcp_service.conftest import Service
from tests.mcp_service.tools import call

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def spans() -> Iterator[InMemorySpanExporter]:
    """The process's tracer provider, set once (OpenTelemetry allows one); shut down after the module, so later
    tests' spans are not kept."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    assert trace.get_tracer_provider() is provider, "another tracer provider was set before this module"
    yield exporter
    provider.shutdown()


def one_trace(spans: Sequence[ReadableSpan], root: str) -> dict[str, ReadableSpan]:
    """The spans of the trace whose root span is named ``root``, by name (the first of each name)."""
    [top] = [s for s in spans if s.name == root]
    assert top.context is not None
    mine = [s for s in spans if s.context is not None and s.context.trace_id == top.context.trace_id]
    by_name: dict[str, ReadableSpan] = {}
    for s in mine:
        by_name.setdefault(s.name, s)
    return by_name


def ancestors(span: ReadableSpan, spans: Sequence[ReadableSpan]) -> list[str]:
    by_id = {s.context.span_id: s for s in spans if s.context is not None}
    names = []
    while span.parent is not None and span.parent.span_id in by_id:
        span = by_id[span.parent.span_id]
        names.append(span.name)
    return names


async def test_a_section_read_is_one_trace_from_the_client_to_the_chroma_query(
    spans: InMemorySpanExporter, nppf_service: Service
) -> None:
    spans.clear()
    with trace.get_tracer("test").start_as_current_span("agent asks"):
        out = await call(
            nppf_service.url,
            "get_policy_section",
            {"source": "NPPF", "section_ref": "Para 116", "effective_date": "2025-06-01"},
        )
    assert out["status"] == "success"
    finished = spans.get_finished_spans()
    named = one_trace(finished, "agent asks")
    server = named["tools/call get_policy_section"]
    assert server.kind == trace.SpanKind.SERVER
    assert server.attributes is not None and server.attributes["gen_ai.tool.name"] == "get_policy_section"
    assert "MCP send tools/call get_policy_section" in ancestors(server, finished)  # the client's _meta traceparent
    chroma = [s for s in named.values() if s.name.startswith("chroma ")]
    assert chroma, sorted(named)
    assert chroma[0].attributes is not None and chroma[0].attributes["db.system.name"] == "chromadb"
    assert ancestors(chroma[0], finished)[-1] == "agent asks"
    assert "tools/call get_policy_section" in ancestors(chroma[0], finished)


async def test_a_search_traces_each_leg_under_the_tool_call(spans: InMemorySpanExporter, nppf_service: Service) -> None:
    """The legs of real work (embed, dense, lexical) are spans under the tool call; the short ones (resolve, fuse)
    events on it, stamped and timed; the registry's Redis read a span of the same trace."""
    spans.clear()
    with trace.get_tracer("test").start_as_current_span("agent searches"):
        out = await call(nppf_service.url, "search_policy", {"query": f"parking standards {uuid.uuid4().hex[:8]}"})
    assert out["status"] == "success"
    finished = spans.get_finished_spans()
    named = one_trace(finished, "agent searches")
    for leg in ("search.embed", "search.dense", "search.lexical"):
        assert "tools/call search_policy" in ancestors(named[leg], finished), (leg, sorted(named))
    assert named["search.embed"].attributes == {"queries": 1}
    assert not any(name in named for name in ("search.resolve", "search.fuse")), sorted(named)
    server = named["tools/call search_policy"]
    events = {event.name: event for event in server.events}
    assert {"search.resolve", "search.fuse"} <= set(events), sorted(events)
    for event in (events["search.resolve"], events["search.fuse"]):
        assert event.attributes is not None and event.attributes["duration_ms"] >= 0
        assert "error.type" not in event.attributes
        assert server.start_time is not None and server.end_time is not None
        assert server.start_time <= event.timestamp <= server.end_time
    redis = [s for s in named.values() if s.name.startswith("redis ")]
    assert redis, sorted(named)
    assert redis[0].attributes is not None and redis[0].attributes["db.system.name"] == "redis"
    assert "tools/call search_policy" in ancestors(redis[0], finished)


async def test_a_failed_leg_is_marked_on_its_event(spans: InMemorySpanExporter, nppf_service: Service) -> None:
    spans.clear()
    with trace.get_tracer("test").start_as_current_span("agent asks for a missing policy"):
        out = await call(nppf_service.url, "search_policy", {"query": "parking", "sources": ["NOSUCHPOLICY"]})
    assert out["status"] == "error"
    named = one_trace(spans.get_finished_spans(), "agent asks for a missing policy")
    [resolve] = [e for e in named["tools/call search_policy"].events if e.name == "search.resolve"]
    assert resolve.attributes is not None and resolve.attributes["error.type"] == "PolicyNotFoundError"


CONFIGURE = """
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from lib.config import load_settings
from lib.observability import configure_tracing

assert not configure_tracing(load_settings().observability)  # no endpoint: nothing installed
assert not isinstance(trace.get_tracer_provider(), TracerProvider)
settings = load_settings(otel_exporter_otlp_endpoint="http://127.0.0.1:4317", otel_service_name="kb-test")
assert configure_tracing(settings.observability) and configure_tracing(settings.observability)  # once
provider = trace.get_tracer_provider()
assert isinstance(provider, TracerProvider), provider
assert provider.resource.attributes["service.name"] == "kb-test"
"""


def test_tracing_is_installed_only_when_an_otlp_endpoint_is_set() -> None:
    """In a process of its own: OpenTelemetry's provider can be set once per process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    subprocess.run([sys.executable, "-c", CONFIGURE], env=env, check=True, cwd=Path(__file__).resolve().parents[2])
