"""The deep health check's consistency section (spec 001 NFR-004, "consistency check in health endpoint"):
count mismatches and orphan chunks from counts, against the real service."""

from __future__ import annotations

from lib.policies.ingest import ingest_revision
from lib.policies.lifecycle import register_revision
from lib.policies.models import PolicyCreate, RevisionCreate
from mcp_service.health import consistency_check
from tests.flows.policy_pdfs import policy_pdf_bytes
from tests.mcp_service.conftest import Service

REVISION = "rev_NPPF_2024_12"


def _ingested(service: Service) -> None:
    stores = service.stores.policies
    stores.registry.create_policy(PolicyCreate(source="NPPF", title="NPPF", category="national_policy"))
    data = RevisionCreate(revision_id=REVISION, version_label="December 2024", effective_from="2024-12-12")
    register_revision(stores, "NPPF", data, policy_pdf_bytes(edition="December 2024"))
    ingest_revision(stores, "NPPF", REVISION)


def test_health_reports_removed_chunks_as_a_count_mismatch_and_foreign_chunks_as_orphans(
    fresh_service: Service,
) -> None:
    _ingested(fresh_service)
    stores = fresh_service.stores.policies
    chunk_count = stores.registry.get_revision("NPPF", REVISION).chunk_count
    with fresh_service.rest() as api:
        body = api.get("/health").json()
        assert body["status"] == "ok"
        assert body["consistency"] | {"latency_ms": 0} == {
            "ok": True,
            "complete": True,
            "revisions_checked": 1,
            "count_mismatches": [],
            "orphan_chunks": 0,
            "orphan_revisions": [],
            "latency_ms": 0,
            "error": "",
        }

        stores.vectors.delete_revision("NPPF", REVISION)
        ids, metas = ["GHOST__rev_x__Para_1__000", "GHOST__rev_x__Para_2__001"], []
        for i in range(2):
            metas.append({"source": "GHOST", "revision_id": "rev_x", "revision_ref": "GHOST:rev_x", "chunk_index": i})
        stores.vectors.upsert(ids, ["a ghost chunk", "another"], stores.embedder.embed_batch(["a", "b"]), metas)

        body = api.get("/health").json()

    assert body["status"] == "ok", "inconsistency is reported, never a 503"
    section = body["consistency"]
    assert (section["ok"], section["complete"], section["orphan_chunks"]) == (False, True, 2)
    assert section["orphan_revisions"] == ["GHOST:rev_x"]
    assert section["count_mismatches"] == [
        {
            "source": "NPPF",
            "revision_id": REVISION,
            "status": "active",
            "registry_chunk_count": chunk_count,
            "stored_chunks": 0,
        }
    ]


def test_a_check_out_of_time_says_it_is_incomplete(fresh_service: Service) -> None:
    _ingested(fresh_service)
    report = consistency_check(fresh_service.stores.policies, budget_s=0.0)
    assert (report.complete, report.revisions_checked, report.orphan_chunks) == (False, 0, 0)
