"""Crash safety (spec 000 NFR-003): a process running an ingestion is killed (SIGKILL) after the file is
stored, after the revision is created, and in the middle of the upserts. Each time the audit finds the
damage, repair clears it, and running the same ingestion again succeeds.

The child is a real flow run against the session's Prefect test server, with settings from its
environment as on a worker. It gets a Chroma directory of its own, which this process opens only
after the child is dead: an embedded Chroma directory belongs to one process at a time.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from flows.audit import consistency_audit
from flows.common import bound_stores
from flows.ingest import ingest_policy_revision
from lib.composition import open_stores
from lib.config import Settings
from lib.policies.audit import FindingKind, audit_store
from lib.policies.lifecycle import RegistrationAction
from lib.policies.models import PolicyCreate, RevisionStatus
from lib.policies.registry import PolicyRegistry
from tests.flows.policy_pdfs import write_policy_pdf

PROJECT_ROOT = Path(__file__).resolve().parents[2]
CHILD_TIMEOUT_S = 120
REVISION = "rev_NPPF_2024_12"


def child_env(settings: Settings, prefect_api: str) -> dict[str, str]:
    """The worker-style environment: every store named by the same variables docker-compose sets."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PREFECT_", "PYTEST_", "REDIS_", "CHROMA_", "OBJECT_STORE", "POLICY_KB"))
    }
    env |= {
        "PREFECT_API_URL": prefect_api,
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "REDIS_URL": str(settings.redis.url),
        "POLICY_KB_DATA_DIR": str(settings.paths.data_dir),
        "CHROMA_PERSIST_DIR": str(settings.chroma.persist_dir),
        "CHROMA_POLICY_COLLECTION": settings.chroma.policy_collection,
        "OBJECT_STORE_URL": str(settings.objects.url),
        "ALLOWED_FILE_ROOTS": ":".join(str(root) for root in settings.files.allowed_roots),
    }
    return env


@pytest.mark.parametrize(
    ("point", "damage"),
    [
        ("file_stored", FindingKind.UNREFERENCED_FILE),
        ("revision_created", FindingKind.STUCK_PROCESSING),
        ("mid_upsert", FindingKind.STUCK_PROCESSING),
    ],
)
def test_a_killed_ingestion_is_found_by_the_audit_repaired_and_succeeds_when_run_again(
    point: str, damage: FindingKind, settings: Settings, redis_client: redis.Redis, tmp_path: Path, prefect_api: str
) -> None:
    crash_settings = settings.replace(
        chroma_persist_dir=tmp_path / "chroma-crash",
        policy_collection="crash_policy_docs",
        processing_timeout_seconds=0,
    )
    pdf = write_policy_pdf(crash_settings.files.allowed_roots[0] / "nppf.pdf", edition="December 2024")
    PolicyRegistry(redis_client).create_policy(
        PolicyCreate(source="NPPF", title="National Planning Policy Framework", category="national_policy")
    )

    child = subprocess.run(
        [sys.executable, "-m", "tests.flows.crash_child", point, "NPPF", "December 2024", "2024-12-12", str(pdf)],
        cwd=PROJECT_ROOT,
        env=child_env(crash_settings, prefect_api),
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT_S,
    )
    assert child.returncode == -signal.SIGKILL, f"the child did not die at {point}:\n{child.stdout}\n{child.stderr}"

    stores = open_stores(crash_settings)
    found = audit_store(stores.policies)
    assert [f.kind for f in found.findings] == [damage], found.findings
    if point == "mid_upsert":
        assert found.findings[0].count == 3, "half of the six chunks were written before the crash"

    with bound_stores(stores):
        repaired = consistency_audit(repair=True)
        assert repaired.after is not None and repaired.after.ok, repaired.after.findings
        if damage == FindingKind.STUCK_PROCESSING:
            failed = stores.policies.registry.get_revision("NPPF", REVISION)
            assert (
                failed.status == RevisionStatus.FAILED and stores.policies.vectors.count_revision("NPPF", REVISION) == 0
            )

        again = ingest_policy_revision(
            source="NPPF", version_label="December 2024", effective_from="2024-12-12", file=str(pdf)
        )

    expected_action = RegistrationAction.REGISTERED if point == "file_stored" else RegistrationAction.REPLACED_FAILED
    assert (again.action, again.status) == (expected_action, RevisionStatus.ACTIVE)
    assert (
        stores.policies.vectors.count_revision("NPPF", REVISION)
        == stores.policies.registry.get_revision("NPPF", REVISION).chunk_count
        == 6
    )
    assert audit_store(stores.policies).ok
