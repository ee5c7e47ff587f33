"""The consistency audit of application documents: each kind of damage a crash or an operator can leave is
found, the safe ones are repaired, and work in flight (a held claim) is never taken for damage."""

from __future__ import annotations

import pytest
import redis

from lib.composition import Stores
from lib.documents.audit import (
    DocumentFindingKind,
    audit_and_repair_documents,
    audit_documents,
)
from lib.documents.ingest import ingest_document
from lib.documents.models import IngestSuccess
from lib.documents.reads import get_document_text
from lib.documents.registry import DocumentRecord
from tests.fixtures_paths import TABLE_PDF
from tests.lib.documents.document_support import REF, assert_nothing_stored, put_in_inbox


@pytest.fixture
def docs(stores: Stores, redis_client: redis.Redis) -> Stores:
    return stores


def ingested(stores: Stores) -> tuple[IngestSuccess, DocumentRecord]:
    result = ingest_document(stores.documents, put_in_inbox(stores, TABLE_PDF, "Transport_Assessment.pdf"), REF)
    assert isinstance(result, IngestSuccess)
    record = stores.documents.registry.get(result.document_id)
    assert record is not None
    return result, record


def test_consistent_stores_have_no_findings(docs: Stores) -> None:
    result, _ = ingested(docs)
    report = audit_documents(docs.documents)
    assert report.ok and (report.documents, report.chunks, report.files) == (1, result.chunks_created, 1)
    assert report.counts() == {kind.value: 0 for kind in DocumentFindingKind}


def test_chunks_and_file_left_by_a_crash_before_registration_are_found_and_deleted(
    docs: Stores, redis_client: redis.Redis
) -> None:
    result, record = ingested(docs)
    docs.documents.registry.remove(record)  # as if the worker died just before registering

    before, actions, after = audit_and_repair_documents(docs.documents)

    assert sorted((f.kind.value, f.document_id, f.key, f.count) for f in before.findings) == [
        ("orphan_chunks", result.document_id, "", result.chunks_created),
        ("unreferenced_file", "", record.object_key, 0),
    ]
    assert [(a.kind.value, a.ok) for a in actions] == [("orphan_chunks", True), ("unreferenced_file", True)]
    assert after.ok
    assert_nothing_stored(docs, redis_client)


def test_an_ingestion_in_flight_is_not_reported(docs: Stores) -> None:
    result, record = ingested(docs)
    docs.documents.registry.remove(record)
    with docs.documents.registry.claim(result.document_id):
        assert audit_documents(docs.documents).ok
    assert not audit_documents(docs.documents).ok


def test_a_document_missing_chunks_is_rebuilt_from_its_stored_original(docs: Stores) -> None:
    result, record = ingested(docs)
    docs.documents.chunks.delete_ids(docs.documents.chunks.chunk_ids(result.document_id)[:3])

    before, actions, after = audit_and_repair_documents(docs.documents)

    assert [(f.kind.value, f.count) for f in before.findings] == [("chunk_count_mismatch", result.chunks_created - 3)]
    assert [(a.ok, a.outcome) for a in actions] == [(True, f"re-ingested: {result.chunks_created} chunks")]
    assert after.ok
    rebuilt = docs.documents.registry.get(result.document_id)
    assert rebuilt is not None and rebuilt.document_type == record.document_type == "transport_assessment"
    assert get_document_text(docs.documents, result.document_id).chunk_count == result.chunks_created


def test_a_missing_original_is_reported_for_an_operator_and_left_alone(docs: Stores) -> None:
    result, record = ingested(docs)
    docs.objects.delete(record.object_key)

    before, actions, after = audit_and_repair_documents(docs.documents)

    assert [(f.kind.value, f.key, f.repairable) for f in before.findings] == [
        ("missing_file", record.object_key, False)
    ]
    assert actions == [] and [f.kind.value for f in after.findings] == ["missing_file"]
    assert docs.documents.chunks.count_document(result.document_id) == result.chunks_created
