"""What an operator graphs, alerts on and traces: Prometheus metrics (``metrics``), OpenTelemetry spans
(``tracing``), and ``measured``, the one context manager the few instrumented places use for both.

Instrumented on purpose at a handful of places only (each search leg, the embedder, index loads, the three
stores' calls, ingestion's stages); the MCP SDK makes the server span of each request itself. Without an
``OTEL_EXPORTER_OTLP_ENDPOINT`` the tracer is OpenTelemetry's no-op one. Cost per call, measured:
``docs/decisions/0032-metrics-and-traces.md``.
"""

from lib.observability.instruments import measured, search_leg, store_call, store_calls, timed_load
from lib.observability.tracing import configure_tracing, span

__all__ = ["configure_tracing", "measured", "search_leg", "span", "store_call", "store_calls", "timed_load"]
