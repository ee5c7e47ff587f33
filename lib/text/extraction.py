"""Text extraction from PDFs and images (spec 003 FR-005, NFR-001), for policies and application documents.

PDF pages keep their text layer (PyMuPDF); a page with almost no text is rendered and OCR'd with
Tesseract (``lib.text.ocr``). PyMuPDF is not thread-safe, so pages are read and rendered one after another
in the calling thread while the OCR of already-rendered pages runs in a thread pool, one single-threaded
Tesseract process per core.

Every failure is a typed ``ExtractionFailedError`` whose message names no file-system path.
"""

from __future__ import annotations

import io
import logging
import re
import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

import pymupdf
from PIL import Image, ImageSequence, UnidentifiedImageError

from lib.cpus import usable_cpus
from lib.errors import EncryptedPdfError, ExtractionFailedError, NoContentError, UnsupportedFileTypeError
from lib.models import ExtractedDocument, PageText, TextLine, TextSpan
from lib.text.filetypes import image_type, is_pdf
from lib.text.ocr import LOW_CONFIDENCE, OcrText, ocr_png, ocr_pool

logger = logging.getLogger(__name__)

MIN_TEXT_LAYER_CHARS = 10
"""A page whose text layer has fewer non-whitespace characters than this is OCR'd (spec 003 FR-005)."""
SUPPORTED_EXTENSIONS = (".pdf", ".png", ".jpg", ".jpeg", ".tiff", ".tif", ".bmp")
IMAGE_EXTENSIONS = frozenset(SUPPORTED_EXTENSIONS[1:])

_DICT_FLAGS = pymupdf.TEXTFLAGS_DICT & ~pymupdf.TEXT_PRESERVE_IMAGES  # layout without decoding images
_RENDERING_RE = re.compile(  # word edges by hand: "_" is a word character to \b, and names use it as a space
    r"bird'?s?[\s_.-]*eye|perspective|(?<![a-z])cgi(?![a-z])|(?<![a-z])3d[\s_.-]*visual"
    r"|artist'?s?[\s_.-]*impression|photo[\s_.-]*montage|street[\s_.-]*scene|(?<![a-z])render",
    re.IGNORECASE,
)


def extract_document(
    data: bytes, *, file_name: str = "", enable_ocr: bool = True, ocr_workers: int = 0, dpi: int = 300
) -> ExtractedDocument:
    """Every page's text, in page order. The bytes decide the file type; ``file_name`` only words the error
    for bytes of no known type, and turns OCR off for architectural renderings (spec 003: OCR of a 3D
    render yields only noise). ``ocr_workers=0`` means one Tesseract per core this process may run on."""
    started = time.perf_counter()
    if not data:
        raise NoContentError("The file is empty (0 bytes)")
    if enable_ocr and is_rendering_file_name(file_name):
        logger.info("extract.ocr_bypassed reason=rendering_file_name")
        enable_ocr = False
    kind = _detect_kind(data, file_name)
    workers = ocr_workers or usable_cpus()
    if kind == "pdf":
        pages = _extract_pdf(data, enable_ocr=enable_ocr, workers=workers, dpi=dpi)
    else:
        pages = _extract_image(data, enable_ocr=enable_ocr, workers=workers, dpi=dpi)
    document = ExtractedDocument(pages=pages, method=_document_method(pages, enable_ocr))
    logger.info(
        "extract.done kind=%s pages=%d method=%s ocr_pages=%d seconds=%.2f",
        kind,
        len(pages),
        document.method,
        sum(p.method == "ocr" for p in pages),
        time.perf_counter() - started,
    )
    return document


def image_ratios(data: bytes) -> list[float]:
    """Share of each page covered by images, without extracting text, so that image-based documents
    (drawings, scans of plans) can be skipped before paying for extraction (spec 003 FR-005).

    An image file is one image per frame, so every frame is 1.0: the skip rule is meant for PDFs."""
    if not data:
        raise NoContentError("The file is empty (0 bytes)")
    if is_pdf(data):
        with _open_pdf(data) as doc:
            return [_image_ratio(page, [pymupdf.Rect(info["bbox"]) for info in page.get_image_info()]) for page in doc]
    if image_type(data) is not None:
        return [1.0 for _ in _image_frames(data)]
    raise UnsupportedFileTypeError(_unsupported_message())


