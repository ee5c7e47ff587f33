"""Property-based fuzzing of every server, in the suite with a fixed budget (issue 46, item 4).

The REST API is fuzzed from its own OpenAPI document (schemathesis), every MCP tool of the four servers from its
input schema (schemathesis' JSON Schema generator, under hypothesis), all against real servers over real stores
(a small policy ingested first), derandomized with few examples each so the file runs in under two minutes on one
core. ``FUZZ_EXAMPLES=N`` (N per REST operation and mode, and per tool) runs deeper and randomised, each run new
examples: ``FUZZ_EXAMPLES=300 .venv/bin/pytest -n 0 tests/mcp_service/test_fuzz.py`` (docs/operations.md).
Every answer: no 5xx, a refusal in the REST error envelope or a tool result in the tool envelope; afterwards
the consistency audits find registry, Chroma and the object store agreeing: nothing half-written.

Not fuzzed: what starts a background ingestion job (REST upload, reindex and ``/jobs``; the kb tools that submit a
note or a file), as each example would run a flow; their own tests cover them (tests/flows).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
import redis
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pydantic import SecretStr
from schemathesis import Case, GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.schemas import APIOperation

from lib.composition import Stores, open_stores
from lib.documents.audit import audit_documents
from lib.policies.audit import audit_store
from lib.policies.ingest import ingest_revision
from lib.policies.lifecycle import register_revision
from lib.policies.models import PolicyCreate, RevisionCreate
from mcp_service import document_store, governance, kb, policy_kb
from mcp_service.rest.app import create_rest_app
from tests.flows.policy_pdfs import policy_pdf_bytes
from tests.mcp_service.conftest import FULL_KEY, MCP_HEADERS, bearer, running, service_settings
from tests.mcp_service.tool_names import SERVER_TOOLS

FUZZ_DB = 12
DEEPER = int(os.environ.get("FUZZ_EXAMPLES", "0"))
"""0: the suite's fixed budget; N: N examples each, randomised (a deeper run by hand)."""
REST_EXAMPLES = DEEPER or 8
TOOL_EXAMPLES = DEEPER or 6
FUZZ = settings(
    max_examples=REST_EXAMPLES,
    derandomize=not DEEPER,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
"""The fixed budget: the same examples on every run, no shrinking (a failure is reported as generated)."""
STARTS_JOBS = {"kb_addnote", "kb_update_note", "kb_upload_finish"}
"""Tools that submit a background ingestion job (see the module docstring)."""
SERVERS = {"policy-kb": policy_kb, "document-store": document_store, "kb": kb, "governance": governance}


@dataclass
class Fuzzed:
    urls: dict[str, str]
    stores: Stores

    @property
    def api(self) -> str:
        return f"{self.urls['policy-kb']}/api/v1"


@pytest.fixture(scope="module")
def fuzzed(service_base: Path, redis_url: str, chroma_dir: Path) -> Iterator[Fuzzed]:
    """The four servers over one set of stores of their own, a small policy revision ingested."""
    base = service_base / f"fuzz-{uuid.uuid4().hex[:8]}"
    suffix = uuid.uuid4().hex[:12]
    config = service_settings(
        base,
        redis_url,
        chroma_dir,
        FUZZ_DB,
        kb_mcp_api_key=SecretStr(FULL_KEY),
        document_collection=f"fuzz_docs_{suffix}",
        kb_collection=f"fuzz_kb_{suffix}",
        governance_api_key=SecretStr(FULL_KEY),
    )
    redis.Redis.from_url(config.redis.url or "").flushdb()
    stores = open_stores(config)
    policies = stores.policies
    policies.registry.create_policy(PolicyCreate(source="FUZZ_PLAN", title="Fuzz plan", category="local_plan"))
    revision = RevisionCreate(
        revision_id="rev_FUZZ_PLAN_2025_01", version_label="January 2025", effective_from="2025-01-01"
    )
    register_revision(policies, "FUZZ_PLAN", revision, policy_pdf_bytes(edition="January 2025"))
    ingest_revision(policies, "FUZZ_PLAN", "rev_FUZZ_PLAN_2025_01")
    urls: dict[str, str] = {}
    with (
        running(policy_kb.create_app(config, stores=stores, warm=False)) as urls["policy-kb"],
        running(document_store.create_app(config, stores=stores, warm=False)) as urls["document-store"],
        running(kb.create_app(config, stores=stores, warm=False)) as urls["kb"],
        running(governance.create_app(config, stores=stores, warm=False)) as urls["governance"],
    ):
        yield Fuzzed(urls, stores)
    redis.Redis.from_url(config.redis.url or "").flushdb()


# -- REST, from the OpenAPI document -------------------------------------------------------------------------------


REST_DOCUMENT = create_rest_app(None).openapi()  # type: ignore[arg-type]
"""The document the API serves (built from the same routes; ``test_the_fuzzed_document_is_the_one_served``)."""


def operations(schema: Any) -> list[APIOperation]:
    """Every operation of a schemathesis schema; one it cannot read fails the test."""
    found = []
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), result.err()
        found.append(result.ok())
    return found


