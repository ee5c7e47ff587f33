"""What every flow shares: the knowledge base it works on, which failures earn a retry, artifact keys and
one-line log events.

A flow opens its ``KnowledgeBase`` once per run from the environment (a worker's settings), unless its
caller bound one with ``bound_kb``: the service's background runner and the tests do, so an in-process
run works on exactly the stores its caller uses. Tasks receive the knowledge base as an argument and
never cache (``NO_CACHE``): their inputs are live clients, not values.
"""

from __future__ import annotations

import json
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

from lib.config import load_settings
from lib.errors import ObjectStoreError, RegistryUnavailableError
from lib.kb import KnowledgeBase, open_kb

_bound_kb: ContextVar[KnowledgeBase | None] = ContextVar("policy_kb_flow_kb", default=None)

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
def bound_kb(kb: KnowledgeBase) -> Iterator[KnowledgeBase]:
    """Make flows started in this context (and threads copying it) work on ``kb``."""
    token = _bound_kb.set(kb)
    try:
        yield kb
    finally:
        _bound_kb.reset(token)


def flow_kb() -> KnowledgeBase:
    """The knowledge base a flow run works on: the bound one, else one opened from the environment."""
    return _bound_kb.get() or open_kb(load_settings())


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


def _format_value(value: object) -> str:
    text = str(value)
    if not text or any(ch.isspace() for ch in text) or "=" in text or '"' in text:
        return json.dumps(text, ensure_ascii=False)
    return text


def log_event(event: str, *, level: int = logging.INFO, **fields: object) -> None:
    """Log one event on one line: ``event key=value ...`` plus the flow run id, to the run's log when in a run."""
    run_id = flow_run.get_id()
    if run_id:
        fields = {**fields, "flow_run_id": run_id}
    line = " ".join([event, *(f"{key}={_format_value(value)}" for key, value in fields.items())])
    try:
        logger: logging.Logger | logging.LoggerAdapter[logging.Logger] = get_run_logger()
    except MissingContextError:
        logger = logging.getLogger("flows")
    logger.log(level, line)
