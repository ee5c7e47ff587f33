"""The text block of a tool result: a short rendering for a reader, beside the structured content that holds the
data (the spec's JSON, which a client validates against the tool's output schema).

One rendering for every tool, read from the answer's shape: its plain fields on one line, then each list as
numbered entries. An entry that cites a place in a document (``source``/``document_id``, ``section_ref``,
``page_number``/``page_numbers``, ``printed_page``) is written as the citation (``lib.citation``:
``NPPF December 2024, Para 116, p. 33 (PDF page 35)``) followed by its score, and its text as a quoted snippet.

Text from documents is data, never guidance: it only ever appears quoted (``lib.quoting``), so nothing a document
says can read as part of the server's own words: an entry's text as a one-line snippet (``> "..."``), a text that
is the answer itself (a section, a document) as a block of ``> `` lines. The whole text is in the structured
content.
"""

from __future__ import annotations

from typing import Any

from lib.citation import format_citation
from lib.quoting import quoted, quoted_block, quoted_field
from mcp_service.tools.document_content import document_fields

LIST_ENTRIES = 25
"""How many entries of one list are rendered; the rest are counted."""
TEXT_FIELDS = ("text", "passage", "context", "sentence", "snippet")
"""Fields that hold document text, quoted wherever they appear."""
CITATION_FIELDS = frozenset(
    {
        "source",
        "version_label",
        "revision_id",
        "section_ref",
        "page_number",
        "page_numbers",
        "printed_page",
        "document_id",
        "filename",
        "file_path",
        "score",
        "relevance_score",
        "dense_score",
        "lexical_score",
        "effective_from",
        "effective_to",
        "chunk_id",
    }
)
"""What a citation line already says, or what only a program needs beside it: left out of the entry's fields."""
SCALARS = (str, int, float, bool)


def citation(entry: dict[str, Any]) -> str:
    """Where an entry is: its document, section and page as people cite them, and its score."""
    document = " ".join(str(entry[k]) for k in ("source", "version_label") if entry.get(k)) or str(
        entry.get("document_id") or entry.get("filename") or entry.get("file_path") or ""
    )
    pages = entry.get("page_numbers") or []
    page = entry.get("page_number") or (pages[0] if pages else None)
    text = format_citation(
        document=document,
        section_ref=str(entry.get("section_ref") or ""),
        page_number=page if isinstance(page, int) else None,
        printed_page=entry.get("printed_page"),
    )
    score = entry.get("score", entry.get("relevance_score"))
    return f"{text} (score {score:.3f})" if isinstance(score, float) else text


def _plain(entry: dict[str, Any], skip: frozenset[str], quoted_fields: list[str]) -> str:
    """An entry's short plain fields, ``key: value; ...`` (its ``quoted_fields``, read from the document, and long
    strings, left out: they are quoted on lines of their own)."""
    parts = []
    for key, value in entry.items():
        if key in skip or key in TEXT_FIELDS or key == "status" or value is None or value == "" or value == []:
            continue
        if key in quoted_fields:
            continue
        if isinstance(value, SCALARS) and len(str(value)) <= 120:
            parts.append(f"{key}: {value}")
        elif isinstance(value, list) and value and all(isinstance(v, SCALARS) for v in value) and len(value) <= 12:
            parts.append(f"{key}: {', '.join(str(v) for v in value)}")
    return "; ".join(parts)


def _entry(entry: dict[str, Any], indent: str, *, answer: bool = False) -> list[str]:
    """An entry's lines: its citation and fields, its text quoted (whole when it is the ``answer``), its lists."""
    cites = any(k in entry for k in ("section_ref", "page_number", "page_numbers", "document_id"))
    head = citation(entry) if cites else ""
    fields = document_fields(entry)
    rest = _plain(entry, CITATION_FIELDS if cites else frozenset(), fields)
    lines = [" — ".join(part for part in (head, rest) if part)]
    lines += [indent + quoted_field(key, entry[key]) for key in fields if key not in TEXT_FIELDS]
    for key in TEXT_FIELDS:
        if isinstance(entry.get(key), str) and entry[key].strip():
            lines += quoted_block(entry[key]) if answer else [indent + quoted(entry[key])]
    lines += _nested(entry, indent)
    return lines


def _nested(value: dict[str, Any], indent: str) -> list[str]:
    """The lists and objects inside ``value``, indented one step."""
    lines: list[str] = []
    for key, item in value.items():
        if isinstance(item, dict) and item:
            body = _entry(item, indent + "  ")
            lines.append(f"{indent}{key}: {body[0]}")
            lines += [indent + line for line in body[1:]]
        elif isinstance(item, list) and item and all(isinstance(v, dict) for v in item):
            lines.append(f"{indent}{key} ({len(item)}):")
            for number, entry in enumerate(item[:LIST_ENTRIES], 1):
                body = _entry(entry, indent + "     ")
                lines.append(f"{indent}  [{number}] {body[0]}")
                lines += [indent + line for line in body[1:]]
            if len(item) > LIST_ENTRIES:
                lines.append(f"{indent}  ... and {len(item) - LIST_ENTRIES} more (structured content)")
    return lines


def render(payload: dict[str, Any]) -> str:
    """The text block of a successful result: its plain fields, its document text quoted, its lists numbered."""
    return "\n".join(line for line in _entry(payload, "", answer=True) if line) or "Done."


def render_error(error_type: str, message: str) -> str:
    """The text block of a failed call: what kind of error, and the message."""
    return f"Error ({error_type}): {message}"
