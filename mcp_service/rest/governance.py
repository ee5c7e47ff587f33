"""REST on the governance server's port (spec 004 F3, F4, F7): ``GET /query`` for any agent that speaks
HTTP but not MCP, and ``GET /health`` that also says whether the index is built.

    GET /query?q=...&top_k=5[&type=adr&type=prd][&as_of=YYYY-MM-DD][&include_inactive=true][&mode=hybrid]
        200 {query, top_k, as_of, mode, results: [{text, score, dense_score, lexical_score, metadata}], took_ms}
        422 validation_error (no q, top_k outside 1..20), 400 invalid_date, 503 index_not_built
    GET /health
        200 {status: healthy, index_loaded, index: {built, documents, chunks, last_updated}, hint}
        (spec 004's two fields first); 503 {status: degraded, index_loaded: false, error} when a store fails

``/query`` is the MCP tool's query (``logged_query``, so it writes the same log line) under the REST
error body of ``rest.errors``. ``/health`` stays 200 while the index is empty: the process is alive and
answers ``index_not_built``; a monitor reads ``index_loaded``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Annotated, Literal

import anyio.to_thread
from fastapi import FastAPI, Query
from pydantic import BaseModel, Field
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lib.governance.models import GovernanceHit, IndexState
from lib.governance.reads import governance_index_state
from lib.governance.search import INGEST_COMMAND, MAX_TOP_K
from lib.governance.stores import GovernanceStores
from lib.integrations.query_log import logged_query
from mcp_service.rest.errors import error_responses, install_error_handlers
from mcp_service.rest.marking import DocumentMarkedJSONResponse
from mcp_service.rest.openapi import document_security
from mcp_service.search_lane import run_search
from mcp_service.tools.governance.tools import DEFAULT_TOP_K

logger = logging.getLogger(__name__)


class QueryResponse(BaseModel):
    query: str
    top_k: int
    as_of: str
    mode: str
    results: list[GovernanceHit]
    took_ms: float = Field(description="Time spent answering, in the server")


class GovernanceHealth(BaseModel):
    """Spec 004's ``{"status": "healthy", "index_loaded": ...}``, with what a monitor also wants to know."""

    status: str = Field(description="healthy, or degraded (HTTP 503) when the stores did not answer")
    index_loaded: bool = Field(description="Whether the index is built: queries answer instead of index_not_built")
    index: IndexState | None = None
    hint: str = Field(default="", description="What to do when the index is not built")
    error: str = ""


def create_governance_rest_app(stores: GovernanceStores) -> FastAPI:
    app = FastAPI(
        title="governance REST API",
        version="1.0",
        description="Retrieval over governance documents (spec 004). Errors: {'error': {code, message, details}}.",
        openapi_url="/openapi.json",
        docs_url=None,
        redoc_url=None,
        default_response_class=DocumentMarkedJSONResponse,
    )
    install_error_handlers(app)
    document_security(app)

    @app.get("/query", response_model=QueryResponse, responses=error_responses(400, 422, 503))
    async def query(
        q: Annotated[str, Query(min_length=1, description="The question")],
        top_k: Annotated[int, Query(ge=1, le=MAX_TOP_K, description="How many passages, best first")] = DEFAULT_TOP_K,
        type: Annotated[list[str] | None, Query(description="Only these document types (repeatable)")] = None,
        as_of: Annotated[str | None, Query(description="ISO date: the documents in force that day")] = None,
        include_inactive: Annotated[bool, Query(description="Every document, whatever its status")] = False,
        mode: Annotated[Literal["hybrid", "dense", "lexical"], Query(description="Ranking")] = "hybrid",
    ) -> QueryResponse:
        started = time.perf_counter()
        work = partial(
            logged_query,
            stores,
            q,
            interface="rest",
            top_k=top_k,
            doc_types=type,
            as_of=as_of,
            include_inactive=include_inactive,
            mode=mode,
        )
        answer = await run_search(work, stores.settings.search)
        took_ms = round((time.perf_counter() - started) * 1000, 2)
        return QueryResponse(
            query=q, top_k=top_k, as_of=answer.as_of, mode=answer.mode, results=answer.results, took_ms=took_ms
        )

    return app


def governance_health(stores: GovernanceStores) -> Callable[[Request], Awaitable[Response]]:
    """The ``/health`` endpoint of the governance server (replaces the shared liveness one); no auth."""

    async def health(request: Request) -> JSONResponse:
        try:
            state = await anyio.to_thread.run_sync(governance_index_state, stores)
        except Exception as exc:
            logger.warning("health.governance_failed error=%s", type(exc).__name__)
            body = GovernanceHealth(status="degraded", index_loaded=False, error=f"{type(exc).__name__}: {exc}"[:300])
            return JSONResponse(body.model_dump(mode="json"), status_code=503)
        hint = "" if state.built else f"The index is empty: run `{INGEST_COMMAND}`"
        body = GovernanceHealth(status="healthy", index_loaded=state.built, index=state, hint=hint)
        return JSONResponse(body.model_dump(mode="json"))

    return health
