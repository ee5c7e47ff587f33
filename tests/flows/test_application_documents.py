"""``ingest_application_documents`` and ``remove_application_document`` end to end (spec 003, issue 5): a whole
application's folder with good, scanned, image-only, encrypted and unsupported files; one outcome row
per file; re-runs; files outside the roots; a failure that is not the file's fault; removal."""

from __future__ import annotations

import io
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pymupdf
import pytest
import redis
from PIL import Image
from prefect.artifacts import Artifact

from flows.application_documents import FLOW, ingest_application_documents, remove_application_document
from flows.common import artifact_key, bound_stores
from lib.composition import Stores, open_stores
from lib.config import Settings
from lib.documents.reads import get_document_text, list_ingested_documents
from lib.documents.registry import application_key
from lib.errors import PathNotAllowedError
from tests.fixtures_paths import ENCRYPTED_PASSWORD_PDF, IMAGE_ONLY_PDF, SCANNED_WITH_TEXT_LAYER_PDF, TABLE_PDF
from tests.lib.documents.document_support import scanned_pages

REF = "25/01178/REM"


def stored_artifact(key: str) -> Artifact | None:
    """``Artifact.get`` as called from sync code, which returns the artifact rather than a coroutine."""
    return cast("Artifact | None", Artifact.get(key))


@pytest.fixture
def docs_kb(flow_settings: Settings, redis_client: redis.Redis) -> Iterator[Stores]:
    """The flow tests' stores with an application-document collection of the test's own, bound for the flows."""
    settings = flow_settings.replace(document_collection=f"appdocs_{uuid.uuid4().hex[:16]}")
    settings.files.allowed_roots[0].mkdir(parents=True, exist_ok=True)
    stores = open_stores(settings)
    with bound_stores(stores):
        yield stores


