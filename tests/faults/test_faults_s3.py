"""The S3 server (moto, ``deployments.stack.s3_server``) stopped when a revision is uploaded: a clean 503,
nothing registered, so no registry entry can name a missing object; once S3 is back (its bucket kept) the same
service stores and ingests again."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from deployments.stack.process import StackProcess
from lib.errors import RevisionNotFoundError
from lib.policies.models import RevisionStatus
from lib.stores.objects import S3ObjectStore
from tests.faults.support import (
    SOURCE,
    audit,
    create_policy,
    fault_settings,
    note,
    service,
    small_pdf,
    stack_processes,
    upload,
    wait_settled,
)
from tests.mcp_service.conftest import Service

REVISION = "rev_FAULT_POLICY_2023_03"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, StackProcess]]:
    base = tmp_path_factory.mktemp("faults-s3")
    with (
        stack_processes(base / "stack", "redis", "chroma", "s3") as (layout, processes),
        service(fault_settings(layout, base, s3=True)) as svc,
    ):
        create_policy(svc)
        yield svc, processes["s3"]


def test_an_upload_while_s3_is_stopped_answers_503_and_registers_nothing(stack: tuple[Service, StackProcess]) -> None:
    svc, s3 = stack
    assert isinstance(svc.stores.policies.objects, S3ObjectStore)
    s3.stop()
    try:
        refused = upload(svc, REVISION, "2023-03-01", small_pdf("2023"))
        note("refused", f"{refused.status_code} {refused.json()['error']}")
        assert refused.status_code == 503, refused.text
        assert refused.json()["error"]["code"] == "object_store_unavailable"
        with pytest.raises(RevisionNotFoundError):
            svc.stores.policies.registry.get_revision(SOURCE, REVISION)
        assert svc.stores.policies.registry.list_revisions(SOURCE) == []
    finally:
        s3.start()
    # The S3 server kept its bucket across the restart (deployments.stack.s3_server), as MinIO and S3 do.
    accepted = upload(svc, REVISION, "2023-03-01", small_pdf("2023"))
    assert accepted.status_code == 202, accepted.text
    settled = wait_settled(svc, REVISION)
    assert settled.status == RevisionStatus.ACTIVE, settled.error
    assert svc.stores.policies.objects.exists(settled.file_path)
    outcome = audit(svc)
    note("audit", outcome.describe())
    assert outcome.before.ok, outcome.describe()
