"""The OpenAPI document of a REST app, with what FastAPI cannot see from the routes: the bearer security every
route is behind (``mcp_service.auth``), and the refusals every operation may answer before or beside its own,
each in the error envelope (``rest.errors.ErrorResponse``):

    400  malformed_body: a JSON body that is not JSON or nests too deep (operations that take a body)
    401  unauthorized: no bearer credential, another scheme, a wrong key or token
    403  forbidden / insufficient_scope: a read-only key or read-scoped token on a write
    422  validation_error: a request that does not match the schema (the envelope, not FastAPI's default)
    429  rate_limited: over the caller's budget, with Retry-After

Installed with ``document_security(app)``, which replaces ``app.openapi``; the document is built once.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from mcp_service.rest.errors import ErrorResponse

SCHEME = "bearerAuth"
ERROR_REF = {"$ref": "#/components/schemas/ErrorResponse"}
REFUSALS = {
    "401": "No bearer credential, another scheme, or a key or token this server does not accept (unauthorized)",
    "403": "The credential may not do this: a read-only key or a read-scoped token on a write (forbidden, "
    "insufficient_scope)",
    "422": "The request does not match the schema (validation_error; details.errors lists where)",
    "429": "Over the caller's rate limit (rate_limited); retry after the Retry-After header's seconds",
}
MALFORMED = "The JSON body is not JSON or nests deeper than allowed (malformed_body)"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def document_security(app: FastAPI) -> None:
    """Replace ``app.openapi`` with the generated document plus the security scheme and the refusals above."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                openapi_version=app.openapi_version,
                description=app.description,
                routes=app.routes,
                servers=app.servers,
            )
            app.openapi_schema = secured(schema)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def secured(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with the bearer scheme required by every operation and the refusals each may answer."""
    components = schema.setdefault("components", {})
    components.setdefault("securitySchemes", {})[SCHEME] = {
        "type": "http",
        "scheme": "bearer",
        "description": "MCP_API_KEY (read and write) or MCP_READ_API_KEY (read only), or an OAuth 2.1 access "
        "token of OAUTH_ISSUER_URL with this server's <scope>:read or <scope>:write",
    }
    schema["security"] = [{SCHEME: []}]
    schemas = components.setdefault("schemas", {})
    error_schema = ErrorResponse.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas.update(error_schema.pop("$defs", {}))
    schemas["ErrorResponse"] = error_schema
    for item in schema.get("paths", {}).values():
        for method in METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            responses = operation.setdefault("responses", {})
            for status, description in REFUSALS.items():
                responses[status] = _error_response(description)
            if "requestBody" in operation and "application/json" in operation["requestBody"].get("content", {}):
                responses.setdefault("400", _error_response(MALFORMED))
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    return schema


def _error_response(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": ERROR_REF}}}
