"""A cited page as a person sees it (issue 26): one page of a revision's original PDF rendered to PNG
(PyMuPDF), the cited text highlighted, so an officer or an agent can check that the page says what is claimed.

What is highlighted is found among the words PyMuPDF reads on the page: every run of words the given
``highlight`` text (or the chunk ``chunk_id`` names) shares with the page in order, marked line by line (a
chunk's text is reflowed and may run over the page; what is on this page is marked). A render is
kept in the object store under the original's content hash, the page, the resolution and what was marked
(``renders/pages/...``), so every replica renders a page once.
"""

from __future__ import annotations

import difflib
import hashlib
import io
import logging
import unicodedata
from dataclasses import dataclass
from datetime import date
from pathlib import PurePosixPath

import pymupdf
from PIL import Image
from PIL.PngImagePlugin import PngInfo

from lib.errors import InvalidArgumentError, RevisionNotFoundError
from lib.policies.chunks import revision_ref
from lib.policies.models import Revision
from lib.policies.sections import chosen_revision
from lib.policies.stores import PolicyStores
from lib.stores.chroma import where_all
from lib.stores.objects import ObjectStore
from lib.text.printed_pages import from_stored_list

logger = logging.getLogger(__name__)

DEFAULT_DPI = 150
MIN_DPI, MAX_DPI = 50, 200
MAX_SIDE_PX = 2400
"""No side of a render is larger than this (a large page at 200 dpi is scaled down to fit)."""
HIGHLIGHT_RGB = (1.0, 0.85, 0.0)
RENDER_PREFIX = "renders/pages"
BOXES_KEY, PAGES_KEY, PRINTED_KEY = "policy-kb:highlighted", "policy-kb:page-count", "policy-kb:printed-page"
"""Kept in the PNG's text chunks, so a render read back from the object store says what it marked and which page
the document prints there ("" where it prints none) without a metadata query."""
PNG_LEVEL = 1
"""zlib level of a render: a page of text compresses as small at 1 as at the default 6 in about half the time,
which is most of a cold render (figures: docs/performance.md › Citations, docs/decisions/0029)."""
MIN_RUN = 4
"""The fewest words in a row, as the page prints them, that count as the highlighted text being there."""


@dataclass(frozen=True)
class PageImage:
    source: str
    revision_id: str
    version_label: str
    page_number: int
    render: Render
    printed_page: str | None = None
    """The page as the document prints it (``lib.text.printed_pages``); None where it prints none."""


def _token(word: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKC", word).lower() if ch.isalnum())


def _marked(page: pymupdf.Page, text: str) -> int:
    """Highlight, line by line, every run of at least ``MIN_RUN`` words of ``text`` that the page prints in
    the same order; how many line boxes were marked. Matching words rather than strings follows the text over
    line ends, hyphenation, ligatures and quotes, and marks only the part of a chunk that is on this page."""
    words = page.get_text("words")  # (x0, y0, x1, y1, word, block, line, word_no)
    printed = [_token(w[4]) for w in words]
    wanted = [t for t in (_token(w) for w in text.split()) if t]
    matcher = difflib.SequenceMatcher(a=printed, b=wanted, autojunk=False)
    lines: dict[tuple[int, int], pymupdf.Rect] = {}
    for block in matcher.get_matching_blocks():
        if block.size < min(MIN_RUN, len(wanted)):
            continue
        for w in words[block.a : block.a + block.size]:
            key = (int(w[5]), int(w[6]))
            box = pymupdf.Rect(w[:4])
            lines[key] = lines[key] | box if key in lines else box
    if lines:
        annot = page.add_highlight_annot(list(lines.values()))
        annot.set_colors(stroke=HIGHLIGHT_RGB)
        annot.update()
    return len(lines)


@dataclass(frozen=True)
class Render:
    png: bytes
    width: int
    height: int
    highlighted: int
    page_count: int
    printed_page: str | None = None
    printed_known: bool = True
    """False for a render kept before the printed page was written into it: then it is looked up."""

    @classmethod
    def read(cls, png: bytes) -> Render:
        """A render kept in the object store, with what it marked (from its PNG text chunks)."""
        with Image.open(io.BytesIO(png)) as kept:
            # ``info``, not ``text``: the notes are written before the pixels, and ``text`` decodes the whole
            # image to look for more after them (most of a warm read's time: docs/decisions/0029).
            notes = kept.info
            printed = notes.get(PRINTED_KEY)
            boxes, pages = int(notes.get(BOXES_KEY, 0)), int(notes.get(PAGES_KEY, 0))
            known = printed is not None
            return cls(png, kept.width, kept.height, boxes, pages, str(printed) if printed else None, known)


def render_page(
    pdf: bytes, page_number: int, *, highlight: str = "", dpi: int = DEFAULT_DPI, printed_page: str | None = None
) -> Render:
    """Page ``page_number`` (1-based) of ``pdf`` as PNG, ``highlight`` marked wherever it is on the page, with the
    page as the document prints it (``printed_page``, read at ingestion) kept beside what it marked."""
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        if not 1 <= page_number <= doc.page_count:
            raise InvalidArgumentError(f"page must be between 1 and {doc.page_count}, got {page_number}")
        page = doc[page_number - 1]
        boxes = _marked(page, highlight) if highlight.strip() else 0
        zoom = dpi / 72
        longest = max(page.rect.width, page.rect.height) * zoom
        if longest > MAX_SIDE_PX:
            zoom *= MAX_SIDE_PX / longest
        pixmap = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), annots=True, alpha=False)
        image = Image.frombytes("RGB", (pixmap.width, pixmap.height), pixmap.samples)
        info = PngInfo()
        info.add_text(BOXES_KEY, str(boxes))
        info.add_text(PAGES_KEY, str(doc.page_count))
        info.add_text(PRINTED_KEY, printed_page or "")
        out = io.BytesIO()
        image.save(out, format="PNG", pnginfo=info, optimize=False, compress_level=PNG_LEVEL)
        return Render(out.getvalue(), pixmap.width, pixmap.height, boxes, doc.page_count, printed_page)


