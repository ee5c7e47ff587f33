"""File types by content (issue 13): the one check every intake makes, and the policy intakes refusing what is
not a PDF before anything is stored."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from lib.composition import Stores
from lib.errors import UnsupportedFileTypeError
from lib.policies.lifecycle import read_source_file, register_revision
from lib.policies.models import PolicyCreate, RevisionCreate
from lib.text.filetypes import JPEG, PDF, PNG, TEXT, TIFF, FileKind, detect_file_type
from tests.fixtures_paths import TABLE_PDF

DOCUMENTS = {FileKind.PDF, FileKind.IMAGE}


def image_bytes(format: str) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (40, 30), (255, 255, 255)).save(buffer, format=format)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("data", "name", "expected"),
    [
        (TABLE_PDF.read_bytes(), "Transport_Assessment.pdf", PDF),
        (b"\xef\xbb\xbf junk a portal put first\n" + TABLE_PDF.read_bytes(), "statement.pdf", PDF),
        (TABLE_PDF.read_bytes(), "download_1234", PDF),
        (TABLE_PDF.read_bytes(), "upload.bin", PDF),
        (image_bytes("PNG"), "Site_Plan.png", PNG),
        (image_bytes("JPEG"), "photo.jpeg", JPEG),
        (image_bytes("PNG"), "photo.jpg", PNG),
        (image_bytes("TIFF"), "drawings.tif", TIFF),
    ],
    ids=["pdf", "pdf-after-junk", "pdf-no-extension", "pdf-unknown-extension", "png", "jpeg", "png-as-jpg", "tiff"],
)
def test_the_content_decides_the_type(data: bytes, name: str, expected: object) -> None:
    assert detect_file_type(data, DOCUMENTS, file_name=name) == expected


@pytest.mark.parametrize(
    ("data", "name", "words"),
    [
        (image_bytes("PNG"), "Site_Plan.pdf", "the name says a PDF but the content is a PNG image"),
        (b"", "empty.pdf", "empty (0 bytes)"),
        (b"Meeting notes, not a PDF\n" * 10, "notes.pdf", "the content is text"),
        (b"<html><body>404</body></html>", "statement.pdf", "the content is text"),
        (b"PK\x03\x04\x14\x00\x06\x00" + bytes(range(256)), "Statement.docx", "of no recognised type"),
        (b" " * 1024 + b"%PDF-1.7\n", "late_header.pdf", "the content is text"),
        (TABLE_PDF.read_bytes(), "plan.png", "the name says an image (PNG, JPEG, TIFF, BMP) but the content is a PDF"),
    ],
    ids=["png-named-pdf", "zero-bytes", "text-named-pdf", "html-named-pdf", "docx", "header-too-late", "pdf-as-png"],
)
def test_anything_else_is_unsupported_file_type_naming_what_it_is(data: bytes, name: str, words: str) -> None:
    with pytest.raises(UnsupportedFileTypeError) as raised:
        detect_file_type(data, DOCUMENTS, file_name=name)
    assert raised.value.error_type == "unsupported_file_type"
    assert words in raised.value.message and "/" not in raised.value.message


def test_text_is_valid_utf8_without_nul_and_only_where_the_intake_accepts_it() -> None:
    notes = "# Site visit\n\nKerb heights on Banbury Road — 125 mm.\n".encode()
    assert detect_file_type(notes, {FileKind.TEXT}, file_name="visit.md") == TEXT
    assert detect_file_type(notes, {FileKind.TEXT, FileKind.PDF}) == TEXT
    for data in (b"text with a NUL \x00 byte", "caf\u00e9".encode("latin-1")):
        with pytest.raises(UnsupportedFileTypeError):
            detect_file_type(data, {FileKind.TEXT}, file_name="visit.md")
    with pytest.raises(UnsupportedFileTypeError, match=r"expected a PDF$"):
        detect_file_type(notes, {FileKind.PDF})


@pytest.mark.parametrize(
    "data", [image_bytes("PNG"), b"", b"Policy notes, not a PDF\n"], ids=["png", "zero-bytes", "text"]
)
def test_policy_intakes_refuse_what_is_not_a_pdf_and_store_nothing(stores: Stores, data: bytes) -> None:
    stores.policies.registry.create_policy(
        PolicyCreate(source="LTN_1_20", title="Cycle infrastructure", category="national_guidance")
    )
    path = stores.settings.files.allowed_roots[0] / "LTN_1_20.pdf"
    path.write_bytes(data)

    with pytest.raises(UnsupportedFileTypeError):
        read_source_file(stores.objects, stores.settings, str(path))
    revision = RevisionCreate(
        revision_id="rev_LTN_1_20_2020_07", version_label="July 2020", effective_from="2020-07-27"
    )
    with pytest.raises(UnsupportedFileTypeError):
        register_revision(stores.policies, "LTN_1_20", revision, data)

    assert stores.policies.registry.list_revisions("LTN_1_20") == []
    assert list(stores.objects.list("policies/")) == []
    assert stores.policies.vectors.count() == 0
