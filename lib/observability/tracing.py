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
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from opentelemetry import trace
from opentelemetry.trace import INVALID_SPAN, ProxyTracerProvider, Span

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
        # Imported only when tracing is on: the SDK and gRPC add ~0.3 s to a start that does not use them.
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


@contextmanager
def span(name: str, **attributes: str | int | float | bool) -> Iterator[Span]:
    """A child span of the current one, named ``name``; an exception is recorded on it and re-raised. While no
    tracer provider is set (no endpoint, no test's), nothing at all: not even OpenTelemetry's no-op span, whose
    context switch costs more than the metrics of a whole call (docs/decisions/0032)."""
    if isinstance(trace.get_tracer_provider(), ProxyTracerProvider):
        yield INVALID_SPAN
        return
    with _tracer.start_as_current_span(name, attributes=attributes or None) as current:
        yield current
