"""``consistency_audit``: spec 001 ITS-08 and every kind of damage the audit knows, found and repaired."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import redis
from prefect.artifacts import Artifact

from flows.audit import FINDINGS_KEY, SUMMARY_KEY, consistency_audit
from flows.ingest import ingest_policy_revision
from lib.composition import Stores
from lib.errors import InconsistentStoreError
from lib.policies.audit import FindingKind, audit_store
from lib.policies.audit_record import MAX_DETAIL_CHARS, MAX_FINDINGS, last_audit, record_of
from lib.policies.keys import LAST_AUDIT_KEY
from lib.policies.lifecycle import register_revision
from lib.policies.models import RevisionCreate, RevisionStatus
from lib.policies.registry import revision_hash_key, revisions_key
from lib.policies.search import search_policy
from lib.stores.objects import policy_file_key, sha256_bytes
from tests.flows.policy_pdfs import policy_pdf_bytes


@pytest.fixture
def nppf(flow_stores: Stores, make_policy: Callable[..., str], policy_pdf: Callable[..., Path]) -> Stores:
    """NPPF with a superseded 2023 and an active 2024 revision, both ingested by the flow."""
    make_policy()
    for label, start in [("September 2023", "2023-09-05"), ("December 2024", "2024-12-12")]:
        ingest_policy_revision(
            source="NPPF", version_label=label, effective_from=start, file=str(policy_pdf(f"{start}.pdf", label))
        )
    return flow_stores


def test_a_consistent_store_has_no_findings_and_the_artifact_says_so(nppf: Stores) -> None:
    result = consistency_audit()

    assert result.before.ok and result.after is None
    assert (result.before.revisions, result.before.chunks, result.before.files) == (2, 12, 2)
    table = Artifact.get(FINDINGS_KEY)
    assert table is not None and "registry, Chroma and object store agree" in str(table.data)
    summary = Artifact.get(SUMMARY_KEY)
    assert summary is not None and "**Consistent.**" in str(summary.data)


def test_its08_chunks_of_a_revision_deleted_from_redis_are_reported_as_orphans_and_repair_removes_them(
    nppf: Stores, redis_client: redis.Redis, backend: str
) -> None:
    gone = nppf.policies.registry.get_revision("NPPF", "rev_NPPF_2023_09")
    redis_client.delete(revision_hash_key("NPPF", "rev_NPPF_2023_09"))
    redis_client.zrem(revisions_key("NPPF"), "rev_NPPF_2023_09")

    found = consistency_audit()

    kinds = {(f.kind, f.revision_id, f.count) for f in found.before.findings}
    assert (FindingKind.ORPHAN_CHUNKS, "rev_NPPF_2023_09", gone.chunk_count) in kinds
    assert (FindingKind.UNREFERENCED_FILE, "", 0) in kinds
    assert nppf.policies.vectors.count_revision("NPPF", "rev_NPPF_2023_09") == gone.chunk_count, (
        "a plain audit changes nothing"
    )

    repaired = consistency_audit(repair=True)

    assert repaired.after is not None and repaired.after.ok, repaired.after
    assert all(action.ok for action in repaired.repairs)
    assert nppf.policies.vectors.count_revision("NPPF", "rev_NPPF_2023_09") == 0
    assert not nppf.objects.exists(gone.file_path)
    assert nppf.policies.vectors.count_revision("NPPF", "rev_NPPF_2024_12") == 6, "the live revision is untouched"


def test_every_kind_of_damage_is_found_the_safe_ones_are_repaired_and_the_rest_fail_the_nightly_run(
    nppf: Stores,
) -> None:
    stores = nppf
    stores.settings.jobs.processing_timeout_seconds = 0
    old = stores.policies.registry.get_revision("NPPF", "rev_NPPF_2023_09")
    new = stores.policies.registry.get_revision("NPPF", "rev_NPPF_2024_12")
    # chunk_count_mismatch: two chunks of the 2024 revision vanish.
    stores.policies.vectors.delete_ids(sorted(stores.policies.vectors.revision_chunk_ids("NPPF", new.revision_id))[:2])
    # stale_metadata: the 2023 chunks claim to be in force still.
    ids = stores.policies.vectors.revision_chunk_ids("NPPF", old.revision_id)
    stores.policies.vectors.collection.update(ids=ids, metadatas=[{"effective_to": 99991231}] * len(ids))
    # stuck_processing: an ingestion that died after registering its revision.
    register_revision(
        stores.policies, "NPPF", RevisionCreate(version_label="2026", effective_from="2026-01-01"), policy_pdf_bytes()
    )
    # unreferenced_file: an upload that never got its revision.
    orphan = policy_pdf_bytes("orphan")
    orphan_key = policy_file_key("NPPF", "rev_NPPF_2027_01", sha256_bytes(orphan))
    stores.objects.put_bytes(orphan_key, orphan)
    # missing_file: the 2023 original is lost; nothing can rebuild it.
    stores.objects.delete(old.file_path)

    report = audit_store(stores.policies)
    assert report.counts() == {
        "stuck_processing": 1,
        "orphan_chunks": 0,
        "chunk_count_mismatch": 1,
        "stale_metadata": 1,
        "missing_file": 1,
        "unreferenced_file": 1,
        "stale_search_index": 0,
    }

    with pytest.raises(InconsistentStoreError, match="missing_file=1"):
        consistency_audit(repair=True, fail_on_findings=True)

    after = audit_store(stores.policies)
    assert [(f.kind, f.revision_id) for f in after.findings] == [(FindingKind.MISSING_FILE, "rev_NPPF_2023_09")]
    assert not after.findings[0].repairable
    stuck = stores.policies.registry.get_revision("NPPF", "rev_NPPF_2026_01")
    assert stuck.status == RevisionStatus.FAILED and stuck.error.startswith("stuck_processing")
    assert stores.policies.vectors.count_revision("NPPF", new.revision_id) == new.chunk_count == 6
    assert {m["effective_to"] for _, m in stores.policies.vectors.iter_metadata({"revision_id": old.revision_id})} == {
        20241211
    }
    assert not stores.objects.exists(orphan_key)
    hits = search_policy(stores.policies, "cycle lanes", effective_date="2026-06-01").results
    assert hits and {h.revision_id for h in hits} == {"rev_NPPF_2024_12"}, "the failed 2026 revision released its dates"
    summary = Artifact.get(SUMMARY_KEY)
    assert summary is not None and "**1 findings remain.**" in str(summary.data)


def test_a_revision_failed_behind_the_pipelines_back_is_cleaned_and_the_reopened_one_resynced(
    nppf: Stores,
) -> None:
    nppf.policies.registry.mark_failed("NPPF", "rev_NPPF_2024_12", "crashed")

    report = audit_store(nppf.policies)
    assert sorted((f.kind.value, f.revision_id, f.count) for f in report.findings) == [
        ("chunk_count_mismatch", "rev_NPPF_2024_12", 6),
        ("stale_metadata", "rev_NPPF_2023_09", 6),
    ]

    result = consistency_audit(repair=True)
    assert result.after is not None and result.after.ok
    assert nppf.policies.vectors.count_revision("NPPF", "rev_NPPF_2024_12") == 0


def test_the_nightly_audit_covers_application_documents_and_repairs_their_orphans(flow_stores: Stores) -> None:
    from lib.documents.ingest import ingest_document
    from lib.documents.models import IngestSuccess
    from tests.fixtures_paths import TABLE_PDF

    inbox = flow_stores.settings.files.allowed_roots[0]
    (inbox / "Transport_Assessment.pdf").write_bytes(TABLE_PDF.read_bytes())
    result = ingest_document(flow_stores.documents, inbox / "Transport_Assessment.pdf", "25/01178/REM")
    assert isinstance(result, IngestSuccess)
    record = flow_stores.documents.registry.get(result.document_id)
    assert record is not None
    flow_stores.documents.registry.remove(record)  # as if the worker died before registering

    audited = consistency_audit(repair=True)

    assert audited.documents_before is not None
    assert {f.kind.value for f in audited.documents_before.findings} == {"orphan_chunks", "unreferenced_file"}
    assert audited.documents_after is not None and audited.documents_after.ok
    assert audited.remaining == 0


def test_the_nightly_audit_covers_the_governance_corpus_and_deletes_a_generation_left_before_its_flip(
    flow_stores: Stores, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lib.governance.ingest import ingest_governance_corpus_files
    from tests.lib.governance.conftest import MADR

    corpus = tmp_path / "governance"
    corpus.mkdir()
    adr = corpus / "0003-provide-own-madr-tools.md"
    adr.write_text((MADR / adr.name).read_text())
    ingest_governance_corpus_files(flow_stores.governance, corpus)
    adr.write_text(adr.read_text() + "\n## Zanzibar\n\nWe keep the zanzibar toolchain.\n")

    def died(*_: object) -> None:
        raise ConnectionError("the worker died between writing the new chunks and registering them")

    with monkeypatch.context() as patch:
        patch.setattr(flow_stores.governance.registry, "put", died)
        with pytest.raises(ConnectionError):
            ingest_governance_corpus_files(flow_stores.governance, corpus)

    try:
        audited = consistency_audit(repair=True)
    finally:  # the Chroma folder outlives this test's Redis: leave no chunks for the next test's audit
        flow_stores.governance.chunks.delete_document("0003-provide-own-madr-tools")

    assert audited.governance_before is not None
    assert [f.kind.value for f in audited.governance_before.findings] == ["orphan_generation"]
    assert [a.ok for a in audited.governance_repairs] == [True]
    assert audited.governance_after is not None and audited.governance_after.ok
    assert audited.remaining == 0


def test_the_last_audit_is_stored_with_its_time_counts_and_findings_whoever_ran_it(
    nppf: Stores, redis_client: redis.Redis
) -> None:
    registry = nppf.policies.registry
    assert last_audit(registry) is None, "no audit ran on this store yet"
    stray = policy_pdf_bytes("stray")
    stray_key = policy_file_key("NPPF", "rev_NPPF_2027_01", sha256_bytes(stray))
    nppf.objects.put_bytes(stray_key, stray)

    result = consistency_audit()

    stored = last_audit(registry)
    assert stored is not None and stored.checked_at == result.before.checked_at
    assert (stored.revisions, stored.chunks, stored.files, stored.total) == (2, 12, 3, 1)
    assert stored.counts == result.before.counts() and stored.counts["unreferenced_file"] == 1
    assert stored.findings == [
        {
            "kind": "unreferenced_file",
            "source": "",
            "revision_id": "",
            "key": stray_key,
            "count": 0,
            "detail": "no revision refers to this file",
            "repair": "delete the file",
        }
    ]
    assert redis_client.type(LAST_AUDIT_KEY) == "string", "one key, written whole by one SET"

    repaired = consistency_audit(repair=True)

    assert repaired.after is not None
    stored = last_audit(registry)
    assert stored is not None and stored.ok and stored.findings == [], "the re-audit after repair is the last"
    assert stored.checked_at == repaired.after.checked_at


def test_a_stored_audit_keeps_every_count_but_only_the_first_findings_each_cut_short(nppf: Stores) -> None:
    """Many unreferenced files (an upload loop gone wrong): the record stays small, the total says how many."""
    for n in range(MAX_FINDINGS + 20):
        nppf.objects.put_bytes(f"policies/NPPF/rev_NPPF_2030_01/{n:04d}.pdf", b"%PDF-1.7 stray")

    report = audit_store(nppf.policies)

    stored = last_audit(nppf.policies.registry)
    assert stored is not None and stored.total == len(report.findings) == MAX_FINDINGS + 20
    assert stored.counts["unreferenced_file"] == MAX_FINDINGS + 20 and stored.left_out == 20
    assert [f["key"] for f in stored.findings] == [f.key for f in report.findings[:MAX_FINDINGS]]
    long = report.model_copy(update={"findings": [report.findings[0].model_copy(update={"detail": "x" * 5000})]})
    assert len(str(record_of(long).findings[0]["detail"])) == MAX_DETAIL_CHARS
