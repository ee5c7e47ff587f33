"""Ingesting application documents (spec 003 FR-001, FR-005, FR-008, NFR-002) on real files, real Redis,
real Chroma and a real object store: outcomes, refusals that leave nothing behind, the path rule,
idempotency under concurrency, and deletion."""

from __future__ import annotations

import io
import logging
import os
import threading
from pathlib import Path

import pymupdf
import pytest
import redis
from PIL import Image, ImageDraw, ImageFont

from lib.composition import Stores
from lib.documents.deletion import delete_document
from lib.documents.ingest import ingest_document, ingest_document_bytes
from lib.documents.models import AlreadyIngested, IngestSuccess, SkippedDocument
from lib.documents.reads import get_document_text, list_ingested_documents
from lib.documents.registry import (
    CLAIM_LEASE_SECONDS,
    DocumentRecord,
    application_key,
    claim_key,
    make_document_id,
)
from lib.documents.search import search_application_docs
from lib.errors import (
    DocumentIdConflictError,
    DocumentNotFoundError,
    EncryptedPdfError,
    ExtractionFailedError,
    FileNotFoundInStoreError,
    IngestionInProgressError,
    InvalidArgumentError,
    KBError,
    NoContentError,
    PathNotAllowedError,
    UnsupportedFileTypeError,
)
from lib.stores.objects import sha256_file
from tests.fixtures_paths import (
    EMPTY_PDF,
    ENCRYPTED_AES256_PDF,
    ENCRYPTED_PASSWORD_PDF,
    IMAGE_ONLY_PDF,
    MALFORMED_PDF,
    SCANNED_WITH_TEXT_LAYER_PDF,
    TABLE_PDF,
)
from tests.lib.documents.document_support import (
    REF,
    assert_nothing_stored,
    inbox,
    put_in_inbox,
    scanned_pages,
    stored_files,
    stored_keys,
    write_in_inbox,
)
from tests.polling import eventually

FR_008_CHUNK_FIELDS = {
    "application_ref",
    "document_id",
    "source_file",
    "document_type",
    "page_numbers",
    "chunk_index",
    "total_chunks",
    "extraction_method",
    "char_count",
    "word_count",
    "printed_page",
    "printed_pages",
}


@pytest.fixture
def docs(stores: Stores, redis_client: redis.Redis) -> Stores:
    return stores


def png_with_text(lines: list[str]) -> bytes:
    font = ImageFont.load_default(size=64)
    image = Image.new("L", (1600, 120 + 100 * len(lines)), 255)
    draw = ImageDraw.Draw(image)
    for index, line in enumerate(lines):
        draw.text((60, 60 + 100 * index), line, font=font, fill=0)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def assert_clean(error: KBError, *forbidden: Path) -> None:
    assert error.message
    for path in forbidden:
        assert str(path) not in error.message


# --- success ---------------------------------------------------------------------------------------------


def test_text_pdf_is_ingested_with_spec_ids_metadata_registry_entry_and_stored_original(
    docs: Stores, redis_client: redis.Redis
) -> None:
    path = put_in_inbox(docs, TABLE_PDF, "Transport_Assessment.pdf")
    sha = sha256_file(path)

    result = ingest_document(docs.documents, str(path), REF)

    assert isinstance(result, IngestSuccess)
    assert result.document_id == f"25_01178_REM_{sha[:6]}"
    assert (result.extraction_method, result.contains_drawings, result.document_type) == (
        "text_layer",
        False,
        "transport_assessment",
    )
    assert result.total_chars > 4000 and result.total_words > 500
    chunks = docs.documents.chunks.document_chunks(result.document_id)
    assert len(chunks) == result.chunks_created > 3
    for index, chunk in enumerate(chunks):
        assert chunk.id == f"25_01178_REM_{sha[:6]}_001_{index:03d}"
        assert set(chunk.metadata) == FR_008_CHUNK_FIELDS
        assert chunk.metadata == {
            "application_ref": REF,
            "document_id": result.document_id,
            "source_file": "Transport_Assessment.pdf",
            "document_type": "transport_assessment",
            "page_numbers": "1",
            "chunk_index": index,
            "total_chunks": result.chunks_created,
            "extraction_method": "text_layer",
            "char_count": len(chunk.text),
            "word_count": len(chunk.text.split()),
            "printed_page": "",
            "printed_pages": "",
        }
    record = docs.documents.registry.get(result.document_id)
    assert record is not None
    assert (record.application_ref, record.file_hash, record.chunk_count, record.page_count) == (
        REF,
        sha,
        result.chunks_created,
        1,
    )
    assert record.file_path == str(path)
    assert record.object_key == f"applications/25_01178_REM/{sha}.pdf"
    assert docs.objects.get_bytes(record.object_key) == TABLE_PDF.read_bytes()
    assert redis_client.smembers(application_key(REF)) == {result.document_id}
    assert redis_client.smembers("appdocs_all") == {result.document_id}
    assert not redis_client.exists(claim_key(result.document_id))


