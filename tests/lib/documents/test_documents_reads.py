"""Reading application documents back (spec 003 FR-002..FR-004): search with its filters, full text, and
listings, over one application holding the NPPF (a long text PDF), a table and a scan with a text layer,
and a second application, ingested once for the module."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path

import pytest
import redis

from lib.composition import Stores
from lib.documents.ingest import ingest_document
from lib.documents.models import IngestSuccess
from lib.documents.reads import get_document_text, list_ingested_documents
from lib.documents.registry import DocumentRegistry
from lib.documents.search import search_application_docs
from lib.errors import DocumentNotFoundError, InvalidArgumentError, NoChunksError
from lib.stores.embeddings import Embedder
from tests.conftest import isolated_stores
from tests.fixtures_paths import NPPF_2024, SCANNED_WITH_TEXT_LAYER_PDF, TABLE_PDF
from tests.lib.documents.document_support import REF, inbox, put_in_inbox

OTHER_REF = "24/00042/FUL"
HIGHWAYS = "116. Development should only be prevented or refused on highways grounds if there\nwould be an unacceptable"


@dataclass
class Ingested:
    stores: Stores
    nppf: IngestSuccess
    table: IngestSuccess
    scan: IngestSuccess
    other: IngestSuccess


@pytest.fixture(scope="module")
def ingested(
    redis_url: str, chroma_dir: Path, tmp_path_factory: pytest.TempPathFactory, embedder: Embedder
) -> Iterator[Ingested]:
    """Four documents in two applications, in a Redis database of the module's own."""
    client = redis.Redis.from_url(redis_url.rsplit("/", 1)[0] + "/3", decode_responses=True)
    client.flushdb()
    folder = tmp_path_factory.mktemp("documents_reads")
    (folder / "inbox").mkdir()
    stores = isolated_stores(
        redis_url.rsplit("/", 1)[0] + "/3", folder, chroma_dir, embedder, allowed_file_roots=[folder / "inbox"]
    )
    results = [
        ingest_document(stores.documents, put_in_inbox(stores, NPPF_2024), REF),
        ingest_document(
            stores.documents, put_in_inbox(stores, TABLE_PDF, "Senate_expenditure.pdf"), REF, "planning_statement"
        ),
        ingest_document(stores.documents, put_in_inbox(stores, SCANNED_WITH_TEXT_LAYER_PDF), REF),
        ingest_document(stores.documents, put_in_inbox(stores, TABLE_PDF, "Transport_Assessment.pdf"), OTHER_REF),
    ]
    assert all(isinstance(r, IngestSuccess) for r in results), results
    yield Ingested(stores, *results)  # type: ignore[arg-type]
    client.flushdb()


def test_the_nppf_is_one_long_text_document_classified_by_its_content(ingested: Ingested) -> None:
    nppf = ingested.nppf
    assert (nppf.extraction_method, nppf.contains_drawings, nppf.document_type) == (
        "text_layer",
        False,
        "planning_statement",
    )
    assert nppf.chunks_created > 300 and nppf.total_words > 30_000
    assert ingested.stores.documents.chunks.count_document(nppf.document_id) == nppf.chunks_created


# --- search --------------------------------------------------------------------------------------------------


def test_search_finds_the_highways_paragraph_with_its_page_and_spec_metadata(ingested: Ingested) -> None:
    found = search_application_docs(
        ingested.stores.documents, "refusing development on highways grounds", application_ref=REF
    )
    assert found.status == "success" and found.results_count == len(found.results) == 10
    top = found.results[0]
    assert "highways grounds" in top.text
    assert top.metadata["document_id"] == ingested.nppf.document_id
    assert "33" in top.metadata["page_numbers"].split(",")
    assert top.metadata["source_file"] == NPPF_2024.name
    assert top.chunk_id.startswith(f"{ingested.nppf.document_id}_0")
    scores = [hit.score for hit in found.results]
    assert scores == sorted(scores, reverse=True) and all(0.0 <= s <= 1.0 for s in scores)
    assert all(hit.relevance_score is not None and 0.0 <= hit.relevance_score <= 1.0 for hit in found.results)


def test_application_ref_filter_keeps_to_one_application(ingested: Ingested) -> None:
    mine = search_application_docs(
        ingested.stores.documents, "travel card expenses", application_ref=OTHER_REF, max_results=50
    )
    assert mine.results and {hit.metadata["application_ref"] for hit in mine.results} == {OTHER_REF}
    assert len(mine.results) == ingested.other.chunks_created


def test_document_types_filter_and_both_filters_combined(ingested: Ingested) -> None:
    stores = ingested.stores
    statements = search_application_docs(
        stores.documents, "travel card expenses", document_types=["planning_statement"]
    )
    assert {hit.metadata["document_type"] for hit in statements.results} == {"planning_statement"}
    assert {hit.metadata["application_ref"] for hit in statements.results} == {REF}

    transport_here = search_application_docs(
        stores.documents, "travel card expenses", application_ref=REF, document_types=["transport_assessment"]
    )
    assert transport_here.results == []

    either = search_application_docs(
        stores.documents,
        "travel card expenses",
        application_ref=OTHER_REF,
        document_types=["transport_assessment", "planning_statement"],
        max_results=3,
    )
    assert either.results_count == 3
    assert {(h.metadata["application_ref"], h.metadata["document_type"]) for h in either.results} == {
        (OTHER_REF, "transport_assessment")
    }


