"""One place maps outcomes to the spec's envelope: success, a ``KBError``, and a crash that must stay private."""

from __future__ import annotations

import logging

import pytest

from lib.errors import SectionNotFoundError
from mcp_service.tools.envelope import INTERNAL_MESSAGE, run_tool

pytestmark = pytest.mark.anyio


async def test_success_is_structured_and_its_text_a_rendering() -> None:
    result = await run_tool("t", lambda: {"policy_count": 0, "policies": []})
    assert result.structured_content == {"status": "success", "policy_count": 0, "policies": []}
    assert result.content[0].text == "policy_count: 0" and not result.is_error


async def test_a_kb_error_keeps_its_type_and_message() -> None:
    def fail() -> dict:
        raise SectionNotFoundError("Section 'Para 9' not found", source="NPPF")

    result = await run_tool("get_policy_section", fail)
    assert result.is_error
    assert result.structured_content == {
        "status": "error",
        "error_type": "section_not_found",
        "message": "Section 'Para 9' not found",
    }


async def test_a_crash_is_internal_logged_with_its_traceback_and_never_shown(caplog: pytest.LogCaptureFixture) -> None:
    def crash() -> dict:
        raise RuntimeError("connection string postgres://user:hunter2@db")

    with caplog.at_level(logging.ERROR, logger="mcp_service.tools.envelope"):
        result = await run_tool("search_policy", crash)
    assert result.structured_content == {"status": "error", "error_type": "internal", "message": INTERNAL_MESSAGE}
    assert "hunter2" not in result.content[0].text
    record = next(r for r in caplog.records if r.name == "mcp_service.tools.envelope")
    assert record.levelno == logging.ERROR and record.exc_info is not None and "search_policy" in record.getMessage()