def test_second_ingestion_of_the_same_file_is_already_ingested_and_adds_no_chunks(docs: Stores) -> None:
    path = put_in_inbox(docs, TABLE_PDF)
    first = ingest_document(docs.documents, path, REF)
    before = docs.documents.chunks.count()
    renamed = put_in_inbox(docs, TABLE_PDF, "same_bytes_other_name.pdf")

    again = ingest_document(docs.documents, path, REF)
    other_name = ingest_document(docs.documents, renamed, REF)

    assert isinstance(first, IngestSuccess)
    assert again == other_name == AlreadyIngested(document_id=first.document_id)
    assert again.message == "Document has already been ingested with the same content"
    assert docs.documents.chunks.count() == before


def test_the_same_file_for_another_application_is_a_document_of_its_own(docs: Stores) -> None:
    path = put_in_inbox(docs, TABLE_PDF)
    first = ingest_document(docs.documents, path, REF)
    second = ingest_document(docs.documents, path, "24/00042/FUL")
    assert isinstance(first, IngestSuccess) and isinstance(second, IngestSuccess)
    assert second.document_id.startswith("24_00042_FUL_") and second.document_id != first.document_id
    assert docs.documents.chunks.count() == first.chunks_created + second.chunks_created


def test_references_that_sanitise_alike_cannot_share_a_document_id(docs: Stores) -> None:
    path = put_in_inbox(docs, TABLE_PDF)
    ingest_document(docs.documents, path, REF)
    with pytest.raises(DocumentIdConflictError) as raised:
        ingest_document(docs.documents, path, "25_01178_REM")
    assert raised.value.error_type == "document_id_conflict"
    assert list_ingested_documents(docs.documents, "25_01178_REM").document_count == 0


def test_concurrent_ingestions_of_one_file_give_one_ingestion_and_one_already_ingested(
    docs: Stores, redis_client: redis.Redis
) -> None:
    path = put_in_inbox(docs, TABLE_PDF)
    barrier = threading.Barrier(2)
    results: list[object] = []

    def worker() -> None:
        barrier.wait()
        try:
            results.append(ingest_document(docs.documents, path, REF))
        except BaseException as exc:  # surfaced by the assertion below
            results.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    statuses = sorted(getattr(r, "status", repr(r)) for r in results)
    assert statuses == ["already_ingested", "success"]
    success = next(r for r in results if isinstance(r, IngestSuccess))
    assert docs.documents.chunks.count() == success.chunks_created
    assert docs.documents.registry.all_ids() == {success.document_id}
    assert not redis_client.exists(claim_key(success.document_id))


