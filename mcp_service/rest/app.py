"""The ``/api/v1`` sub-application (mounted by ``mcp_service.policy_kb``, and by ``mcp_service.kb`` as the kb
engine), with its OpenAPI document at ``/openapi.json``.

FastAPI, because the OpenAPI document is then generated from the very pydantic models that validate
requests (``lib.policies.models``) and shape responses (``schemas``), so it cannot drift from the code.
"""

from __future__ import annotations

from fastapi import FastAPI

from lib.composition import Stores
from mcp_service.rest.errors import install_error_handlers
from mcp_service.rest.kb_routes import router as kb_router
from mcp_service.rest.marking import DocumentMarkedJSONResponse
from mcp_service.rest.openapi import document_security
from mcp_service.rest.pages import router as pages_router
from mcp_service.rest.quotes import router as quotes_router
from mcp_service.rest.routes import API_PREFIX, router
from mcp_service.rest.sections import router as sections_router

__all__ = ["API_PREFIX", "create_rest_app"]


def create_rest_app(stores: Stores) -> FastAPI:
    """The API over ``stores``: the policy routes use ``stores.policies``, the kb engine's ``stores.notes``, each
    opened on the first request that needs it."""
    app = FastAPI(
        title="policy-kb REST API",
        version="1.0",
        description="Policies and their revisions in time (spec 001). Errors: {'error': {code, message, details}}.",
        openapi_url="/openapi.json",
        docs_url=None,
        redoc_url=None,
        default_response_class=DocumentMarkedJSONResponse,
    )
    app.state.stores = stores
    install_error_handlers(app)
    document_security(app)
    app.include_router(router)
    app.include_router(sections_router)
    app.include_router(quotes_router)
    app.include_router(pages_router)
    app.include_router(kb_router)
    return app