def is_rendering_file_name(name: str) -> bool:
    """True for file names of architectural renderings (bird's eye, CGI, photomontage, ...), whose OCR
    would only produce noise (spec 003 FR-005)."""
    stem = PurePath(name.replace("\\", "/")).name if name else ""
    return bool(_RENDERING_RE.search(stem.replace("’", "'")))


# --- type detection (signatures in lib.text.filetypes; every intake refused other types before this) -------


def _detect_kind(data: bytes, file_name: str) -> str:
    """Trust the bytes first; the extension only decides how to word the error when they say nothing."""
    if is_pdf(data):
        return "pdf"
    if image_type(data) is not None:
        return "image"
    extension = PurePath(file_name).suffix.lower() if file_name else ""
    if extension == ".pdf":
        raise ExtractionFailedError("The file is not a readable PDF: it has no PDF header")
    if extension in IMAGE_EXTENSIONS:
        raise ExtractionFailedError(f"The file is not a readable {extension[1:].upper()} image")
    raise UnsupportedFileTypeError(_unsupported_message())


def _unsupported_message() -> str:
    return "Unsupported file type: expected a PDF or an image (" + ", ".join(SUPPORTED_EXTENSIONS) + ")"


# --- PDF ----------------------------------------------------------------------------------------------


def _open_pdf(data: bytes) -> pymupdf.Document:
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except (RuntimeError, ValueError) as exc:  # pymupdf.FileDataError and friends derive from RuntimeError
        raise ExtractionFailedError("The file is not a readable PDF: its structure is damaged") from exc
    if doc.needs_pass:
        doc.close()
        raise EncryptedPdfError("The PDF is encrypted and needs a password, so its text cannot be read")
    if doc.page_count == 0:
        doc.close()
        raise ExtractionFailedError("The PDF has no readable pages: it is truncated or damaged")
    return doc


def _extract_pdf(data: bytes, *, enable_ocr: bool, workers: int, dpi: int) -> list[PageText]:
    """Read pages in order; queue OCR for text-less pages, keeping at most two renders per worker in
    memory (a 300 DPI page is several MB)."""
    with _open_pdf(data) as doc, ocr_pool(workers) as pool:
        pages: list[PageText] = []
        pending: deque[_PendingOcr] = deque()
        for index, page in enumerate(doc):
            pages.append(_read_page(page, index + 1))
            if enable_ocr and _too_little_text(pages[-1].text):
                while len(pending) >= 2 * workers:
                    _finish_ocr(pages, pending.popleft())
                png = _render(page, index + 1, dpi)
                pending.append(_PendingOcr(index, pool.submit(ocr_png, png, dpi)))
        while pending:
            _finish_ocr(pages, pending.popleft())
    return pages


def _read_page(page: pymupdf.Page, number: int) -> PageText:
    try:
        textpage = page.get_textpage(flags=_DICT_FLAGS)
        text = _tidy(page.get_text("text", textpage=textpage))
        layout = page.get_text("dict", textpage=textpage)
        placed = [pymupdf.Rect(info["bbox"]) for info in page.get_image_info()]
        ratio = _image_ratio(page, placed)
    except (RuntimeError, ValueError) as exc:
        raise ExtractionFailedError(f"Page {number} of the PDF could not be read: it is damaged") from exc
    lines = _layout_lines(layout)
    if ratio > 0 and lines:
        lines, covered = _without_covered_margin_lines(page, lines, placed)
        for line in covered:
            text = _tidy(text.replace(line.text.strip(), "", 1))
    method = "text_layer" if text else "none"
    return PageText(
        page_number=number,
        text=text,
        method=method,
        image_ratio=ratio,
        lines=lines,
        boxes=_text_boxes(page) if lines else [],
        label=_label(page),
    )


MARGIN_SHARE = 0.12
"""Top and bottom share of the page where running headers and page numbers are looked for."""