def test_claim_of_a_worker_that_died_lapses_and_the_next_ingestion_proceeds(
    docs: Stores, redis_client: redis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    path = put_in_inbox(docs, TABLE_PDF)
    document_id = make_document_id(REF, sha256_file(path))
    redis_client.set(claim_key(document_id), "a worker that died", px=1_000)  # its lease, never renewed
    caplog.set_level(logging.INFO, logger="lib.documents.registry")

    result = ingest_document(docs.documents, path, REF)

    assert isinstance(result, IngestSuccess)
    assert "documents.claim_wait" in caplog.text


def test_claim_is_renewed_while_held_and_a_waiter_gives_up_with_ingestion_in_progress(
    docs: Stores, redis_client: redis.Redis
) -> None:
    registry = docs.documents.registry
    key = claim_key("X_abcdef")
    with registry.claim("X_abcdef", lease_seconds=3):  # renewed every second
        redis_client.pexpire(key, 2_000)
        eventually(lambda: redis_client.pttl(key) > 2_000)  # a renewal put the whole lease back
        with pytest.raises(IngestionInProgressError) as raised, registry.claim("X_abcdef", wait_seconds=0.3):
            pass
    assert raised.value.error_type == "ingestion_in_progress"
    assert not redis_client.exists(key)
    assert CLAIM_LEASE_SECONDS >= 10


def test_document_type_argument_overrides_classification_and_unknown_types_are_refused(docs: Stores) -> None:
    path = put_in_inbox(docs, TABLE_PDF, "Transport_Assessment.pdf")
    with pytest.raises(InvalidArgumentError):
        ingest_document(docs.documents, path, REF, document_type="shopping_list")
    result = ingest_document(docs.documents, path, REF, document_type="planning_statement")
    assert isinstance(result, IngestSuccess) and result.document_type == "planning_statement"
    assert {c.metadata["document_type"] for c in docs.documents.chunks.document_chunks(result.document_id)} == {
        "planning_statement"
    }


@pytest.mark.parametrize("ref", ["", "   ", "///", "x" * 101, "25/01\n178"])
def test_malformed_application_refs_are_refused(docs: Stores, ref: str) -> None:
    path = put_in_inbox(docs, TABLE_PDF)
    with pytest.raises(InvalidArgumentError):
        ingest_document(docs.documents, path, ref)


# --- scans, drawings and OCR -------------------------------------------------------------------------------


def test_image_only_pdf_is_skipped_as_image_based_and_nothing_is_stored(
    docs: Stores, redis_client: redis.Redis
) -> None:
    result = ingest_document(docs.documents, put_in_inbox(docs, IMAGE_ONLY_PDF), REF)
    assert result == SkippedDocument(image_ratio=1.0, total_pages=6)
    assert result.model_dump() == {"status": "skipped", "reason": "image_based", "image_ratio": 1.0, "total_pages": 6}
    assert_nothing_stored(docs, redis_client)


def test_scan_without_a_text_layer_is_skipped_as_image_based(docs: Stores, redis_client: redis.Redis) -> None:
    with scanned_pages(2) as scan:
        path = write_in_inbox(docs, "Scanned_Letter.pdf", scan.tobytes(deflate=True))
    result = ingest_document(docs.documents, path, REF)
    assert isinstance(result, SkippedDocument) and result.total_pages == 2 and result.image_ratio > 0.99
    assert_nothing_stored(docs, redis_client)


def test_scan_that_carries_a_text_layer_is_ingested_from_it_and_flagged_as_containing_drawings(
    docs: Stores,
) -> None:
    result = ingest_document(docs.documents, put_in_inbox(docs, SCANNED_WITH_TEXT_LAYER_PDF), REF)
    assert isinstance(result, IngestSuccess)
    assert (result.extraction_method, result.contains_drawings) == ("text_layer", True)
    text = get_document_text(docs.documents, result.document_id).text
    assert "Johnston is coming with fifty" in text


def test_text_document_with_a_scanned_appendix_page_is_ocrd_and_mixed(docs: Stores) -> None:
    with pymupdf.open(TABLE_PDF) as table, scanned_pages(1) as scan, pymupdf.open() as combined:
        combined.insert_pdf(table)
        combined.insert_pdf(scan)
        path = write_in_inbox(docs, "Report_with_appendix.pdf", combined.tobytes(deflate=True))

    result = ingest_document(docs.documents, path, REF)

    assert isinstance(result, IngestSuccess)
    assert (result.extraction_method, result.contains_drawings) == ("mixed", True)
    chunks = docs.documents.chunks.document_chunks(result.document_id)
    ocr_chunks = [c for c in chunks if "Johnston" in c.text]
    assert ocr_chunks and all("2" in c.metadata["page_numbers"].split(",") for c in ocr_chunks)
    assert chunks[-1].id.split("_")[-2] == "002"
    assert {c.metadata["extraction_method"] for c in chunks} == {"mixed"}


def test_png_is_ocrd_whole_and_not_skipped_as_image_based(docs: Stores) -> None:
    path = write_in_inbox(docs, "Highways_Response.png", png_with_text(["Transport Assessment", "Trip generation"]))
    result = ingest_document(docs.documents, path, REF)
    assert isinstance(result, IngestSuccess)
    assert (result.extraction_method, result.chunks_created, result.document_type) == ("ocr", 1, "transport_assessment")
    record = docs.documents.registry.get(result.document_id)
    assert record is not None and record.object_key.endswith(".png") and record.contains_drawings
    assert "Trip generation" in get_document_text(docs.documents, result.document_id).text


def test_png_named_as_a_rendering_is_not_ocrd_so_it_has_no_content(docs: Stores, redis_client: redis.Redis) -> None:
    path = write_in_inbox(docs, "Birds_Eye_View_CGI.png", png_with_text(["Transport Assessment"]))
    with pytest.raises(NoContentError) as raised:
        ingest_document(docs.documents, path, REF)
    assert raised.value.error_type == "no_content"
    assert_nothing_stored(docs, redis_client)


# --- refusals leave nothing behind --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "error", "error_type"),
    [
        (ENCRYPTED_AES256_PDF, EncryptedPdfError, "encrypted"),
        (ENCRYPTED_PASSWORD_PDF, EncryptedPdfError, "encrypted"),
        (EMPTY_PDF, UnsupportedFileTypeError, "unsupported_file_type"),  # zero bytes: no type to read
    ],
)
def test_unreadable_pdfs_are_refused_cleanly_and_nothing_is_stored(
    docs: Stores, redis_client: redis.Redis, source: Path, error: type[KBError], error_type: str
) -> None:
    path = put_in_inbox(docs, source)
    with pytest.raises(error) as raised:
        ingest_document(docs.documents, path, REF)
    assert raised.value.error_type == error_type
    assert_clean(raised.value, path, inbox(docs))
    assert_nothing_stored(docs, redis_client)


