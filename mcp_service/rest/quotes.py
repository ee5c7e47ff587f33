"""The REST route of quote verification (issue 26): the same ``lib.policies.quotes.verify_quote`` call as the
MCP tool ``verify_quote``. Errors are raised and mapped once (``errors.install_error_handlers``)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from lib.policies.quotes import QuoteVerification, verify_quote
from lib.quotes.classify import MAX_QUOTE_CHARS
from mcp_service.rest.errors import error_responses
from mcp_service.rest.routes import Policies

router = APIRouter()


class QuoteRequest(BaseModel):
    quote: str = Field(max_length=MAX_QUOTE_CHARS, description="The passage as quoted")
    sources: list[str] | None = Field(default=None, description="Policy slugs to check; default every policy")
    effective_date: str | None = Field(default=None, description="YYYY-MM-DD; default today")


@router.post("/quotes/verify", response_model=QuoteVerification, tags=["policies"], responses=error_responses(400, 404))
def verify(body: QuoteRequest, stores: Policies) -> QuoteVerification:
    """Is the quote in the revision in force on the date: exact, normalised, close or not_found, with where;
    and the other revisions that hold it when the one in force does not."""
    return verify_quote(stores, body.quote, sources=body.sources, effective_date=body.effective_date)
