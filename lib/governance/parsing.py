"""Reading one governance file: its identity, lifecycle fields and chain links, and its sections.

Three shapes, told apart by content (the extension only hints):

- **PEP-style reStructuredText or text**: an RFC 822 header block (``PEP:``, ``Title:``, ``Status:``,
  ``Type:``, ``Created:``, ``Replaces:``, ``Superseded-By:``) read with ``email.parser``, then a
  reStructuredText body cut into sections by docutils (``lib.governance.sections``).
- **Markdown with YAML front matter** (``id``, ``title``, ``type``, ``status``, ``relates_to``,
  ``supported_until``, ``version``, ...) read with ``python-frontmatter``; body cut at its headings.
- **Markdown or plain text without front matter** (the spec documents): the first heading is the title, and
  a leading ``Status: ...`` / ``**Date:** ...`` field block under it, when there is one, gives status and date.

Ids: a PEP is ``PEP-0513`` (``canonical_id`` maps ``PEP 513``, ``pep-513``, ``513`` in chain headers to it,
so ``Superseded-By: 600`` links to ``PEP-0600``); anything else uses its front matter ``id`` or the file stem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

import frontmatter
import yaml

from lib.governance.sections import ParsedSection, markdown_sections, rst_sections

PEP_ID = re.compile(r"^\s*pep[\s_-]*0*(\d{1,5})\s*$", re.IGNORECASE)
UNKNOWN_STATUS = "Unknown"


class UnreadableDocumentError(ValueError):
    """The file is not a governance document this parser can read (no text, broken front matter, ...)."""


@dataclass
class ParsedDocument:
    id: str
    title: str
    type: str
    status: str
    sections: list[ParsedSection]
    text: str
    created: date | None = None
    supported_until: date | None = None
    version: str | None = None
    relates_to: list[str] = field(default_factory=list)
    replaces: list[str] = field(default_factory=list)
    superseded_by: list[str] = field(default_factory=list)


def pep_id(number: int | str) -> str:
    return f"PEP-{int(number):04d}"


def canonical_id(value: str) -> str:
    """``PEP 513``, ``pep-0513``, ``PEP513`` and a bare ``513`` become ``PEP-0513``; other ids are kept as given."""
    text = value.strip()
    if text.isdigit():
        return pep_id(text)
    match = PEP_ID.match(text)
    return pep_id(match.group(1)) if match else text


def _id_list(value: Any) -> list[str]:
    """Ids from a header (``513, 571, 599``) or a front-matter list/string, canonical, in order, no repeats."""
    if value is None:
        return []
    items = value if isinstance(value, list) else str(value).replace(",", " ").split()
    return list(dict.fromkeys(canonical_id(str(item)) for item in items if str(item).strip()))


def header_date(value: Any) -> date | None:
    """A front-matter or header date: a YAML date, ``2028-01-01`` or the PEPs' ``19-Jan-2016``."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    text = str(value or "").strip()
    for parse in (date.fromisoformat, lambda s: datetime.strptime(s, "%d-%b-%Y").date()):
        try:
            return parse(text)
        except ValueError:
            continue
    return None


def parse_document(path: Path, raw: str) -> ParsedDocument:
    """Read one file's text. Raises ``UnreadableDocumentError`` for anything that is not a document."""
    if not raw.strip():
        raise UnreadableDocumentError("the file is empty")
    if raw.lstrip("\ufeff").startswith("---"):
        return _front_matter(path, raw)
    if raw.lstrip().upper().startswith("PEP:"):
        return _pep(raw)
    return _markdown(path, raw, {})


def _pep(raw: str) -> ParsedDocument:
    head, _, body = raw.lstrip().partition("\n\n")
    headers = HeaderParser().parsestr(head)
    number = (headers.get("PEP") or "").strip()
    if not number.isdigit():
        raise UnreadableDocumentError(f"the PEP header has no number: {number!r}")
    title = " ".join((headers.get("Title") or "").split()) or f"PEP {int(number)}"
    sections = rst_sections(body, title) if body.strip() else []
    if not sections:
        sections = [ParsedSection(title, title)]  # a PEP with headers alone is still registered and listed
    return ParsedDocument(
        id=pep_id(number),
        title=title,
        type=" ".join((headers.get("Type") or "").split()) or "PEP",
        status=" ".join((headers.get("Status") or "").split()) or UNKNOWN_STATUS,
        sections=sections,
        text=body.strip(),
        created=header_date(headers.get("Created")),
        version=(headers.get("Python-Version") or "").strip() or None,
        replaces=_id_list(headers.get("Replaces")),
        superseded_by=_id_list(headers.get("Superseded-By")),
    )


def _front_matter(path: Path, raw: str) -> ParsedDocument:
    try:
        post = frontmatter.loads(raw.lstrip("\ufeff"))
    except yaml.YAMLError as exc:
        raise UnreadableDocumentError(f"the YAML front matter does not parse: {exc}") from exc
    return _markdown(path, post.content, dict(post.metadata))


def _markdown(path: Path, body: str, meta: dict[str, Any]) -> ParsedDocument:
    sections, first_heading, fields = markdown_sections(body)
    title = str(meta.get("title") or first_heading or path.stem).strip()
    headings = {s.heading.rsplit(" > ", 1)[-1].lower() for s in sections}
    default_type = "adr" if "decision outcome" in headings else "document"
    status = meta.get("status") or fields.get("status") or UNKNOWN_STATUS
    return ParsedDocument(
        id=canonical_id(str(meta.get("id") or path.stem)),
        title=title,
        type=str(meta.get("type") or default_type).strip(),
        status=str(status).strip(),
        sections=sections,
        text=body.strip(),
        created=header_date(meta.get("created") or meta.get("date") or fields.get("date") or fields.get("created")),
        supported_until=header_date(meta.get("supported_until")),
        version=_text(meta.get("version") or fields.get("version")),
        relates_to=_id_list(meta.get("relates_to")),
        replaces=_id_list(meta.get("replaces")),
        superseded_by=_id_list(meta.get("superseded_by") or meta.get("superseded-by")),
    )


def _text(value: Any) -> str | None:
    return None if value is None or not str(value).strip() else str(value).strip()