def test_malformed_pdf_whose_only_page_is_a_scan_is_skipped_and_nothing_is_stored(
    docs: Stores, redis_client: redis.Redis
) -> None:
    """MuPDF repairs it: one full-page scan whose text layer is a 9-character date, nothing to read."""
    result = ingest_document(docs.documents, put_in_inbox(docs, MALFORMED_PDF), REF)
    assert isinstance(result, SkippedDocument) and result.total_pages == 1
    assert_nothing_stored(docs, redis_client)


@pytest.mark.parametrize(
    ("name", "data", "error_type"),
    [
        ("truncated.pdf", TABLE_PDF.read_bytes()[:400], "extraction_failed"),
        ("damaged.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, "extraction_failed"),
        ("not_a_pdf.pdf", b"Meeting notes, not a PDF at all\n" * 20, "unsupported_file_type"),
        ("Site_Plan.pdf", png_with_text(["Site plan"]), "unsupported_file_type"),
        ("empty.pdf", b"", "unsupported_file_type"),
        ("notes.txt", b"Transport assessment notes\n", "unsupported_file_type"),
        ("Statement.docx", b"PK\x03\x04 word document", "unsupported_file_type"),
        ("Highways_Response.png", TABLE_PDF.read_bytes(), "unsupported_file_type"),
        ("error_page.pdf", b"<html><body>404 Not Found</body></html>", "unsupported_file_type"),
    ],
    ids=[
        "truncated-pdf",
        "damaged-png",
        "text-named-pdf",
        "png-named-pdf",
        "zero-bytes",
        "txt",
        "docx",
        "pdf-named-png",
        "html-named-pdf",
    ],
)
def test_broken_and_unsupported_files_are_refused_and_nothing_is_stored(
    docs: Stores, redis_client: redis.Redis, name: str, data: bytes, error_type: str
) -> None:
    path = write_in_inbox(docs, name, data)
    with pytest.raises((ExtractionFailedError, UnsupportedFileTypeError)) as raised:
        ingest_document(docs.documents, path, REF)
    assert raised.value.error_type == error_type
    assert_clean(raised.value, path, inbox(docs))
    assert_nothing_stored(docs, redis_client)


def test_the_content_decides_the_type_so_a_pdf_without_a_known_extension_is_ingested_as_a_pdf(
    docs: Stores,
) -> None:
    result = ingest_document(docs.documents, write_in_inbox(docs, "download_1234", TABLE_PDF.read_bytes()), REF)
    assert isinstance(result, IngestSuccess) and result.extraction_method == "text_layer"
    record = docs.documents.registry.get(result.document_id)
    assert record is not None and record.object_key.endswith(".pdf") and record.source_file == "download_1234"


def test_bytes_ingested_without_a_path_record_their_file_name_as_file_path(docs: Stores) -> None:
    result = ingest_document_bytes(
        docs.documents, TABLE_PDF.read_bytes(), file_name="Transport_Assessment.pdf", application_ref=REF
    )
    assert isinstance(result, IngestSuccess)
    listed = list_ingested_documents(docs.documents, REF).documents
    assert [(d.file_path, d.source_file) for d in listed] == [("Transport_Assessment.pdf", "Transport_Assessment.pdf")]
    assert listed[0].object_key.startswith("applications/25_01178_REM/")


def test_a_record_written_before_object_key_existed_reads_its_key_and_names_the_file(
    docs: Stores, redis_client: redis.Redis
) -> None:
    result = ingest_document(docs.documents, put_in_inbox(docs, TABLE_PDF, "Transport_Assessment.pdf"), REF)
    assert isinstance(result, IngestSuccess)
    record = docs.documents.registry.get(result.document_id)
    assert record is not None
    key = f"appdoc:{result.document_id}"
    redis_client.hset(key, "file_path", record.object_key)
    redis_client.hdel(key, "object_key")

    old = docs.documents.registry.get(result.document_id)

    assert old is not None and (old.file_path, old.object_key) == ("Transport_Assessment.pdf", record.object_key)
    assert delete_document(docs.documents, result.document_id).file_removed


def test_every_registration_and_removal_moves_the_registry_and_application_generations(
    docs: Stores, redis_client: redis.Redis
) -> None:
    """What other replicas compare their lexical blocks against; a registration that fails moves nothing."""
    registry = docs.documents.registry
    assert (registry.generation(), registry.application_generations([REF, "24/00042/FUL"])) == (0, [0, 0])
    result = ingest_document(docs.documents, put_in_inbox(docs, TABLE_PDF), REF)
    assert isinstance(result, IngestSuccess)
    assert (registry.generation(), registry.application_generations([REF, "24/00042/FUL"])) == (1, [1, 0])
    assert registry.application_refs() == [REF]

    delete_document(docs.documents, result.document_id)

    assert (registry.generation(), registry.application_generations([REF]), registry.application_refs()) == (2, [2], [])
    redis_client.set(application_key(REF), "not a set")
    with pytest.raises(redis.ResponseError):
        ingest_document(docs.documents, put_in_inbox(docs, TABLE_PDF), REF)
    assert (registry.generation(), registry.application_generations([REF])) == (2, [2])


def test_failure_after_chunks_were_written_undoes_them_and_the_stored_file(
    docs: Stores, redis_client: redis.Redis
) -> None:
    """Registration fails (the application's index key holds a string, so Redis refuses SADD) after the
    original and the chunks were written: both are removed again and no record is left."""
    redis_client.set(application_key(REF), "not a set")
    with pytest.raises(redis.ResponseError):
        ingest_document(docs.documents, put_in_inbox(docs, TABLE_PDF), REF)
    assert stored_keys(redis_client) == [application_key(REF)]
    assert docs.documents.chunks.count() == 0
    assert stored_files(docs) == []


# --- the path rule -------------------------------------------------------------------------------------------


def test_path_escaping_the_root_with_dot_dot_is_not_allowed(docs: Stores, redis_client: redis.Redis) -> None:
    outside = inbox(docs).parent / "outside.pdf"
    outside.write_bytes(TABLE_PDF.read_bytes())
    with pytest.raises(PathNotAllowedError) as raised:
        ingest_document(docs.documents, f"{inbox(docs)}/../outside.pdf", REF)
    assert raised.value.error_type == "path_not_allowed"
    assert_clean(raised.value, outside)
    assert_nothing_stored(docs, redis_client)


def test_absolute_path_elsewhere_is_not_allowed(docs: Stores, redis_client: redis.Redis) -> None:
    with pytest.raises(PathNotAllowedError) as raised:
        ingest_document(docs.documents, str(TABLE_PDF.resolve()), REF)
    assert_clean(raised.value, TABLE_PDF.resolve())
    assert_nothing_stored(docs, redis_client)


def test_symlink_inside_the_root_pointing_out_of_it_is_not_allowed(docs: Stores, redis_client: redis.Redis) -> None:
    link = inbox(docs) / "Transport_Assessment.pdf"
    os.symlink(TABLE_PDF.resolve(), link)
    with pytest.raises(PathNotAllowedError) as raised:
        ingest_document(docs.documents, link, REF)
    assert_clean(raised.value, TABLE_PDF.resolve())
    assert_nothing_stored(docs, redis_client)


def test_symlink_within_the_root_is_followed_and_the_link_name_is_the_source_file(docs: Stores) -> None:
    (inbox(docs) / "downloads").mkdir()
    target = put_in_inbox(docs, TABLE_PDF, "downloads/1234.pdf")
    link = inbox(docs) / "Flood_Risk_Assessment.pdf"
    os.symlink(target, link)
    result = ingest_document(docs.documents, link, REF)
    assert isinstance(result, IngestSuccess) and result.document_type == "flood_risk_assessment"


def test_missing_file_inside_the_root_is_file_not_found(docs: Stores, redis_client: redis.Redis) -> None:
    with pytest.raises(FileNotFoundInStoreError) as raised:
        ingest_document(docs.documents, inbox(docs) / "missing.pdf", REF)
    assert raised.value.error_type == "file_not_found"
    assert_nothing_stored(docs, redis_client)


# --- hiding, listing and deleting ----------------------------------------------------------------------------


def test_chunks_of_an_unregistered_document_are_never_returned_by_search(docs: Stores) -> None:
    """A crash between writing chunks and registering leaves orphans; the registry decides what is seen."""
    result = ingest_document(docs.documents, put_in_inbox(docs, TABLE_PDF), REF)
    assert isinstance(result, IngestSuccess)
    record = docs.documents.registry.get(result.document_id)
    assert isinstance(record, DocumentRecord)
    assert search_application_docs(docs.documents, "travel card expenses").results_count > 0

    docs.documents.registry.remove(record)

    assert search_application_docs(docs.documents, "travel card expenses").results == []


def test_delete_removes_chunks_registry_entry_and_file_and_a_second_delete_is_not_found(
    docs: Stores, redis_client: redis.Redis
) -> None:
    result = ingest_document(docs.documents, put_in_inbox(docs, TABLE_PDF), REF)
    assert isinstance(result, IngestSuccess)

    deleted = delete_document(docs.documents, result.document_id)

    assert (deleted.chunks_removed, deleted.file_removed, deleted.application_ref) == (
        result.chunks_created,
        True,
        REF,
    )
    assert_nothing_stored(docs, redis_client)
    assert list_ingested_documents(docs.documents, REF).document_count == 0
    with pytest.raises(DocumentNotFoundError) as raised:
        delete_document(docs.documents, result.document_id)
    assert raised.value.error_type == "document_not_found"
    assert isinstance(ingest_document(docs.documents, put_in_inbox(docs, TABLE_PDF), REF), IngestSuccess)