REST_OPERATIONS = {
    operation.label: operation
    for operation in operations(
        schemathesis.openapi.from_dict(REST_DOCUMENT)
        .exclude(method="POST", path_regex=r"/(revisions|reindex)$")
        .exclude(method="POST", path="/jobs")
    )
}


def in_the_error_envelope(body: Any) -> bool:
    error = body.get("error") if isinstance(body, dict) else None
    return isinstance(error, dict) and isinstance(error.get("code"), str) and isinstance(error.get("message"), str)


def test_the_fuzzed_document_is_the_one_served(fuzzed: Fuzzed) -> None:
    served = httpx.get(f"{fuzzed.api}/openapi.json", headers=bearer(), timeout=30).json()
    assert (served["paths"], served["components"]) == (REST_DOCUMENT["paths"], REST_DOCUMENT["components"])


@pytest.mark.parametrize("mode", list(GenerationMode), ids=lambda mode: mode.value)
@pytest.mark.parametrize("operation", sorted(REST_OPERATIONS))
def test_the_rest_api_answers_every_generated_request_in_its_envelope(
    fuzzed: Fuzzed, operation: str, mode: GenerationMode
) -> None:
    """Requests valid under the document (``positive``) and requests it says are invalid (``negative``)."""
    statuses: list[int] = []

    @given(case=REST_OPERATIONS[operation].as_strategy(mode))
    @FUZZ
    def answers(case: Case) -> None:
        response = case.call(base_url=fuzzed.api, headers=bearer(), timeout=60)
        statuses.append(response.status_code)
        case.validate_response(response, checks=[not_a_server_error])
        assert response.status_code < 500, response.text[:500]
        if response.status_code >= 400:
            assert in_the_error_envelope(response.json()), (response.status_code, response.text[:500])

    answers()
    if mode is GenerationMode.POSITIVE:  # a negative case may drop or spoil the credential: its 401 is right
        assert 401 not in statuses, "the fuzzer's requests were not authenticated"


# -- MCP, every tool from its input schema -------------------------------------------------------------------------


def rpc(url: str, method: str, params: dict[str, Any], request_id: int = 1) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    response = httpx.post(f"{url}/mcp", json=body, headers=MCP_HEADERS | bearer(), timeout=120)
    assert response.status_code == 200, (response.status_code, response.text[:500])
    answer = response.json()
    assert "error" not in answer, answer
    return dict(answer["result"])


def arguments_of(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Arguments valid under a tool's input schema, drawn by schemathesis' JSON Schema generator: the schema as
    the JSON body of a one-operation OpenAPI document (its ``$defs`` as the document's components)."""
    body = json.loads(json.dumps(schema).replace('"#/$defs/', '"#/components/schemas/'))
    components = body.pop("$defs", {})
    document = {
        "openapi": "3.1.0",
        "info": {"title": "tool arguments", "version": "1"},
        "paths": {
            "/call": {
                "post": {
                    "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
                    "responses": {"200": {"description": "the tool's result"}},
                }
            }
        },
        "components": {"schemas": components},
    }
    (operation,) = operations(schemathesis.openapi.from_dict(document))
    return operation.as_strategy().map(lambda case: cast(dict[str, Any], case.body))


FUZZED_TOOLS = sorted(
    (server, tool)
    for server, (reads, writes) in SERVER_TOOLS.items()
    for tool in reads | writes
    if tool not in STARTS_JOBS
)


@pytest.mark.parametrize(("server", "tool"), FUZZED_TOOLS, ids=[f"{s}:{t}" for s, t in FUZZED_TOOLS])
def test_every_tool_answers_arguments_from_its_input_schema_in_the_envelope(
    fuzzed: Fuzzed, server: str, tool: str
) -> None:
    url = fuzzed.urls[server]
    listed = {t["name"]: t for t in rpc(url, "tools/list", {})["tools"]}
    schema = listed[tool]["inputSchema"]

    @given(arguments=arguments_of(schema), request_id=st.integers(1, 2**31))
    @settings(FUZZ, max_examples=TOOL_EXAMPLES)
    def answers(arguments: dict[str, Any], request_id: int) -> None:
        result = rpc(url, "tools/call", {"name": tool, "arguments": arguments}, request_id)
        payload = result.get("structuredContent")
        assert isinstance(payload, dict) and isinstance(payload.get("status"), str), result
        if result.get("isError"):
            assert payload["status"] == "error", payload
            assert isinstance(payload.get("error_type"), str) and payload["error_type"] != "internal", payload
            assert isinstance(payload.get("message"), str), payload

    answers()


# -- afterwards: nothing half-written ------------------------------------------------------------------------------


def test_after_the_fuzzing_registry_chroma_and_the_object_store_agree(fuzzed: Fuzzed) -> None:
    policies = audit_store(fuzzed.stores.policies)
    assert policies.ok, policies.findings
    documents = audit_documents(fuzzed.stores.documents)
    assert documents.ok, documents.findings
