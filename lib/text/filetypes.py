"""What a file is, decided by its content: the one check every file intake makes before it stores anything.

PyMuPDF opens images as well as PDFs, and a name says nothing reliable (a PNG saved as ``plan.pdf``, an
HTML error page saved as ``statement.pdf``), so every intake (application documents, policy revisions
from a path, from an upload or from the object store) calls ``detect_file_type`` with the kinds it accepts
and refuses anything else with ``unsupported_file_type`` before a byte is written:

- PDF: ``%PDF-`` within the first 1024 bytes (PDF readers tolerate junk before the header);
- image: the PNG, JPEG, TIFF or BMP signature at the start;
- text (Markdown or plain): non-empty, valid UTF-8, no NUL byte.

The content decides; a name only adds a refusal: when its extension names another kind than the content
(``plan.pdf`` holding a PNG), the file is refused, since whoever named it expected something else. A name
without a known extension (``upload.bin``) changes nothing.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePath

from lib.errors import UnsupportedFileTypeError

PDF_MAGIC = b"%PDF-"
PDF_MAGIC_WINDOW = 1024


class FileKind(StrEnum):
    PDF = "pdf"
    IMAGE = "image"
    TEXT = "text"


@dataclass(frozen=True)
class FileType:
    """A detected type: its kind, the extension and the MIME type an original is stored under."""

    kind: FileKind
    extension: str
    content_type: str
    label: str


PDF = FileType(FileKind.PDF, ".pdf", "application/pdf", "a PDF")
PNG = FileType(FileKind.IMAGE, ".png", "image/png", "a PNG image")
JPEG = FileType(FileKind.IMAGE, ".jpg", "image/jpeg", "a JPEG image")
TIFF = FileType(FileKind.IMAGE, ".tiff", "image/tiff", "a TIFF image")
BMP = FileType(FileKind.IMAGE, ".bmp", "image/bmp", "a BMP image")
TEXT = FileType(FileKind.TEXT, ".md", "text/markdown; charset=utf-8", "text")

_IMAGE_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", PNG),
    (b"\xff\xd8\xff", JPEG),
    (b"II*\x00", TIFF),
    (b"MM\x00*", TIFF),
    (b"BM", BMP),
)
_EXTENSION_KINDS = {
    ".pdf": FileKind.PDF,
    **dict.fromkeys((".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp"), FileKind.IMAGE),
    **dict.fromkeys((".md", ".markdown", ".txt", ".text"), FileKind.TEXT),
}
_KIND_WORDS = {
    FileKind.PDF: "a PDF",
    FileKind.IMAGE: "an image (PNG, JPEG, TIFF, BMP)",
    FileKind.TEXT: "Markdown or text",
}


def is_pdf(data: bytes) -> bool:
    return PDF_MAGIC in data[:PDF_MAGIC_WINDOW]


def image_type(data: bytes) -> FileType | None:
    return next((kind for signature, kind in _IMAGE_SIGNATURES if data.startswith(signature)), None)


def is_text(data: bytes) -> bool:
    if not data or b"\x00" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def sniff(data: bytes) -> FileType | None:
    """The type the content shows, PDF first (a PDF may start with a few bytes of anything), or None."""
    if is_pdf(data):
        return PDF
    found = image_type(data)
    if found is not None:
        return found
    return TEXT if is_text(data) else None


def detect_file_type(data: bytes, accepted: Collection[FileKind], *, file_name: str = "") -> FileType:
    """The type of ``data`` if it is one of the ``accepted`` kinds and ``file_name``'s extension (when it
    names a kind) agrees; ``UnsupportedFileTypeError`` otherwise. Messages name no path."""
    expected = " or ".join(_KIND_WORDS[kind] for kind in FileKind if kind in accepted)
    if not data:
        raise UnsupportedFileTypeError(f"The file is empty (0 bytes): expected {expected}")
    found = sniff(data)
    if found is None or found.kind not in accepted:
        shown = "of no recognised type" if found is None else found.label
        raise UnsupportedFileTypeError(f"Unsupported file type: the content is {shown}, expected {expected}")
    named = _EXTENSION_KINDS.get(PurePath(file_name.replace("\\", "/")).suffix.lower()) if file_name else None
    if named is not None and named != found.kind:
        raise UnsupportedFileTypeError(
            f"Unsupported file type: the name says {_KIND_WORDS[named]} but the content is {found.label}"
        )
    return found
