"""One local stack per session, started by the same code as ``policy-kb stack up`` (supervisord over
``deployments/stack/Procfile``): redis-server, the Chroma server, moto's S3 server, the Prefect server,
a process worker with the deployments of ``prefect.yaml``, two service replicas. Stopped at the end of
the session, with everything it started.

``stack_nppf``: the real NPPF December 2024 ingested through the stack once per session, as the Prefect
UI would (``run_deployment`` with the form's parameters), the policy registered first over REST.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast
from uuid import UUID

import httpx
import pytest
from prefect.client.orchestration import SyncPrefectClient, get_client
from prefect.client.schemas.objects import FlowRun
from prefect.deployments import run_deployment
from prefect.settings import PREFECT_API_URL, temporary_settings

from deployments.stack import StackLayout
from deployments.stack.manager import down, up, wait_stopped
from tests.fixtures_paths import NPPF_2024
from tests.mcp_service.conftest import FULL_KEY, bearer
from tests.polling import eventually

RUN_TIMEOUT_S = 300
INGEST_DEPLOYMENT = "ingest_policy_revision/ingest-policy-revision"
AUDIT_DEPLOYMENT = "consistency_audit/consistency-audit"
NPPF_POLICY = {"source": "NPPF", "title": "National Planning Policy Framework", "category": "national_policy"}
NPPF_REVISION = {"version_label": "December 2024", "effective_from": "2024-12-12"}
_run_deployment_sync = cast(Callable[..., FlowRun], run_deployment)


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StackLayout]:
    layout = StackLayout.with_free_ports(
        tmp_path_factory.mktemp("stack"),
        extra_env={"MCP_API_KEY": FULL_KEY, "ALLOWED_FILE_ROOTS": str(NPPF_2024.parent)},
    )
    try:
        up(layout)
    except (RuntimeError, TimeoutError) as exc:
        log = (layout.logs / "supervisord.log").read_text(errors="replace")[-4000:]
        pytest.fail(f"the stack did not come up: {exc}\n{log}", pytrace=False)
    yield layout
    down(layout.directory)
    assert wait_stopped(layout.directory), "stack down left processes of the stack running"


@dataclass
class Prefect:
    """The stack's Prefect API from the test process: start deployment runs, wait for them, read them."""

    api_url: str

    def client(self) -> SyncPrefectClient:
        with temporary_settings({PREFECT_API_URL: self.api_url}):
            return get_client(sync_client=True)

    def start(self, deployment: str, parameters: dict[str, Any]) -> FlowRun:
        with temporary_settings({PREFECT_API_URL: self.api_url}):
            return _run_deployment_sync(deployment, parameters=parameters, timeout=0, _sync=True)

    def read(self, flow_run_id: UUID | str) -> FlowRun:
        with self.client() as client:
            return client.read_flow_run(UUID(str(flow_run_id)))

    def wait_final(self, flow_run_id: UUID | str) -> FlowRun:
        def final() -> bool:
            state = self.read(flow_run_id).state
            return state is not None and state.is_final()

        eventually(final, within=RUN_TIMEOUT_S, every=1.0)
        return self.read(flow_run_id)


@pytest.fixture(scope="session")
def prefect(stack: StackLayout) -> Prefect:
    return Prefect(stack.prefect_api_url)


def rest(url: str) -> httpx.Client:
    return httpx.Client(base_url=f"{url}/api/v1", headers=bearer(), timeout=60)


@pytest.fixture(scope="session")
def stack_nppf_started(stack: StackLayout, prefect: Prefect) -> FlowRun:
    """The deployment run ingesting NPPF December 2024, just started (other work can overlap it)."""
    with rest(stack.url("replica-a")) as api:
        response = api.post("/policies", json=NPPF_POLICY)
    assert response.status_code == 201, response.text
    return prefect.start(INGEST_DEPLOYMENT, {"source": "NPPF", "file": str(NPPF_2024), **NPPF_REVISION})


@pytest.fixture(scope="session")
def stack_nppf(stack_nppf_started: FlowRun, prefect: Prefect) -> FlowRun:
    """The same flow run, ended."""
    return prefect.wait_final(stack_nppf_started.id)


def nppf_seed_file(folder: Path) -> Path:
    """A seed file of NPPF December 2024 alone (the bundled one also holds the 2099 draft)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / NPPF_2024.name).write_bytes(NPPF_2024.read_bytes())
    seed = folder / "seed.yaml"
    seed.write_text(
        "policies:\n"
        f"  - {{source: NPPF, title: {NPPF_POLICY['title']}, category: national_policy, revisions: [\n"
        f"      {{revision_id: rev_NPPF_2024_12, version_label: {NPPF_REVISION['version_label']},\n"
        f"       effective_from: '{NPPF_REVISION['effective_from']}', file: {NPPF_2024.name}}}]}}\n"
    )
    return seed
