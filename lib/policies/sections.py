"""Section reads (spec 000 FR-002 and issue 22): one section of a policy revision by its reference, every
section of a revision (its table of contents), and the sections of every plan that cite a section.

Everything is read from chunk metadata (exact and complete), never by embedding a reference: a section is
the chunks sharing its ``section_ref``, in document order, rejoined without the overlap the splitter repeated.
A reference is taken as people type it (``lib.policies.refs``); one that names no section, or more than one,
is ``section_not_found`` with the nearest refs the revision has.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import date
from itertools import groupby
from typing import Any

from pydantic import BaseModel, Field

from lib.dates import iso, parse_date
from lib.errors import InvalidArgumentError, RevisionNotFoundError, SectionNotFoundError
from lib.models import SECTION_KINDS, kind_of_ref
from lib.policies.chunks import revision_filter, revision_ref
from lib.policies.models import Revision
from lib.policies.refs import canonical_ref, match_ref, nearest_refs, normalise
from lib.policies.registry import check_revision_id, check_source
from lib.policies.stores import PolicyStores
from lib.policies.xrefs import CITES, Citation, DocumentNames
from lib.stores.chroma import StoredChunk, where_all
from lib.text.chunking import merge_chunk_texts
from lib.text.printed_pages import from_stored

_WHOLE_CHAPTER = re.compile(r"^Chapter \d+$")
"""A chapter ref names the whole chapter: its intro and every paragraph, policy and footnote in it."""


class PolicySection(BaseModel):
    source: str
    section_ref: str = Field(description="The revision's own ref, whatever form it was asked for in")
    revision_id: str
    version_label: str
    chapter: str
    text: str
    page_numbers: list[int]
    kind: str = Field(default="", description="One of " + ", ".join(SECTION_KINDS))
    title: str = ""
    printed_page: str | None = Field(
        default=None,
        description="The page as the document prints it where the section starts ('57', 'iv', 'A-3', '62-63' for "
        "a two-page spread); null where that page prints no number. page_numbers are PDF pages",
    )
    supports: str | None = Field(default=None, description="For a paragraph of reasoned justification: its policy")
    cites: list[Citation] = Field(default_factory=list, description="The refs the section's text cites, in order")


class SectionEntry(BaseModel):
    section_ref: str
    kind: str
    title: str
    chapter: str
    page_numbers: list[int]
    printed_page: str | None = Field(default=None, description="The page as printed where it starts; null if none")
    supports: str | None = None


class SectionList(BaseModel):
    source: str
    revision_id: str
    version_label: str
    section_count: int
    sections: list[SectionEntry] = Field(description="In document order")


class CitingSection(BaseModel):
    source: str
    revision_id: str
    version_label: str
    section_ref: str
    kind: str
    title: str
    page_numbers: list[int]
    printed_page: str | None = Field(default=None, description="The page as printed where it starts; null if none")


class CitingSections(BaseModel):
    source: str
    section_ref: str = Field(description="The cited ref, in the form citations are stored: 'Para 11', 'Policy SD11'")
    effective_date: str
    section_count: int
    sections: list[CitingSection] = Field(description="By citing source, then document order")


def _check_ref(section_ref: str) -> str:
    if not isinstance(section_ref, str) or not section_ref.strip():
        raise InvalidArgumentError("section_ref must be a non-empty string such as 'Para 116'")
    return normalise(section_ref)


def chosen_revision(
    stores: PolicyStores, source: str, revision_id: str | None, effective_date: str | date | None
) -> Revision:
    """The named revision, else the one in force on the date (default today)."""
    check_source(source)
    if revision_id is not None:
        return stores.registry.get_revision(source, check_revision_id(revision_id))
    day = parse_date(effective_date, field="effective_date") if effective_date is not None else date.today()
    stores.registry.get_policy(source)
    resolution = stores.resolver.resolve_for_policy(source, day)
    if resolution.revision is None:
        raise RevisionNotFoundError(
            f"No revision of '{source}' was in force on {day.isoformat()} ({resolution.reason})",
            source=source,
            reason=resolution.reason,
        )
    return resolution.revision


def _pages(metadatas: Iterable[Mapping[str, Any]]) -> list[int]:
    return sorted(
        {int(p) for m in metadatas for p in str(m.get("page_numbers") or m.get("page_number", 0)).split(",") if p}
    )


def _kind(meta: Mapping[str, Any]) -> str:
    return str(meta.get("section_kind") or kind_of_ref(str(meta.get("section_ref", ""))))


def _printed(meta: Mapping[str, Any]) -> str | None:
    return from_stored(meta.get("printed_page"))


def _entries(stores: PolicyStores, source: str, revision_id: str) -> list[SectionEntry]:
    """Every section of a revision in document order, from its chunks' metadata (no texts are read)."""
    rows = sorted(
        (meta for _, meta in stores.vectors.iter_metadata({"revision_ref": revision_ref(source, revision_id)})),
        key=lambda m: int(m.get("chunk_index", 0)),
    )
    by_ref: dict[str, list[dict[str, Any]]] = {}
    for meta in rows:
        by_ref.setdefault(str(meta.get("section_ref", "")), []).append(meta)
    return [
        SectionEntry(
            section_ref=ref,
            kind=_kind(metas[0]),
            title=str(metas[0].get("section_title", "")),
            chapter=str(metas[0].get("chapter", "")),
            page_numbers=_pages(metas),
            printed_page=_printed(metas[0]),
            supports=str(metas[0].get("supports") or "") or None,
        )
        for ref, metas in by_ref.items()
    ]