def drop_renders(objects: ObjectStore, original_key: str) -> int:
    """Delete the renders of an original that is being deleted (its content hash is its file name); how many."""
    sha = PurePosixPath(original_key).stem
    return sum(objects.delete(key) for key in list(objects.list(f"{RENDER_PREFIX}/{sha}/")))


def render_key(revision: Revision, page_number: int, dpi: int, highlight: str) -> str:
    marked = hashlib.sha256(" ".join(highlight.split()).encode()).hexdigest()[:16] if highlight.strip() else "plain"
    return f"{RENDER_PREFIX}/{revision.file_sha256}/{page_number}-{dpi}-{marked}.png"


def page_image(
    stores: PolicyStores,
    source: str,
    page_number: int,
    *,
    revision_id: str | None = None,
    effective_date: str | date | None = None,
    highlight: str | None = None,
    chunk_id: str | None = None,
    dpi: int = DEFAULT_DPI,
) -> PageImage:
    """Page ``page_number`` of the named revision (else the one in force on the date, default today) as PNG,
    with ``highlight`` (text) or the chunk ``chunk_id`` (of that revision) marked."""
    if not MIN_DPI <= dpi <= MAX_DPI:
        raise InvalidArgumentError(f"dpi must be between {MIN_DPI} and {MAX_DPI}, got {dpi}")
    if highlight is not None and chunk_id is not None:
        raise InvalidArgumentError("give highlight or chunk_id, not both")
    revision = chosen_revision(stores, source, revision_id, effective_date)
    if not revision.file_path or not revision.file_sha256:
        raise RevisionNotFoundError(
            f"Revision '{revision.revision_id}' of '{source}' has no stored original", source=source
        )
    text = highlight or ""
    if chunk_id is not None:
        found = stores.vectors.collection.get(ids=[chunk_id], include=["documents", "metadatas"])
        metas = found["metadatas"] or []
        if not found["ids"] or metas[0].get("revision_id") != revision.revision_id or metas[0].get("source") != source:
            raise InvalidArgumentError(f"chunk_id {chunk_id!r} is not a chunk of {source} {revision.revision_id}")
        text = (found["documents"] or [""])[0] or ""
    key = render_key(revision, page_number, dpi, text)
    if stores.objects.exists(key):
        render = Render.read(stores.objects.get_bytes(key))
        printed = render.printed_page if render.printed_known else printed_page_of(stores, revision, page_number)
    else:
        printed = printed_page_of(stores, revision, page_number)
        pdf = stores.objects.get_bytes(revision.file_path)
        render = render_page(pdf, page_number, highlight=text, dpi=dpi, printed_page=printed)
        stores.objects.put_bytes(key, render.png, "image/png")
        logger.info(
            "page_image.rendered source=%s revision_id=%s page=%d dpi=%d boxes=%d bytes=%d",
            source,
            revision.revision_id,
            page_number,
            dpi,
            render.highlighted,
            len(render.png),
        )
    return PageImage(source, revision.revision_id, revision.version_label, page_number, render, printed)


def printed_page_of(stores: PolicyStores, revision: Revision, page_number: int) -> str | None:
    """The page ``page_number`` prints, as the chunks of the sections that reach it recorded at ingestion
    (``printed_pages`` beside ``page_numbers``); None where it prints none or the chunks predate the field."""
    where = where_all(
        {"revision_ref": revision_ref(revision.source, revision.revision_id)},
        {"page_number": {"$lte": page_number}},
        {"last_page": {"$gte": page_number}},
    )
    for _, meta in stores.vectors.iter_metadata(where):
        pages = [int(p) for p in str(meta.get("page_numbers", "")).split(",") if p]
        if page_number in pages:
            return from_stored_list(meta.get("printed_pages"), len(pages))[pages.index(page_number)]
    return None
