"""Spans: exported over OTLP/gRPC when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set, else OpenTelemetry's no-op
tracer (a span then costs a context switch and nothing is kept).

The provider is process-wide (OpenTelemetry's global, which the MCP SDK's and Prefect's spans use too), so
a trace runs from the SDK's ``tools/call`` server span, parented on the client's ``traceparent`` in the
request's ``_meta`` when it sends one, down to the Chroma query. ``configure_tracing`` sets it once per
process, at each entry point (a server app, the flows' process).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

from opentelemetry import context, trace
from opentelemetry.trace import INVALID_SPAN, ProxyTracerProvider, Span, Status, StatusCode
from opentelemetry.util.types import Attributes, AttributeValue

if TYPE_CHECKING:
    from lib.config import ObservabilitySettings

logger = logging.getLogger(__name__)

TRACER_NAME = "policy_kb"
_tracer = trace.get_tracer(TRACER_NAME)
_configured = threading.Lock()
_done = False


def configure_tracing(settings: ObservabilitySettings) -> bool:
    """Install the OTLP exporter once per process when an endpoint is set; whether tracing is on.

    Without an endpoint nothing is installed, so a provider set by someone else (a test's in-memory one)
    is left alone and the process otherwise stays on the no-op tracer."""
    global _done
    if not settings.otlp_endpoint:
        return False
    with _configured:
        if _done:
            return True
        # Imported only when tracing is on: the SDK and gRPC slow a start that does not use them (docs/performance.md).
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({SERVICE_NAME: settings.service_name}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=settings.otlp_endpoint)))
        trace.set_tracer_provider(provider)
        _done = True
    logger.info("tracing.on endpoint=%s service=%s", settings.otlp_endpoint, settings.service_name)
    return True


def tracing_on() -> bool:
    """Whether a tracer provider is set (the OTLP one, a test's): until then no span is made at all."""
    return not isinstance(trace.get_tracer_provider(), ProxyTracerProvider)


@contextmanager
def span(name: str, attributes: Attributes = None, *, current: bool = True) -> Iterator[Span]:
    """A child span of the current one, named ``name``, with ``attributes`` set as it starts (one dict: cheaper
    than ``set_attribute`` calls); an exception is recorded on it and re-raised. With ``current`` it is the current
    span inside (what a child span then hangs on); without, the context is left alone: for a leaf such as a store
    command, nothing below it to parent. While no tracer provider is set (no endpoint, no test's), nothing at
    all: not even OpenTelemetry's no-op span, whose context switch costs more than the metrics of a whole call.

    ``start_span`` and ``attach`` by hand rather than ``start_as_current_span``: the same span, without its two
    nested generator context managers, a third of an SDK span's cost here (docs/decisions/0032)."""
    if isinstance(trace.get_tracer_provider(), ProxyTracerProvider):
        yield INVALID_SPAN
        return
    started = _tracer.start_span(name, attributes=attributes)
    token = context.attach(trace.set_span_in_context(started)) if current else None
    try:
        yield started
    except Exception as exc:  # as OpenTelemetry's use_span: not a GeneratorExit or a cancellation
        started.record_exception(exc)
        started.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
        raise
    finally:
        if token is not None:
            context.detach(token)
        started.end()


@contextmanager
def span_event(name: str, attributes: Mapping[str, AttributeValue] | None = None) -> Iterator[None]:
    """A step too short for a span of its own (microseconds of work): an event ``name`` on the current span,
    stamped when the step started, with its ``duration_ms`` (and ``error.type`` when it raised). A quarter of a
    span's cost, and what a trace shows of the step is the same: when, how long, whether it failed. Nothing at
    all while no tracer provider is set."""
    if isinstance(trace.get_tracer_provider(), ProxyTracerProvider):
        yield
        return
    started = time.time_ns()
    failed: str | None = None
    try:
        yield
    except Exception as exc:
        failed = type(exc).__name__
        raise
    finally:
        recorded: dict[str, AttributeValue] = dict(attributes) if attributes else {}
        recorded["duration_ms"] = (time.time_ns() - started) / 1e6
        if failed is not None:
            recorded["error.type"] = failed
        trace.get_current_span().add_event(name, recorded, timestamp=started)