def list_policy_sections(
    stores: PolicyStores,
    source: str,
    *,
    revision_id: str | None = None,
    effective_date: str | date | None = None,
    kind: str | None = None,
) -> SectionList:
    """A revision's table of contents: every section with its kind, title, pages and the policy a paragraph
    supports; only sections of ``kind`` when given."""
    if kind is not None and kind not in SECTION_KINDS:
        raise InvalidArgumentError(f"kind must be one of {', '.join(SECTION_KINDS)}, got {kind!r}", kind=kind)
    revision = chosen_revision(stores, source, revision_id, effective_date)
    entries = [e for e in _entries(stores, source, revision.revision_id) if kind in (None, e.kind)]
    return SectionList(
        source=source,
        revision_id=revision.revision_id,
        version_label=revision.version_label,
        section_count=len(entries),
        sections=entries,
    )


def _resolve_ref(stores: PolicyStores, source: str, revision: Revision, typed: str) -> list[StoredChunk]:
    """The chunks of the one section ``typed`` names; ``section_not_found`` (with the nearest refs) otherwise."""
    chunks = stores.vectors.section_chunks(source, revision.revision_id, typed)
    if chunks:
        return chunks
    refs = [e.section_ref for e in _entries(stores, source, revision.revision_id)]
    matched = match_ref(typed, refs)
    if len(matched) == 1:
        return stores.vectors.section_chunks(source, revision.revision_id, matched[0])
    where = f"{source} revision '{revision.revision_id}'"
    if matched:
        message = f"Section '{typed}' names more than one section of {where}: {', '.join(matched)}; name one"
        suggestions = matched
    else:
        suggestions = nearest_refs(typed, refs)
        hint = f". Did you mean: {', '.join(suggestions)}?" if suggestions else ""
        message = f"Section '{typed}' not found in {where}{hint}"
    raise SectionNotFoundError(
        message, source=source, section_ref=typed, revision_id=revision.revision_id, suggestions=suggestions
    )


def _citations(stores: PolicyStores, source: str, chunks: Iterable[StoredChunk]) -> list[Citation]:
    entries = list(dict.fromkeys(str(e) for c in chunks for e in c.metadata.get(CITES) or []))
    if not entries:
        return []
    names = DocumentNames(stores.registry.list_policies() if any(not e.startswith("|") for e in entries) else [])
    return [names.citation(entry, source) for entry in entries]