def test_search_of_an_application_with_no_documents_is_empty(ingested: Ingested) -> None:
    assert search_application_docs(ingested.stores.documents, "anything", application_ref="99/99999/OUT").results == []


@pytest.mark.parametrize(
    "arguments",
    [
        {"query": ""},
        {"query": "   "},
        {"query": "x" * 2001},
        {"query": "parking", "max_results": 0},
        {"query": "parking", "max_results": 51},
        {"query": "parking", "max_results": True},
        {"query": "parking", "document_types": ["shopping_list"]},
        {"query": "parking", "application_ref": "///"},
    ],
)
def test_search_refuses_bad_arguments(ingested: Ingested, arguments: dict[str, object]) -> None:
    with pytest.raises(InvalidArgumentError):
        search_application_docs(ingested.stores.documents, **arguments)  # type: ignore[arg-type]


# --- full text -----------------------------------------------------------------------------------------------


def test_document_text_is_reassembled_in_order_without_repeating_the_overlaps(ingested: Ingested) -> None:
    text = get_document_text(ingested.stores.documents, ingested.nppf.document_id)
    assert (text.status, text.document_type, text.chunk_count) == (
        "success",
        "planning_statement",
        ingested.nppf.chunks_created,
    )
    assert text.application_ref == REF and text.source_file == NPPF_2024.name
    assert text.file_path == str(inbox(ingested.stores) / NPPF_2024.name)
    assert text.object_key.startswith("applications/25_01178_REM/") and text.object_key.endswith(".pdf")
    assert ingested.stores.objects.get_bytes(text.object_key) == NPPF_2024.read_bytes()
    assert text.text.count(HIGHWAYS) == 1
    assert text.text.index("1. Introduction") < text.text.index(HIGHWAYS) < text.text.rindex("Annex 2: Glossary")
    # Overlaps (200 characters a chunk) are dropped: the result is about as long as the extracted text.
    assert 0.97 * ingested.nppf.total_chars < len(text.text) < 1.03 * ingested.nppf.total_chars


def test_document_text_of_a_short_document(ingested: Ingested) -> None:
    text = get_document_text(ingested.stores.documents, ingested.table.document_id)
    assert "CITIBANK - TRAVEL CBA CARD" in text.text and text.chunk_count == ingested.table.chunks_created


def test_unknown_document_is_document_not_found(ingested: Ingested) -> None:
    with pytest.raises(DocumentNotFoundError) as raised:
        get_document_text(ingested.stores.documents, "25_01178_REM_000000")
    assert raised.value.envelope() == {
        "status": "error",
        "error_type": "document_not_found",
        "message": "Document not found: 25_01178_REM_000000",
    }
    with pytest.raises(InvalidArgumentError):
        get_document_text(ingested.stores.documents, "")


def test_registered_document_whose_chunks_are_gone_is_no_chunks(ingested: Ingested) -> None:
    """A record with no chunks behind it (what the audit reports) answers no_chunks rather than empty text."""
    registry: DocumentRegistry = ingested.stores.documents.registry
    record = registry.get(ingested.table.document_id)
    assert record is not None
    ghost = record.model_copy(update={"document_id": "25_01178_REM_ffffff", "file_hash": "f" * 64})
    assert registry.register(ghost)
    try:
        with pytest.raises(NoChunksError) as raised:
            get_document_text(ingested.stores.documents, ghost.document_id)
        assert raised.value.error_type == "no_chunks"
    finally:
        registry.remove(ghost)


# --- listings ------------------------------------------------------------------------------------------------


def test_list_gives_every_document_of_the_application_with_spec_fields(ingested: Ingested) -> None:
    listing = list_ingested_documents(ingested.stores.documents, REF)
    assert (listing.status, listing.application_ref, listing.document_count) == ("success", REF, 3)
    by_id = {doc.document_id: doc for doc in listing.documents}
    assert set(by_id) == {ingested.nppf.document_id, ingested.table.document_id, ingested.scan.document_id}
    scan = by_id[ingested.scan.document_id]
    assert (scan.document_type, scan.extraction_method, scan.contains_drawings, scan.chunk_count) == (
        "other",
        "text_layer",
        True,
        ingested.scan.chunks_created,
    )
    assert scan.source_file == SCANNED_WITH_TEXT_LAYER_PDF.name
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", scan.ingested_at)
    record = ingested.stores.documents.registry.get(scan.document_id)
    assert record is not None and scan.ingested_at == record.ingested_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert scan.file_path == str(inbox(ingested.stores) / SCANNED_WITH_TEXT_LAYER_PDF.name)
    assert scan.object_key == record.object_key != scan.file_path
    assert set(scan.model_dump()) >= {
        "document_id",
        "file_path",
        "document_type",
        "chunk_count",
        "ingested_at",
        "extraction_method",
        "contains_drawings",
    }


def test_list_of_an_application_with_nothing_ingested_is_empty(ingested: Ingested) -> None:
    listing = list_ingested_documents(ingested.stores.documents, "99/99999/OUT")
    assert listing.model_dump() == {
        "status": "success",
        "application_ref": "99/99999/OUT",
        "document_count": 0,
        "documents": [],
    }