def _without_covered_margin_lines(
    page: pymupdf.Page, lines: list[TextLine], placed: list[pymupdf.Rect]
) -> tuple[list[TextLine], list[TextLine]]:
    """The layout lines less those in the top or bottom margin that an image drawn after them covers, and
    those: text the text layer holds but nobody can see (a cover picture laid over a ``Page 1 of 249``
    footer) must not be read as a printed page number. The drawing order is read only for a page where an
    image lies over a margin line at all."""
    width, height = page.rect.width or 1.0, page.rect.height or 1.0
    centres = [
        pymupdf.Point((line.x0 + line.x1) / 2 * width, (line.top + line.bottom) / 2 * height)
        for line in lines
        if line.top < MARGIN_SHARE or line.bottom > 1 - MARGIN_SHARE
    ]
    if not any(box.contains(centre) for box in placed for centre in centres):
        return lines, []
    try:
        log = page.get_bboxlog()
    except (RuntimeError, ValueError):
        return lines, []
    images = [(index, pymupdf.Rect(box)) for index, (kind, box) in enumerate(log) if kind == "fill-image"]
    if not images:
        return lines, []
    texts = [(index, pymupdf.Rect(box)) for index, (kind, box) in enumerate(log) if kind.endswith("-text")]
    kept: list[TextLine] = []
    covered: list[TextLine] = []
    for line in lines:
        if line.top >= MARGIN_SHARE and line.bottom <= 1 - MARGIN_SHARE:
            kept.append(line)
            continue
        rect = pymupdf.Rect(line.x0 * width, line.top * height, line.x1 * width, line.bottom * height)
        drawn = [index for index, box in texts if rect.contains((box.tl + box.br) / 2)]
        centre = (rect.tl + rect.br) / 2
        hidden = drawn and any(index > max(drawn) and box.contains(centre) for index, box in images)
        (covered if hidden else kept).append(line)
    return kept, covered


def _label(page: pymupdf.Page) -> str:
    """The PDF's own label for the page ("" where it sets none): it may confirm a printed page number, never
    replace one (``lib.text.printed_pages``)."""
    try:
        return str(page.get_label() or "")[:32]
    except (RuntimeError, ValueError):
        return ""


BOX_MIN_WIDTH = 0.3
BOX_MIN_HEIGHT = 0.03
MAX_DRAWINGS = 3000
"""Boxes are looked for among a page's first drawings only: a map's thousands of paths frame no text."""


def _text_boxes(page: pymupdf.Page) -> list[tuple[float, float, float, float]]:
    """Rectangles drawn (stroked or filled) wide and tall enough to frame text, as fractions of the page:
    a plan's boxed policies (``lib.text.layout_rows`` marks the rows inside one)."""
    width, height = page.rect.width or 1.0, page.rect.height or 1.0
    boxes: list[tuple[float, float, float, float]] = []
    try:
        drawings = page.get_drawings()[:MAX_DRAWINGS]
    except (RuntimeError, ValueError):
        return []
    for drawing in drawings:
        rect = drawing["rect"]
        if rect.width >= BOX_MIN_WIDTH * width and BOX_MIN_HEIGHT * height <= rect.height < 0.95 * height:
            boxes.append((rect.x0 / width, rect.y0 / height, rect.x1 / width, rect.y1 / height))
    return boxes


def _layout_lines(layout: dict[str, Any]) -> list[TextLine]:
    width = float(layout.get("width") or 1.0)
    height = float(layout.get("height") or 1.0)
    lines: list[TextLine] = []
    for block in layout.get("blocks", []):
        for line in block.get("lines", []):
            spans = [
                TextSpan(
                    text=span["text"],
                    size=round(float(span["size"]), 2),
                    bold=bool(span["flags"] & pymupdf.TEXT_FONT_BOLD) or "bold" in span["font"].lower(),
                    superscript=bool(span["flags"] & pymupdf.TEXT_FONT_SUPERSCRIPT),
                )
                for span in line.get("spans", [])
                if span["text"]
            ]
            if spans and any(span.text.strip() for span in spans):
                x0, y0, x1, y1 = line["bbox"]
                lines.append(TextLine(spans=spans, x0=x0 / width, x1=x1 / width, top=y0 / height, bottom=y1 / height))
    return lines


