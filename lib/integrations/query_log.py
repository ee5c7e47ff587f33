"""One structured log line per governance query (spec 004 NF4), whichever interface asked: the MCP tool
over HTTP or stdio, ``GET /query``, the LangChain retriever and tool all call ``logged_query``.

The line is a JSON object on the ``governance.queries`` logger: ``timestamp`` (UTC, ISO 8601),
``interface``, ``caller`` (who asked, ``lib.callers``; never a token), ``question_sha256`` (the question
itself only when ``GOVERNANCE_LOG_QUESTIONS=true``: questions may carry what an agent was told in
confidence), ``top_k``, ``filters``, ``results``,
``latency_ms`` and ``outcome`` (``ok`` or the failure's ``error_type``). ``install_query_log_handler``
makes that logger write bare JSON lines to stderr, never stdout (the stdio transport's wire).
"""

from __future__ import annotations

import hashlib
import json
import logging
import sys
import time
from datetime import UTC, datetime
from typing import IO, Any

from lib.callers import current_caller
from lib.errors import KBError
from lib.governance.models import GovernanceAnswer
from lib.governance.search import query_governance
from lib.governance.stores import GovernanceStores

QUERY_LOGGER = "governance.queries"
logger = logging.getLogger(QUERY_LOGGER)


class _JsonLines(logging.StreamHandler):
    """Marks the handler ``install_query_log_handler`` adds, so installing twice adds it once."""


def install_query_log_handler(stream: IO[str] | None = None) -> None:
    """Write the query log as bare JSON lines to ``stream`` (stderr) and not through the root logger's
    prefixed format. Idempotent; the service and the stdio server call it at start-up."""
    if any(isinstance(h, _JsonLines) for h in logger.handlers):
        return
    handler = _JsonLines(stream or sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


def question_hash(question: str) -> str:
    return hashlib.sha256(question.encode()).hexdigest()


def logged_query(
    stores: GovernanceStores,
    question: str,
    *,
    interface: str,
    top_k: int = 5,
    doc_types: list[str] | None = None,
    as_of: str | None = None,
    include_inactive: bool = False,
    mode: str = "hybrid",
) -> GovernanceAnswer:
    """``query_governance`` with its log line; errors are logged with their type and re-raised."""
    started = time.perf_counter()
    record: dict[str, Any] = {
        "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "event": "governance.query",
        "interface": interface,
        "caller": current_caller.get(),
        "question_sha256": question_hash(question),
        "top_k": top_k,
        "filters": {"doc_types": doc_types, "as_of": as_of, "include_inactive": include_inactive, "mode": mode},
    }
    if stores.settings.governance.log_questions:
        record["question"] = question
    try:
        answer = query_governance(
            stores,
            question,
            top_k=top_k,
            doc_types=doc_types,
            as_of=as_of,
            include_inactive=include_inactive,
            mode=mode,
        )
    except Exception as exc:
        outcome = exc.error_type if isinstance(exc, KBError) else "internal"
        _write(record, results=0, started=started, outcome=outcome)
        raise
    _write(record, results=len(answer.results), started=started, outcome="ok")
    return answer


def _write(record: dict[str, Any], *, results: int, started: float, outcome: str) -> None:
    latency_ms = round((time.perf_counter() - started) * 1000, 2)
    logger.info(json.dumps({**record, "results": results, "latency_ms": latency_ms, "outcome": outcome}))