def get_policy_section(
    stores: PolicyStores,
    source: str,
    section_ref: str,
    *,
    revision_id: str | None = None,
    effective_date: str | date | None = None,
) -> PolicySection:
    """One section of one revision (the named one, else the one in force on the date, default today), with
    the refs it cites. ``Chapter N`` returns the whole chapter, as spec 000's ``Chapter 5`` example expects."""
    typed = _check_ref(section_ref)
    revision = chosen_revision(stores, source, revision_id, effective_date)
    chunks = _resolve_ref(stores, source, revision, typed)
    first = chunks[0].metadata
    ref = str(first.get("section_ref", typed))
    if _WHOLE_CHAPTER.match(ref) and first.get("chapter"):
        chunks = stores.vectors.chapter_chunks(source, revision.revision_id, str(first["chapter"]))
    return PolicySection(
        source=source,
        section_ref=ref,
        revision_id=revision.revision_id,
        version_label=revision.version_label,
        chapter=str(first.get("chapter", "")),
        text="\n\n".join(
            merge_chunk_texts([c.text for c in group])
            for _, group in groupby(chunks, key=lambda c: c.metadata.get("section_ref"))
        ),
        page_numbers=_pages(c.metadata for c in chunks),
        kind=_kind(first),
        title=str(first.get("section_title", "")),
        printed_page=_printed(first),
        supports=str(first.get("supports") or "") or None,
        cites=_citations(stores, source, chunks),
    )


def _citing_rows(stores: PolicyStores, source: str, ref: str, in_force: Mapping[str, Revision]) -> list[dict[str, Any]]:
    """Metadata of the chunks of ``in_force`` revisions whose ``cites`` name ``ref`` of ``source``: by one of
    its names from any document, or with no name from inside ``source``'s own revision, where citations are
    stored in the revision's own notation (``Policy CS 1`` for a typed ``CS1``)."""
    clauses: list[dict[str, Any]] = []
    for key, revision in in_force.items():
        if revision.source == source:
            own = match_ref(ref, [e.section_ref for e in _entries(stores, source, revision.revision_id)])
            for cited in sorted({ref, *(own if len(own) == 1 else [])}):
                clauses.append({"$and": [{"revision_ref": key}, {CITES: {"$contains": f"|{cited}"}}]})
    names = DocumentNames(stores.registry.list_policies()).names_of(source)
    clauses += [{CITES: {"$contains": f"{name}|{ref}"}} for name in sorted(names)]
    if not in_force or not clauses:
        return []
    where = where_all(revision_filter(sorted(in_force)), clauses[0] if len(clauses) == 1 else {"$or": clauses})
    return sorted(
        (meta for _, meta in stores.vectors.iter_metadata(where)),
        key=lambda m: (str(m.get("revision_ref")), int(m.get("chunk_index", 0))),
    )


def find_citing_sections(
    stores: PolicyStores, source: str, section_ref: str, *, effective_date: str | date | None = None
) -> CitingSections:
    """The sections, of every revision in force on the date (default today), whose text cites ``section_ref``
    of ``source``: by name from other documents (``paragraph 11 of the NPPF``), or from inside its own."""
    stores.registry.get_policy(check_source(source))
    ref = canonical_ref(_check_ref(section_ref))
    day = parse_date(effective_date, field="effective_date") if effective_date is not None else date.today()
    in_force = {
        revision_ref(s, r.revision.revision_id): r.revision
        for s, r in stores.resolver.resolve_many(None, day).items()
        if r.revision is not None
    }
    found: list[CitingSection] = []
    rows = _citing_rows(stores, source, ref, in_force)
    for (key, cited_in), group in groupby(rows, key=lambda m: (str(m.get("revision_ref")), m.get("section_ref"))):
        metas = list(group)
        revision = in_force[key]
        found.append(
            CitingSection(
                source=revision.source,
                revision_id=revision.revision_id,
                version_label=revision.version_label,
                section_ref=str(cited_in),
                kind=_kind(metas[0]),
                title=str(metas[0].get("section_title", "")),
                page_numbers=_pages(metas),
                printed_page=_printed(metas[0]),
            )
        )
    return CitingSections(
        source=source, section_ref=ref, effective_date=iso(day) or "", section_count=len(found), sections=found
    )
