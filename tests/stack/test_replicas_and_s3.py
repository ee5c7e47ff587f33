"""Two replicas over one set of stores, uploads through the Prefect worker, originals in the S3 server.

An upload to replica A with ``PREFECT_API_URL`` set becomes a deployment run the worker completes; replica
B finds it on its next request; the original lies in the S3 server's bucket under its content hash; a
replica started afresh reads it all back (and a reindex through it rebuilds from the stored file).
"""

from __future__ import annotations

import hashlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import boto3
import pytest
from prefect.client.schemas.objects import FlowRun

from deployments.stack import StackLayout, StackProcess, start_process
from deployments.stack.layout import BUCKET, S3_CREDENTIALS
from deployments.stack.manager import status
from tests.flows.policy_pdfs import policy_pdf_bytes
from tests.mcp_service.tools import call
from tests.polling import eventually
from tests.stack.conftest import INGEST_DEPLOYMENT, Prefect, rest

pytestmark = pytest.mark.anyio

LTN = {"source": "LTN_1_20", "title": "Cycle Infrastructure Design (LTN 1/20)", "category": "national_guidance"}
EDITION = "July 2020"
PDF = policy_pdf_bytes(edition=EDITION)
QUESTION = "cycle lanes on busy roads"


@pytest.fixture(scope="module")
def uploaded(stack: StackLayout, prefect: Prefect) -> tuple[dict, FlowRun]:
    """LTN 1/20 registered and uploaded over REST to replica A; its 202 body and its ended flow run."""
    with rest(stack.url("replica-a")) as api:
        assert api.post("/policies", json=LTN).status_code == 201
        form = {"version_label": EDITION, "effective_from": "2020-07-27"}
        response = api.post(
            "/policies/LTN_1_20/revisions", files={"file": ("ltn.pdf", PDF, "application/pdf")}, data=form
        )
    assert response.status_code == 202, response.text
    accepted = response.json()
    return accepted, prefect.wait_final(accepted["ingestion_job_id"])


async def test_a_rest_upload_to_a_replica_becomes_a_deployment_run_the_worker_completes(
    uploaded: tuple[dict, FlowRun], prefect: Prefect
) -> None:
    accepted, run = uploaded
    assert UUID(accepted["ingestion_job_id"]) == run.id
    assert run.state is not None and run.state.is_completed(), run.state
    with prefect.client() as client:
        assert run.deployment_id == client.read_deployment_by_name(INGEST_DEPLOYMENT).id
    assert run.parameters == {"source": "LTN_1_20", "revision_id": accepted["revision_id"]}


async def test_an_ingestion_through_replica_a_is_found_through_replica_b_on_its_next_request(
    stack: StackLayout, uploaded: tuple[dict, FlowRun]
) -> None:
    found = await call(stack.url("replica-b"), "search_policy", {"query": QUESTION, "sources": ["LTN_1_20"]})
    best = found["results"][0]
    assert (best["revision_id"], best["version_label"]) == ("rev_LTN_1_20_2020_07", EDITION)
    assert f"{EDITION} text" in best["text"]


def test_the_replica_logs_each_write_as_an_audit_event(stack: StackLayout, uploaded: tuple[dict, FlowRun]) -> None:
    """``policy-kb serve`` logs its own events at INFO although the CLI's other commands log at WARNING: the
    registration and the upload through replica A each left an ``audit.write`` line (no token, no key). The
    process is the service's own, so its warm heap was frozen."""
    log = (stack.logs / "replica-a.log").read_text(errors="replace")
    writes = [line for line in log.splitlines() if " audit.write " in line]
    assert any("path=/api/v1/policies " in line and "status=201" in line for line in writes), writes
    assert any("path=/api/v1/policies/LTN_1_20/revisions " in line and "status=202" in line for line in writes), writes
    assert "service.started" in log and "service.heap_frozen" in log and "HTTP Request:" not in log


def test_sigusr2_makes_a_replica_log_what_its_heap_holds(stack: StackLayout) -> None:
    """The diagnostic for a soak's memory (``lib.observability.memory``): RSS, Python's blocks, glibc's figures."""
    log = stack.logs / "replica-a.log"
    os.kill({row.name: row for row in status(stack.directory)}["replica-a"].pid, signal.SIGUSR2)
    line = eventually(
        lambda: next((x for x in log.read_text(errors="replace").splitlines() if "service.memory " in x), None),
        within=30,
        what="a service.memory line",
    )
    assert "python_blocks=" in line and "malloc_free=" in line and "snapshot=-" in line


def test_the_original_lies_in_the_s3_servers_bucket_under_its_content_hash(
    stack: StackLayout, uploaded: tuple[dict, FlowRun]
) -> None:
    s3 = boto3.client(
        "s3",
        endpoint_url=stack.s3_endpoint,
        region_name="us-east-1",
        aws_access_key_id=S3_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=S3_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    )
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="objects/policies/LTN_1_20/")["Contents"]]
    digest = hashlib.sha256(PDF).hexdigest()
    assert keys == [f"objects/policies/LTN_1_20/rev_LTN_1_20_2020_07/{digest}.pdf"]
    assert s3.get_object(Bucket=BUCKET, Key=keys[0])["Body"].read() == PDF


@pytest.fixture
def fresh_replica(stack: StackLayout, tmp_path: Path) -> Iterator[StackProcess]:
    """A replica started after the upload: nothing of it in its memory, only in the stores."""
    replica = start_process(stack.with_new_replica(tmp_path / "fresh"), "replica-a")
    yield replica
    replica.close()


async def test_a_replica_started_afterwards_reads_it_all_back_and_reindexes_from_the_stored_file(
    uploaded: tuple[dict, FlowRun], fresh_replica: StackProcess, prefect: Prefect
) -> None:
    section = await call(fresh_replica.url, "get_policy_section", {"source": "LTN_1_20", "section_ref": "Para 1"})
    assert section["status"] == "success" and EDITION in section["text"]
    with rest(fresh_replica.url) as api:
        response = api.post("/policies/LTN_1_20/revisions/rev_LTN_1_20_2020_07/reindex")
    assert response.status_code == 202, response.text
    run = prefect.wait_final(response.json()["ingestion_job_id"])
    assert run.state is not None and run.state.is_completed(), run.state
