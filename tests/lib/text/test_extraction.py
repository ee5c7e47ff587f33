"""Text extraction (spec 003 FR-005, NFR-001) on real awkward PDFs, real policy PDFs and images drawn here.

OCR runs the real Tesseract binary; only small documents are OCR'd so the module stays quick.
"""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pymupdf
import pytest
from PIL import Image, ImageDraw, ImageFont

from lib.errors import (
    EncryptedPdfError,
    ExtractionFailedError,
    KBError,
    NoContentError,
    UnsupportedFileTypeError,
)
from lib.text.extraction import extract_document, image_ratios, is_rendering_file_name
from tests.fixtures_paths import (
    EMPTY_PDF,
    ENCRYPTED_AES256_PDF,
    ENCRYPTED_PASSWORD_PDF,
    IMAGE_ONLY_PDF,
    MALFORMED_PDF,
    NPPF_2024,
    SCANNED_WITH_TEXT_LAYER_PDF,
    TABLE_PDF,
)

LOGGER = "lib.text.extraction"


def text_image(lines: list[str]) -> Image.Image:
    """A white page with black type, as a scanner would produce it."""
    font = ImageFont.load_default(size=64)
    image = Image.new("L", (1600, 120 + 100 * len(lines)), 255)
    draw = ImageDraw.Draw(image)
    for index, line in enumerate(lines):
        draw.text((60, 60 + 100 * index), line, font=font, fill=0)
    return image


def encoded(image: Image.Image, image_format: str, **options: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=image_format, **options)
    return buffer.getvalue()


def image_only_scan(pages: int, dpi: int) -> bytes:
    """The Vicksburg scan with its OCR text layer thrown away: each page rasterised and placed back as an
    image, so the PDF has no text at all (what a scanner without OCR produces)."""
    with pymupdf.open(SCANNED_WITH_TEXT_LAYER_PDF) as source, pymupdf.open() as scan:
        for page in list(source)[:pages]:
            target = scan.new_page(width=page.rect.width, height=page.rect.height)
            target.insert_image(target.rect, pixmap=page.get_pixmap(dpi=dpi))
        return scan.tobytes(deflate=True)


def assert_clean(error: KBError) -> None:
    """Typed, human-readable, and naming no file-system path."""
    assert error.message
    assert "/" not in error.message
    assert "\\" not in error.message


# --- refusals ------------------------------------------------------------------------------------------


def test_zero_byte_file_is_refused_with_no_content_error() -> None:
    with pytest.raises(NoContentError) as raised:
        extract_document(EMPTY_PDF.read_bytes(), file_name=EMPTY_PDF.name)
    assert raised.value.error_type == "no_content"
    assert_clean(raised.value)


@pytest.mark.parametrize("path", [ENCRYPTED_PASSWORD_PDF, ENCRYPTED_AES256_PDF], ids=["rc4-password", "aes-256"])
def test_encrypted_pdf_is_refused_with_encrypted_error(path: Path) -> None:
    with pytest.raises(EncryptedPdfError) as raised:
        extract_document(path.read_bytes(), file_name=path.name)
    assert raised.value.error_type == "encrypted"
    assert isinstance(raised.value, ExtractionFailedError)
    assert "password" in raised.value.message
    assert_clean(raised.value)


