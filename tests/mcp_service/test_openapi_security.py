"""The OpenAPI documents of the REST APIs (``/api/v1/openapi.json``, governance's ``/openapi.json``) declare the
bearer security every route is behind and the refusals every operation may answer (401, 403, 422, 429; 400 for a
JSON body), each in the error envelope; the refusals the servers really send match what the document says."""

from __future__ import annotations

from typing import Any

import httpx
import jsonschema
import pytest

from tests.mcp_service.conftest import READ_KEY, Service, bearer

METHODS = ("get", "put", "post", "delete", "patch")


def document(url: str) -> dict[str, Any]:
    response = httpx.get(url, headers=bearer(), timeout=30)
    assert response.status_code == 200, response.text
    return response.json()


def operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, m, item[m]) for path, item in spec["paths"].items() for m in METHODS if m in item]


def error_validator(spec: dict[str, Any]) -> jsonschema.Draft202012Validator:
    """Validates a body against the document's ErrorResponse, its $refs resolved within the document."""
    return jsonschema.Draft202012Validator({"$ref": "#/components/schemas/ErrorResponse", **spec})


def check_declared(spec: dict[str, Any]) -> None:
    scheme = spec["components"]["securitySchemes"]["bearerAuth"]
    assert scheme == {**scheme, "type": "http", "scheme": "bearer"}
    assert spec["security"] == [{"bearerAuth": []}]
    found = operations(spec)
    assert found
    for path, method, operation in found:
        responses = operation["responses"]
        for status in ("401", "403", "422", "429"):
            schema = responses[status]["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/ErrorResponse"}, (path, method, status)
        if "application/json" in operation.get("requestBody", {}).get("content", {}):
            assert "400" in responses, (path, method)
    assert "HTTPValidationError" not in spec["components"]["schemas"]


def test_the_policy_api_declares_its_security_and_refusals(fresh_service: Service) -> None:
    check_declared(document(f"{fresh_service.url}/api/v1/openapi.json"))


def test_the_governance_api_declares_its_security_and_refusals(empty_governance_service: Service) -> None:
    check_declared(document(f"{empty_governance_service.url}/openapi.json"))


@pytest.mark.parametrize(
    ("method", "path", "headers", "body", "status"),
    [
        ("GET", "/api/v1/policies", {}, None, 401),
        ("GET", "/api/v1/policies", bearer("wrong"), None, 401),
        (
            "POST",
            "/api/v1/policies",
            bearer(READ_KEY),
            {"source": "X", "title": "t", "category": "national_policy"},
            403,
        ),
        ("POST", "/api/v1/policies", bearer(), {"source": "X"}, 422),
        ("POST", "/api/v1/policies", bearer(), b"[" * 100, 400),
    ],
)
def test_each_refusal_matches_the_documented_envelope(
    fresh_service: Service, method: str, path: str, headers: dict[str, str], body: Any, status: int
) -> None:
    validator = error_validator(document(f"{fresh_service.url}/api/v1/openapi.json"))
    content = body if isinstance(body, bytes) else None
    json_body = None if isinstance(body, bytes) else body
    response = httpx.request(
        method,
        fresh_service.url + path,
        headers=headers | {"Content-Type": "application/json"},
        content=content,
        json=json_body,
        timeout=30,
    )
    assert response.status_code == status, response.text
    validator.validate(response.json())
