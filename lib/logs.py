"""The one log format of the service, the CLI and the flows: one event per line, ``event key=value ...``.

A line reads ``<time> <LEVEL> <logger> <event> key=value ...``: the event's dotted name first
(``redis.embedded_started``, ``documents.ingested``), then the ids a reader needs to find what it is about
(source, revision, document, flow run) and its figures. ``configure_logging`` installs it on the root
logger, once per process, on stderr (never stdout: the stdio transport's wire); ``event_line`` renders an
event with its fields, quoting values that hold spaces, ``=`` or quotes.

Two streams keep their own shape on purpose: the governance query log (``lib.integrations.query_log``), a
bare JSON object per query that spec 004 (NF4) asks for and tools read; and Prefect's own loggers, which
keep Prefect's handlers (so a flow's events also reach the run's log in Prefect's UI), with the same
``event key=value`` messages.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"


def configure_logging(level: int = logging.INFO) -> None:
    """Log ``LOG_FORMAT`` lines at ``level`` to stderr, unless this process's logging is already set up
    (the CLI's callback ran first, or a host such as pytest installed its handlers)."""
    if not logging.getLogger().handlers:
        logging.basicConfig(level=level, format=LOG_FORMAT, stream=sys.stderr)


QUIET_LIBRARIES = ("httpx", "httpcore", "chromadb", "botocore", "urllib3")
"""Libraries that log each outgoing request (or more) at INFO: a service's own INFO events must not drown in
them (a replica calls Chroma and Redis on every search)."""


def configure_service_logging() -> None:
    """A server process logs its own events at INFO (``audit.write``, ``service.*``, ``tool.failed``): they are
    its record, and the CLI's other commands stay quiet at WARNING (``policy-kb serve`` runs after the CLI's
    callback set the root logger to WARNING, which silenced every write's audit line)."""
    configure_logging()
    root = logging.getLogger()
    if root.level == logging.NOTSET or root.level > logging.INFO:
        root.setLevel(logging.INFO)
    for name in QUIET_LIBRARIES:
        library = logging.getLogger(name)
        if library.level == logging.NOTSET:
            library.setLevel(logging.WARNING)


UVICORN_LOG_CONFIG: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"events": {"format": LOG_FORMAT}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "events", "stream": "ext://sys.stderr"}},
    "loggers": {
        "uvicorn": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        "uvicorn.error": {"level": "INFO"},
        "uvicorn.access": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
    },
}
"""uvicorn's own loggers in this format (its default configuration's loggers and levels, not its formatters);
uvicorn applies it in every worker process it starts."""


def _value(value: object) -> str:
    text = str(value)
    if not text or any(ch.isspace() for ch in text) or "=" in text or '"' in text:
        return json.dumps(text, ensure_ascii=False)
    return text


def event_line(event: str, **fields: object) -> str:
    """``event key=value ...``: one event on one line."""
    return " ".join([event, *(f"{key}={_value(value)}" for key, value in fields.items())])