def test_truncated_pdf_is_refused_with_extraction_failed_error() -> None:
    data = NPPF_2024.read_bytes()
    with pytest.raises(ExtractionFailedError) as raised:
        extract_document(data[: len(data) // 2], file_name="NPPF_December_2024.pdf")
    assert raised.value.error_type == "extraction_failed"
    assert "truncated or damaged" in raised.value.message
    assert_clean(raised.value)


def test_file_named_pdf_that_is_not_a_pdf_is_refused_with_extraction_failed_error() -> None:
    with pytest.raises(ExtractionFailedError) as raised:
        extract_document(b"<html><body>Not found</body></html>", file_name="/srv/uploads/site_plan.pdf")
    assert raised.value.error_type == "extraction_failed"
    assert_clean(raised.value)


def test_pdf_header_followed_by_garbage_is_refused_with_extraction_failed_error() -> None:
    with pytest.raises(ExtractionFailedError) as raised:
        extract_document(b"%PDF-1.7\n" + bytes(range(256)) * 4, file_name="broken.pdf")
    assert raised.value.error_type == "extraction_failed"
    assert_clean(raised.value)


def test_damaged_png_is_refused_with_extraction_failed_error() -> None:
    png = encoded(text_image(["Site plan"]), "PNG")
    with pytest.raises(ExtractionFailedError) as raised:
        extract_document(png[:200], file_name="site_plan.png")
    assert raised.value.error_type == "extraction_failed"
    assert_clean(raised.value)


@pytest.mark.parametrize(
    ("data", "file_name"),
    [(b"PK\x03\x04" + b"\x00" * 64, "Design and Access Statement.docx"), (b"Plain notes\n", "notes.txt")],
    ids=["docx", "txt"],
)
def test_unsupported_file_type_is_refused_with_unsupported_file_type_error(data: bytes, file_name: str) -> None:
    with pytest.raises(UnsupportedFileTypeError) as raised:
        extract_document(data, file_name=file_name)
    assert raised.value.error_type == "unsupported_file_type"
    assert ".pdf" in raised.value.message and ".tiff" in raised.value.message
    assert_clean(raised.value)


# --- PDFs with a text layer ----------------------------------------------------------------------------


def test_malformed_pdf_that_mupdf_can_repair_is_read_from_its_text_layer() -> None:
    document = extract_document(MALFORMED_PDF.read_bytes(), file_name=MALFORMED_PDF.name, enable_ocr=False)
    assert document.method == "text_layer"
    assert [page.text for page in document.pages] == ["2021\n3\n31"]
    assert document.pages[0].image_ratio == pytest.approx(1.0)


def test_scanned_pdf_with_an_ocr_text_layer_is_read_without_running_ocr() -> None:
    document = extract_document(SCANNED_WITH_TEXT_LAYER_PDF.read_bytes())
    assert document.method == "text_layer"
    assert document.page_count == 6
    assert {page.method for page in document.pages} == {"text_layer"}
    assert all(page.ocr_confidence is None for page in document.pages)
    assert all(page.image_ratio == pytest.approx(1.0) for page in document.pages)
    assert "Johnston is coming with fifty" in document.pages[0].text


def test_table_pdf_keeps_every_cell_of_its_text_layer() -> None:
    document = extract_document(TABLE_PDF.read_bytes(), file_name=TABLE_PDF.name)
    assert document.method == "text_layer"
    page = document.pages[0]
    assert page.image_ratio == 0.0
    for cell in ("DOCUMENT NO.", "DHAW20190001", "CITIBANK - TRAVEL CBA CARD", "907.96"):
        assert cell in page.text
    assert page.lines and all(span.size > 0 for line in page.lines for span in line.spans)


def test_policy_pdf_pages_carry_text_and_layout_with_one_based_page_numbers() -> None:
    document = extract_document(NPPF_2024.read_bytes(), file_name=NPPF_2024.name)
    assert document.method == "text_layer"
    assert [page.page_number for page in document.pages] == list(range(1, 83))
    page = document.pages[32]
    assert "116. Development should only be prevented or refused on highways grounds" in page.text
    assert "\n\n\n" not in page.text and not any(line != line.rstrip() for line in page.text.splitlines())
    heading = next(line for line in page.lines if line.text.startswith("Considering development proposals"))
    assert heading.spans[0].size == 18.0
    assert 0.0 <= heading.top < heading.bottom <= 1.0
    marker = next(span for line in page.lines for span in line.spans if span.text == "48")
    assert marker.superscript


def test_text_layer_with_too_few_characters_is_replaced_by_ocr_and_low_confidence_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The repaired scan of a Chinese document has only a date in its text layer: it is OCR'd, and English
    OCR of Chinese script scores low, which NFR-001 wants flagged on one line at WARNING."""
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        document = extract_document(MALFORMED_PDF.read_bytes(), file_name=MALFORMED_PDF.name)
    page = document.pages[0]
    assert (document.method, page.method) == ("ocr", "ocr")
    assert page.ocr_confidence is not None and 0.0 <= page.ocr_confidence < 70.0
    assert page.lines == []
    warnings = [record for record in caplog.records if record.levelno == logging.WARNING]
    assert [record.getMessage() for record in warnings] == [
        f"ocr.low_confidence page=1 confidence={page.ocr_confidence:.1f}"
    ]


# --- image-only PDFs and OCR ---------------------------------------------------------------------------


def test_image_only_pdf_with_ocr_enabled_is_ocrd_and_yields_no_content_when_its_images_hold_no_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The fixture's six images are 16x16-pixel drawings: every page goes to Tesseract, none has words."""
    with caplog.at_level(logging.INFO, logger=LOGGER), pytest.raises(NoContentError) as raised:
        extract_document(IMAGE_ONLY_PDF.read_bytes(), file_name=IMAGE_ONLY_PDF.name, enable_ocr=True)
    assert "OCR found no words" in raised.value.message
    assert [record.getMessage() for record in caplog.records if "ocr.no_text" in record.getMessage()] == [
        f"ocr.no_text page={number}" for number in range(1, 7)
    ]


def test_image_only_pdf_with_ocr_disabled_is_refused_with_no_content_error() -> None:
    with pytest.raises(NoContentError) as raised:
        extract_document(IMAGE_ONLY_PDF.read_bytes(), file_name=IMAGE_ONLY_PDF.name, enable_ocr=False)
    assert raised.value.error_type == "no_content"
    assert "OCR is disabled" in raised.value.message
    assert_clean(raised.value)


def test_image_only_scan_is_ocrd_in_parallel_and_keeps_each_pages_confidence() -> None:
    document = extract_document(image_only_scan(pages=2, dpi=200), ocr_workers=2, dpi=200)
    assert document.method == "ocr"
    assert [page.method for page in document.pages] == ["ocr", "ocr"]
    for page in document.pages:
        assert page.ocr_confidence is not None and 70.0 <= page.ocr_confidence <= 100.0
        assert page.image_ratio == pytest.approx(1.0)
        assert page.lines == []
    assert "Johnston is coming with fifty" in document.pages[0].text
    assert "siege" in document.pages[1].text.lower()


def test_pdf_with_text_and_scanned_pages_is_mixed() -> None:
    with pymupdf.open(TABLE_PDF) as table, pymupdf.open() as combined:
        combined.insert_pdf(table)
        scanned = combined.new_page(width=612, height=200)
        scanned.insert_image(scanned.rect, stream=encoded(text_image(["Appendix B traffic counts"]), "PNG"))
        data = combined.tobytes()
    document = extract_document(data)
    assert document.method == "mixed"
    assert [page.method for page in document.pages] == ["text_layer", "ocr"]
    assert document.pages[0].ocr_confidence is None
    assert document.pages[1].ocr_confidence is not None
    assert "Appendix B traffic counts" in document.pages[1].text


# --- image files ---------------------------------------------------------------------------------------


def test_png_with_drawn_text_is_ocrd_as_a_single_page() -> None:
    png = encoded(text_image(["Transport Assessment", "Junction capacity 2031"]), "PNG")
    document = extract_document(png, file_name="scan.png")
    assert document.method == "ocr"
    assert document.page_count == 1
    page = document.pages[0]
    assert (page.page_number, page.method, page.image_ratio) == (1, "ocr", 1.0)
    assert page.text == "Transport Assessment\nJunction capacity 2031"
    assert page.ocr_confidence is not None and page.ocr_confidence > 70.0


def test_multi_frame_tiff_becomes_one_page_per_frame() -> None:
    first, second = text_image(["Sheet one"]), text_image(["Sheet two"])
    tiff = encoded(first, "TIFF", save_all=True, append_images=[second])
    document = extract_document(tiff, file_name="drawings.tif")
    assert [(page.page_number, page.method, page.text) for page in document.pages] == [
        (1, "ocr", "Sheet one"),
        (2, "ocr", "Sheet two"),
    ]


def test_jpeg_is_recognised_by_its_bytes_whatever_its_name() -> None:
    jpeg = encoded(text_image(["Parking standards"]).convert("RGB"), "JPEG", quality=95)
    document = extract_document(jpeg, file_name="upload.bin")
    assert document.pages[0].text == "Parking standards"


def test_image_with_ocr_disabled_is_refused_with_no_content_error() -> None:
    with pytest.raises(NoContentError):
        extract_document(encoded(text_image(["Site plan"]), "PNG"), file_name="scan.png", enable_ocr=False)


def test_rendering_file_name_bypasses_ocr() -> None:
    png = encoded(text_image(["Proposed street scene"]), "PNG")
    with pytest.raises(NoContentError) as raised:
        extract_document(png, file_name="03 Street Scene Rev B.png")
    assert "OCR is disabled" in raised.value.message


@pytest.mark.parametrize(
    ("name", "rendering"),
    [
        ("Birds_Eye_View_01.pdf", True),
        ("bird's eye view.png", True),
        ("Perspective from High Street.jpg", True),
        ("Site_CGI_03.jpg", True),
        ("3D Visual - North.pdf", True),
        ("Artists Impression.pdf", True),
        ("artist’s impression rev A.png", True),
        ("Photomontage-VP4.tif", True),
        ("street_scene.pdf", True),
        ("Landscape Render.png", True),
        ("rendered-elevations.pdf", True),
        ("Transport Assessment.pdf", False),
        ("Deed of Surrender.pdf", False),
        ("Site Plan 1-500.pdf", False),
        ("", False),
    ],
)
def test_rendering_file_names_follow_spec_003_patterns(name: str, rendering: bool) -> None:
    assert is_rendering_file_name(name) is rendering


# --- image ratios --------------------------------------------------------------------------------------


def test_image_ratios_of_an_image_only_pdf_are_all_one() -> None:
    assert image_ratios(IMAGE_ONLY_PDF.read_bytes()) == [1.0] * 6


def test_image_ratios_of_a_scan_count_a_page_image_drawn_twice_once() -> None:
    assert image_ratios(SCANNED_WITH_TEXT_LAYER_PDF.read_bytes()) == pytest.approx([1.0] * 6)


def test_image_ratios_of_a_text_document_are_small_and_one_per_page() -> None:
    ratios = image_ratios(NPPF_2024.read_bytes())
    assert len(ratios) == 82
    assert all(0.0 <= ratio <= 1.0 for ratio in ratios)
    assert sum(ratios) / len(ratios) < 0.7
    assert image_ratios(TABLE_PDF.read_bytes()) == [0.0]


def test_image_ratios_of_an_image_file_are_one_per_frame() -> None:
    assert image_ratios(encoded(text_image(["Plan"]), "PNG")) == [1.0]


def test_image_ratios_refuse_what_extraction_refuses() -> None:
    with pytest.raises(EncryptedPdfError):
        image_ratios(ENCRYPTED_AES256_PDF.read_bytes())
    with pytest.raises(NoContentError):
        image_ratios(b"")
    with pytest.raises(UnsupportedFileTypeError):
        image_ratios(b"Plain notes\n")
