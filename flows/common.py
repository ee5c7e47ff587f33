"""What every flow shares: the stores it works on, which failures earn a retry, artifact keys and one-line
log events.

A flow opens its ``Stores`` (``lib.composition``) once per run from the environment (a worker's settings),
unless its caller bound them with ``bound_stores``: the service's background runner and the tests do, so an
in-process run works on exactly the stores its caller uses. Tasks receive their domain's stores as an
argument and never cache (``NO_CACHE``): their inputs are live clients, not values.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import httpx
import redis
from chromadb.errors import RateLimitError
from prefect import Task
from prefect.cache_policies import NO_CACHE
from prefect.client.schemas.objects import TaskRun
from prefect.exceptions import MissingContextError
from prefect.logging import get_run_logger
from prefect.runtime import flow_run
from prefect.states import State
from prefect.tasks import exponential_backoff

from lib.composition import Stores, open_stores
from lib.config import load_settings
from lib.errors import ObjectStoreError, RegistryUnavailableError
from lib.logs import event_line
from lib.observability import configure_tracing

_bound_stores: ContextVar[Stores | None] = ContextVar("policy_kb_flow_stores", default=None)

TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    RegistryUnavailableError,
    ObjectStoreError,
    redis.ConnectionError,
    redis.TimeoutError,
    httpx.TransportError,
    RateLimitError,
    ConnectionError,
    TimeoutError,
)
"""Failures of a store that may well succeed a little later. Everything else (a bad PDF, an unknown
revision, a date overlap) fails the same way every time, so retrying it only delays the report."""

_KEY_UNSAFE = re.compile(r"[^a-z0-9]+")
_MAX_KEY_LENGTH = 120


@contextmanager
def bound_stores(stores: Stores) -> Iterator[Stores]:
    """Make flows started in this context (and threads copying it) work on ``stores``."""
    token = _bound_stores.set(stores)
    try:
        yield stores
    finally:
        _bound_stores.reset(token)


def flow_stores() -> Stores:
    """The stores a flow run works on: the bound ones, else ones opened from the environment (a flow-run process
    of a worker or ``deployments/serve.py``, whose spans, Prefect's task runs' among them, are then exported when
    ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set; that run's own flow span started before and is not)."""
    bound = _bound_stores.get()
    if bound is not None:
        return bound
    settings = load_settings()
    configure_tracing(settings.observability)
    return open_stores(settings)


def is_transient(exc: BaseException) -> bool:
    """A transient store failure, directly or as the cause of the error raised."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, TRANSIENT_ERRORS):
            return True
        seen = seen.__cause__
    return False


def retry_transient(task: Task[..., Any], task_run: TaskRun, state: State[Any]) -> bool:
    """``retry_condition_fn`` for I/O tasks: retry a store outage, never a permanent error."""
    try:
        state.result()
    except Exception as exc:
        return is_transient(exc)
    return False


IO_TASK_OPTIONS: dict[str, Any] = {
    "retries": 3,
    "retry_delay_seconds": exponential_backoff(backoff_factor=2),
    "retry_jitter_factor": 0.5,
    "retry_condition_fn": retry_transient,
    "cache_policy": NO_CACHE,
}
"""Options of every task that talks to Redis, Chroma or the object store: 2, 4, 8 s (± jitter) apart."""

PURE_TASK_OPTIONS: dict[str, Any] = {"cache_policy": NO_CACHE}


def artifact_key(*parts: str) -> str:
    """A stable artifact key (lowercase letters, digits and dashes) from e.g. a flow name, source and revision."""
    key = "-".join(_KEY_UNSAFE.sub("-", part.lower()).strip("-") for part in parts if part)
    return key[:_MAX_KEY_LENGTH].strip("-")


def log_event(event: str, *, level: int = logging.INFO, **fields: object) -> None:
    """Log one event on one line: ``event key=value ...`` plus the flow run id, to the run's log when in a run."""
    run_id = flow_run.get_id()
    if run_id:
        fields = {**fields, "flow_run_id": run_id}
    line = event_line(event, **fields)
    try:
        logger: logging.Logger | logging.LoggerAdapter[logging.Logger] = get_run_logger()
    except MissingContextError:
        logger = logging.getLogger("flows")
    logger.log(level, line)