def _image_ratio(page: pymupdf.Page, placed: list[pymupdf.Rect]) -> float:
    """Image area (``placed``: where the page's images are drawn) over page area, clipped to [0, 1]; identical
    placements (a scan drawn twice) count once."""
    area = page.rect.get_area()
    if area <= 0:
        return 0.0
    boxes = {tuple(round(v, 1) for v in (box.x0, box.y0, box.x1, box.y1)): box for box in placed}
    covered = sum((box & page.rect).get_area() for box in boxes.values())
    return max(0.0, min(1.0, covered / area))


def _render(page: pymupdf.Page, number: int, dpi: int) -> bytes:
    try:
        # Grey, not RGB: Tesseract binarises a grey image anyway, and a grey render costs less CPU a page
        # (smaller PNG to encode and decode) for the same words (figures: docs/performance.md › Document ingestion).
        return page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False).tobytes("png")
    except (RuntimeError, ValueError) as exc:
        raise ExtractionFailedError(f"Page {number} of the PDF could not be rendered for OCR") from exc


def _too_little_text(text: str) -> bool:
    return sum(not ch.isspace() for ch in text) < MIN_TEXT_LAYER_CHARS


def _tidy(text: str) -> str:
    """Strip trailing blanks and collapse runs of empty lines: PyMuPDF pads layout with lines of spaces."""
    lines = [line.rstrip() for line in text.splitlines()]
    tidy: list[str] = []
    for line in lines:
        if line or (tidy and tidy[-1]):
            tidy.append(line)
    return "\n".join(tidy).strip()


# --- images -------------------------------------------------------------------------------------------


def _image_frames(data: bytes) -> Iterator[Image.Image]:
    try:
        with Image.open(io.BytesIO(data)) as image:
            for frame in ImageSequence.Iterator(image):
                yield frame.copy()
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise ExtractionFailedError("The image could not be decoded: it is damaged or truncated") from exc


def _extract_image(data: bytes, *, enable_ocr: bool, workers: int, dpi: int) -> list[PageText]:
    """An image is OCR'd whole, one page per frame (multi-page TIFF)."""
    frames = [_png_bytes(frame) for frame in _image_frames(data)]
    if not enable_ocr:
        return [PageText(page_number=n, text="", method="none", image_ratio=1.0) for n in range(1, len(frames) + 1)]
    with ocr_pool(workers) as pool:
        futures = [pool.submit(ocr_png, png, dpi) for png in frames]
        pages = [PageText(page_number=n, text="", method="none", image_ratio=1.0) for n in range(1, len(frames) + 1)]
        for index, future in enumerate(futures):
            _finish_ocr(pages, _PendingOcr(index, future))
    return pages


def _png_bytes(frame: Image.Image) -> bytes:
    if frame.mode not in ("1", "L"):
        frame = frame.convert("L")  # grey, as PDF pages are rendered for OCR (see ``_render``)
    buffer = io.BytesIO()
    frame.save(buffer, format="PNG")
    return buffer.getvalue()


# --- OCR jobs ----------------------------------------------------------------------------------------


@dataclass
class _PendingOcr:
    index: int
    future: Future[OcrText]


def _finish_ocr(pages: list[PageText], job: _PendingOcr) -> None:
    text, confidence = job.future.result()
    page = pages[job.index]
    if text:
        pages[job.index] = page.model_copy(
            update={"text": text, "method": "ocr", "ocr_confidence": confidence, "lines": []}
        )
        _warn_if_low_confidence(page.page_number, confidence)
    else:
        logger.info("ocr.no_text page=%d", page.page_number)


def _warn_if_low_confidence(page_number: int, confidence: float | None) -> None:
    if confidence is not None and confidence < LOW_CONFIDENCE:
        logger.warning("ocr.low_confidence page=%d confidence=%.1f", page_number, confidence)


# --- summary ------------------------------------------------------------------------------------------


def _document_method(pages: list[PageText], ocr_enabled: bool) -> str:
    methods = {page.method for page in pages} - {"none"}
    if not methods:
        if ocr_enabled:
            raise NoContentError("The document contains no text: it has no text layer and OCR found no words")
        raise NoContentError("The document has no text layer and OCR is disabled, so no text could be read")
    return methods.pop() if len(methods) == 1 else "mixed"