@pytest.fixture
def application_folder(docs_kb: Stores) -> Path:
    """What the worker downloads for one application: reports, a scan, drawings, a locked PDF, a Word file."""
    folder = docs_kb.settings.files.allowed_roots[0] / "25_01178_REM"
    folder.mkdir()
    shutil.copyfile(TABLE_PDF, folder / "Transport_Assessment.pdf")
    shutil.copyfile(SCANNED_WITH_TEXT_LAYER_PDF, folder / "Heritage_Statement.pdf")
    shutil.copyfile(IMAGE_ONLY_PDF, folder / "Site_Plan.pdf")
    shutil.copyfile(ENCRYPTED_PASSWORD_PDF, folder / "Ecology_Report.pdf")
    (folder / "Cover_Letter.docx").write_bytes(b"PK\x03\x04 not a PDF")
    png = io.BytesIO()
    Image.new("L", (800, 600), 255).save(png, format="PNG")
    (folder / "Elevations.pdf").write_bytes(png.getvalue())  # a drawing exported as PNG, saved under a PDF name
    (folder / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    with pymupdf.open(TABLE_PDF) as table, scanned_pages(1) as scan, pymupdf.open() as report:
        report.insert_pdf(table)
        report.insert_pdf(scan)
        report.save(folder / "Planning_Statement.pdf", deflate=True)
    return folder


def rows_by_file(result_rows: list[dict[str, object]]) -> dict[str, dict[str, object]]:
    return {str(row["file"]): row for row in result_rows}


def test_a_whole_application_folder_gives_one_outcome_per_file_and_bad_files_do_not_stop_the_rest(
    docs_kb: Stores, application_folder: Path
) -> None:
    result = ingest_application_documents(application_ref=REF, folder_or_paths=str(application_folder))

    assert [row.file for row in result.documents] == [
        "Cover_Letter.docx",
        "Ecology_Report.pdf",
        "Elevations.pdf",
        "Heritage_Statement.pdf",
        "Planning_Statement.pdf",
        "Site_Plan.pdf",
        "Transport_Assessment.pdf",
    ]
    rows = {row.file: row for row in result.documents}
    assert (rows["Cover_Letter.docx"].status, rows["Cover_Letter.docx"].error_type) == (
        "error",
        "unsupported_file_type",
    )
    assert (rows["Ecology_Report.pdf"].status, rows["Ecology_Report.pdf"].error_type) == ("error", "encrypted")
    assert (rows["Elevations.pdf"].status, rows["Elevations.pdf"].error_type) == ("error", "unsupported_file_type")
    assert (rows["Site_Plan.pdf"].status, rows["Site_Plan.pdf"].error_type) == ("skipped", "image_based")
    heritage, planning, transport = (
        rows["Heritage_Statement.pdf"],
        rows["Planning_Statement.pdf"],
        rows["Transport_Assessment.pdf"],
    )
    assert (heritage.status, heritage.document_type, heritage.extraction_method, heritage.contains_drawings) == (
        "success",
        "heritage_statement",
        "text_layer",
        True,
    )
    assert (planning.status, planning.extraction_method) == ("success", "mixed")  # its scanned pages were OCR'd
    assert "Johnston is coming with fifty" in get_document_text(docs_kb.documents, planning.document_id).text
    assert (transport.status, transport.document_type) == ("success", "transport_assessment")
    assert (result.count("success"), result.count("skipped"), result.count("error")) == (3, 1, 3)

    listing = list_ingested_documents(docs_kb.documents, REF)
    assert {d.document_id for d in listing.documents} == {
        heritage.document_id,
        planning.document_id,
        transport.document_id,
    }
    by_id = {d.document_id: d.file_path for d in listing.documents}
    assert by_id[transport.document_id] == str(application_folder.resolve() / "Transport_Assessment.pdf")
    assert docs_kb.documents.chunks.count() == heritage.chunks + planning.chunks + transport.chunks

    table = stored_artifact(artifact_key(FLOW, REF))
    assert table is not None and table.type == "table"
    assert "Ecology_Report.pdf" in str(table.data) and "encrypted" in str(table.data)
    assert table.description == f"Documents of application {REF}: 3 success, 0 already_ingested, 1 skipped, 3 error"


def test_running_the_flow_again_changes_nothing(docs_kb: Stores) -> None:
    application_folder = docs_kb.settings.files.allowed_roots[0] / "25_01178_REM"
    application_folder.mkdir()
    shutil.copyfile(TABLE_PDF, application_folder / "Transport_Assessment.pdf")
    shutil.copyfile(SCANNED_WITH_TEXT_LAYER_PDF, application_folder / "Heritage_Statement.pdf")
    shutil.copyfile(ENCRYPTED_PASSWORD_PDF, application_folder / "Ecology_Report.pdf")
    first = ingest_application_documents(application_ref=REF, folder_or_paths=str(application_folder))
    chunks = docs_kb.documents.chunks.count()

    again = ingest_application_documents(application_ref=REF, folder_or_paths=str(application_folder))

    before = {row.file: row for row in first.documents if row.status == "success"}
    after = {row.file: row for row in again.documents}
    assert len(before) == 2 and {after[file].status for file in before} == {"already_ingested"}
    assert after["Ecology_Report.pdf"].error_type == "encrypted"
    assert all(after[file].document_id == before[file].document_id for file in before)
    assert docs_kb.documents.chunks.count() == chunks


def test_a_list_of_paths_is_ingested_and_a_path_outside_the_roots_is_its_own_error_row(
    docs_kb: Stores, tmp_path: Path
) -> None:
    inside = docs_kb.settings.files.allowed_roots[0] / "Flood_Risk_Assessment.pdf"
    shutil.copyfile(TABLE_PDF, inside)
    outside = tmp_path / "elsewhere" / "Noise_Assessment.pdf"
    outside.parent.mkdir()
    shutil.copyfile(TABLE_PDF, outside)

    result = ingest_application_documents(application_ref=REF, folder_or_paths=[str(outside), str(inside)])

    assert [(row.file, row.status, row.error_type) for row in result.documents] == [
        ("Noise_Assessment.pdf", "error", "path_not_allowed"),
        ("Flood_Risk_Assessment.pdf", "success", ""),
    ]
    assert str(outside) not in result.documents[0].message


def test_a_folder_outside_the_roots_fails_the_run_before_reading_anything(docs_kb: Stores, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    shutil.copyfile(TABLE_PDF, tmp_path / "elsewhere" / "Transport_Assessment.pdf")
    with pytest.raises(PathNotAllowedError):
        ingest_application_documents(application_ref=REF, folder_or_paths=str(tmp_path / "elsewhere"))
    assert docs_kb.documents.chunks.count() == 0


def test_a_failure_that_is_not_the_files_fault_fails_the_run_after_the_other_files(
    docs_kb: Stores, redis_client: redis.Redis
) -> None:
    """The application's index key holds a string, so Redis refuses to register its documents: every file
    is tried and recorded as ``internal``, nothing is half written, and the run ends Failed."""
    inbox = docs_kb.settings.files.allowed_roots[0]
    shutil.copyfile(TABLE_PDF, inbox / "Transport_Assessment.pdf")
    shutil.copyfile(ENCRYPTED_PASSWORD_PDF, inbox / "Locked.pdf")
    redis_client.set(application_key(REF), "not a set")

    state = ingest_application_documents(
        application_ref=REF,
        folder_or_paths=[str(inbox / "Transport_Assessment.pdf"), str(inbox / "Locked.pdf")],
        return_state=True,
    )

    assert state.is_failed()
    table = stored_artifact(artifact_key(FLOW, REF))
    assert table is not None and '"internal"' in str(table.data) and '"encrypted"' in str(table.data)
    assert docs_kb.documents.chunks.count() == 0
    assert list(docs_kb.objects.list("applications/")) == []


def test_remove_flow_deletes_a_document_everywhere(docs_kb: Stores) -> None:
    inbox = docs_kb.settings.files.allowed_roots[0]
    shutil.copyfile(TABLE_PDF, inbox / "Transport_Assessment.pdf")
    ingested = ingest_application_documents(
        application_ref=REF, folder_or_paths=[str(inbox / "Transport_Assessment.pdf")]
    )
    document_id = ingested.documents[0].document_id

    removed = remove_application_document(document_id=document_id)

    assert (removed.document_id, removed.chunks_removed, removed.file_removed) == (
        document_id,
        ingested.documents[0].chunks,
        True,
    )
    assert list_ingested_documents(docs_kb.documents, REF).document_count == 0
    assert docs_kb.documents.chunks.count() == 0
    assert list(docs_kb.objects.list("applications/")) == []
    summary = stored_artifact(artifact_key(FLOW, "removed", document_id))
    assert summary is not None and "chunks removed" in str(summary.data)
