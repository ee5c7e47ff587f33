"""The query log (spec 004 NF4): one JSON line per query, whichever interface asked, with a hash of the
question (the question itself only with GOVERNANCE_LOG_QUESTIONS=true), top_k, filters, result count,
latency and outcome. The stdio transport's line is checked in ``test_governance_stdio``."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from lib.errors import InvalidDateError
from lib.integrations.query_log import QUERY_LOGGER, logged_query
from tests.mcp_service.conftest import Service, mcp_session

QUESTION = "Which manylinux platform tag should a Linux wheel use?"


@pytest.fixture
def query_log() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger(QUERY_LOGGER)
    logger.addHandler(handler)
    try:
        yield stream
    finally:
        logger.removeHandler(handler)


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


@pytest.mark.anyio
async def test_mcp_and_rest_queries_each_write_one_json_line_without_the_question(
    governance_service: Service, query_log: io.StringIO
) -> None:
    async with mcp_session(governance_service.url, key=None) as session:
        await session.call_tool("query_governance", {"question": QUESTION, "top_k": 3, "as_of": "2017-06-01"})
        await session.call_tool("list_governance_documents", {})
    params = {"q": QUESTION, "top_k": 2, "type": "informational", "include_inactive": "true", "mode": "lexical"}
    httpx.get(f"{governance_service.url}/query", params=params, timeout=30).raise_for_status()
    mcp, rest = lines(query_log)
    digest = hashlib.sha256(QUESTION.encode()).hexdigest()
    assert mcp["interface"] == "mcp" and rest["interface"] == "rest"
    assert mcp["caller"] == rest["caller"] == "ip:127.0.0.1"  # no auth here: the client's address
    for line in (mcp, rest):
        assert line["question_sha256"] == digest and "question" not in line
        assert line["timestamp"].endswith("Z") and line["latency_ms"] > 0 and line["outcome"] == "ok"
    assert (mcp["top_k"], mcp["results"]) == (3, 3)
    assert mcp["filters"] == {"doc_types": None, "as_of": "2017-06-01", "include_inactive": False, "mode": "hybrid"}
    assert rest["filters"] == {
        "doc_types": ["informational"],
        "as_of": None,
        "include_inactive": True,
        "mode": "lexical",
    }


def test_a_failed_query_is_logged_with_its_error_type_and_the_question_only_when_asked_for(
    governance_service: Service, query_log: io.StringIO
) -> None:
    settings = governance_service.settings.replace(governance_log_questions=True)
    stores = dataclasses.replace(governance_service.stores.governance, settings=settings)
    with pytest.raises(InvalidDateError):
        logged_query(stores, QUESTION, interface="test", as_of="not a date")
    [line] = lines(query_log)
    assert (line["question"], line["results"], line["outcome"]) == (QUESTION, 0, "invalid_date")
