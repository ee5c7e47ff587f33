"""The REST API's one error mapping: every refusal and crash has the body
``{"error": {"code", "message", "details"}}``, installed once on the app by ``install_error_handlers``.

A ``KBError`` carries its own HTTP status and code; ``ApiError`` is an HTTP-level refusal with no ``lib``
error type; a request that fails its schema is 422 ``validation_error`` (a bad ``source`` in a body is the
spec's 400 ``invalid_source``); anything else is logged with its traceback and answered 500 ``internal``.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException
from starlette.routing import Match

from lib.errors import KBError, OverloadedError, bounded, bounded_details

logger = logging.getLogger(__name__)

INTERNAL_MESSAGE = "The server failed unexpectedly; the error has been logged"
HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


class ErrorDetail(BaseModel):
    code: str = Field(description="Machine-readable, e.g. policy_not_found, revision_overlap")
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class ErrorResponse(BaseModel):
    error: ErrorDetail


class ApiError(Exception):
    """An HTTP-level refusal that has no ``lib`` error type (a malformed query, a missing form field)."""

    def __init__(self, status: int, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.details = status, code, message, details


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The ``responses=`` of a route that may answer these statuses, for the OpenAPI document."""
    return {status: {"model": ErrorResponse} for status in statuses}


def validation_details(errors: Any) -> Any:
    """Pydantic's errors without the rejected input (it may be a whole upload) or internals."""
    return jsonable_encoder(errors, exclude={"input", "ctx", "url"})


def _error(
    status: int, code: str, message: str, details: dict[str, Any] | None = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    body = {
        "error": {
            "code": code,
            "message": bounded(message),
            "details": jsonable_encoder(bounded_details(details or {})),
        }
    }
    return JSONResponse(body, status_code=status, headers=headers)


async def _kb_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, KBError)
    # An overloaded search lane says when to come back (spec-wise a 503 is "retry later").
    headers = {"Retry-After": str(exc.retry_after_s)} if isinstance(exc, OverloadedError) else None
    return _error(exc.http_status, exc.error_type, exc.message, exc.details, headers)


async def _api_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return _error(exc.status, exc.code, exc.message, exc.details)


async def _invalid_request(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    if any(err["loc"][-1] == "source" and err["loc"][0] == "body" for err in exc.errors()):
        return _error(400, "invalid_source", "source must be an UPPER_SNAKE_CASE slug such as NPPF or LTN_1_20")
    errors = validation_details(exc.errors())
    return _error(422, "validation_error", "The request does not match the schema", {"errors": errors})


async def http_error(request: Request, exc: Exception) -> JSONResponse:
    """An HTTP-level refusal (no route, a method the route does not take, a body that could not be read) in the
    envelope, with the headers it carries (a 405's ``Allow``): the handler of the REST API and of every
    server's own app (``mcp_service.app``)."""
    assert isinstance(exc, HTTPException)
    code = {400: "bad_request", 404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    headers = dict(exc.headers) if exc.headers else {}
    if exc.status_code == 405:
        headers["Allow"] = ", ".join(allowed_methods(request))
    return _error(exc.status_code, code, str(exc.detail), headers=headers or None)


def allowed_methods(request: Request) -> list[str]:
    """Every method some route of the app takes at this path (each asked in turn): Starlette's 405 names the
    first route that matched the path alone, while the REST API has one route per method."""
    routes = getattr(request.app, "routes", [])
    return [
        method
        for method in HTTP_METHODS
        if any(route.matches({**request.scope, "method": method})[0] == Match.FULL for route in routes)
    ]


async def _crash(request: Request, exc: Exception) -> JSONResponse:
    logger.exception("rest.crashed method=%s path=%s", request.method, request.url.path)
    return _error(500, "internal", INTERNAL_MESSAGE)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(KBError, _kb_error)
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, _crash)
