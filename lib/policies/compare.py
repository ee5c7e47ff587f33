"""What changed in one section between two revisions of a policy: both texts with their citations, a
word-level diff, and, because editions renumber, where the section went.

December 2024's Para 116 (refusal on highways grounds) is not Para 116 of the December 2025 draft: the
draft says it in point 3 of Policy TR6. So when the same reference is missing from the other revision, or
says something else there (word similarity under ``DIFFERENT_BELOW``), its best-matching sections are
found in two steps:

1. candidates by retrieval: ``search_policy`` (hybrid by default) with the section's own text as the
   query, restricted to the other revision (by its first day in force, which resolves to it alone);
2. ranking by passage: each candidate section is cut into its paragraphs and points, and ranked by the
   best cosine similarity between one of them and one paragraph of the compared section (the same
   embedding model). Chunk-level scores alone rank poorly here because a renumbered policy often says
   the compared paragraph in one point among several: on the real NPPF pair, Para 116's own search
   ranks Policy F7 and N2 (development "refused" for flooding, biodiversity) above TR6, the passages
   put TR6 first (0.75, next TR5 at 0.68).

Glossary entries and footnotes are candidates only for a glossary entry or footnote: they define terms
a policy uses, so their short passages resemble its points without being its counterpart.

MCP (``compare_policy_section``) and REST (``GET /api/v1/policies/{source}/compare``) both call
``compare_section``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from datetime import date
from enum import StrEnum

import numpy as np
from pydantic import BaseModel, Field

from lib.dates import iso, parse_date
from lib.errors import InvalidArgumentError, RevisionNotFoundError, SectionNotFoundError
from lib.policies.models import Revision
from lib.policies.registry import check_revision_id, check_source
from lib.policies.search import search_policy
from lib.policies.sections import PolicySection, get_policy_section
from lib.policies.stores import PolicyStores
from lib.retrieval import MAX_QUERY_CHARS
from lib.text.chunking import merge_chunk_texts

DIFFERENT_BELOW = 0.5
"""Word similarity (difflib ratio) under which the same reference is taken to say something else."""
CONTEXT_WORDS = 6
"""Unchanged words kept on each side of a change in the rendered diff; longer runs are elided."""
MAX_MATCHES = 3
CANDIDATE_CHUNKS = 20
CANDIDATE_SECTIONS = 8
"""Sections (of the best ``CANDIDATE_CHUNKS`` chunks) whose passages are embedded and ranked."""
_DEFINITIONS = ("Glossary", "Footnote")
_PASSAGE_BREAK = re.compile(r"\n\s*\n")
_MIN_PASSAGE_WORDS = 5


class ReferenceStatus(StrEnum):
    UNCHANGED = "unchanged"
    CHANGED = "changed"
    DIFFERENT = "different"
    MISSING_IN_FROM = "missing_in_from"
    MISSING_IN_TO = "missing_in_to"


class RevisionCited(BaseModel):
    revision_id: str
    version_label: str
    effective_from: str
    effective_to: str | None


class SectionText(BaseModel):
    """One side of the comparison, citable: source, revision, version label, reference, pages."""

    source: str
    revision_id: str
    version_label: str
    section_ref: str
    chapter: str
    page_numbers: list[int]
    printed_page: str | None = Field(default=None, description="The page as printed where it starts; null if none")
    text: str


class WordDiff(BaseModel):
    similarity: float = Field(description="difflib ratio over the two texts' words, 0..1")
    words_from: int
    words_to: int
    words_removed: int
    words_added: int
    rendered: str = Field(
        description="The to-text with [-removed-] and {+added+} words inline; unchanged runs longer than "
        f"{2 * CONTEXT_WORDS} words are cut to their ends around ' … '"
    )


class SectionMatch(BaseModel):
    """A section of the other revision that says what the compared section says."""

    source: str
    revision_id: str
    version_label: str
    section_ref: str
    chapter: str
    page_numbers: list[int]
    score: float = Field(description="Cosine similarity of its best-matching passage to the compared section's")
    retrieval_score: float = Field(description="The search's score of its best chunk (the candidate step)")
    passage: str = Field(description="Its paragraph or point that matched best")


class Comparison(BaseModel):
    source: str
    section_ref: str
    from_revision: RevisionCited
    to_revision: RevisionCited
    reference_status: ReferenceStatus
    from_section: SectionText | None
    to_section: SectionText | None
    diff: WordDiff | None = Field(description="None when the reference exists in only one revision")
    matches_in: str | None = Field(
        default=None,
        description="The revision searched for matches: the one where the reference is missing or different",
    )
    matches: list[SectionMatch] = Field(default_factory=list)


def compare_section(
    stores: PolicyStores,
    source: str,
    section_ref: str,
    *,
    from_revision_id: str | None = None,
    to_revision_id: str | None = None,
    from_date: str | date | None = None,
    to_date: str | date | None = None,
) -> Comparison:
    """Compare ``section_ref`` between two revisions of ``source``.

    Each side is the named revision, else the one in force on its date. Without either, ``to`` is the
    revision starting last and ``from`` the one before it. ``section_not_found`` when neither revision
    has the reference.
    """
    check_source(source)
    to_rev = _pick(stores, source, to_revision_id, to_date, before=None)
    from_rev = _pick(stores, source, from_revision_id, from_date, before=to_rev)
    if from_rev.revision_id == to_rev.revision_id:
        raise InvalidArgumentError(f"from and to are the same revision ({to_rev.revision_id}); name two revisions")
    old = _section(stores, source, section_ref, from_rev)
    new = _section(stores, source, section_ref, to_rev)
    known = old or new
    if known is None:
        raise SectionNotFoundError(
            f"Section '{section_ref}' is in neither {from_rev.revision_id} nor {to_rev.revision_id} of {source}",
            source=source,
            section_ref=section_ref,
        )
    diff = word_diff(old.text, new.text) if old and new else None
    if diff is None:
        status = ReferenceStatus.MISSING_IN_FROM if old is None else ReferenceStatus.MISSING_IN_TO
    elif diff.similarity == 1.0:
        status = ReferenceStatus.UNCHANGED
    else:
        status = ReferenceStatus.CHANGED if diff.similarity >= DIFFERENT_BELOW else ReferenceStatus.DIFFERENT
    comparison = Comparison(
        source=source,
        section_ref=known.section_ref,
        from_revision=_cited(from_rev),
        to_revision=_cited(to_rev),
        reference_status=status,
        from_section=_side(old),
        to_section=_side(new),
        diff=diff,
    )
    if status in (ReferenceStatus.UNCHANGED, ReferenceStatus.CHANGED):
        return comparison
    target = to_rev if old is not None else from_rev
    comparison.matches_in = target.revision_id
    comparison.matches = best_matches(stores, source, target, known)
    return comparison


def best_matches(
    stores: PolicyStores, source: str, revision: Revision, section: PolicySection | SectionText
) -> list[SectionMatch]:
    """The sections of ``revision`` that best say what ``section`` (of another revision) says, best first
    (see the module docstring); none for a revision searches cannot see (processing, failed)."""
    text = section.text
    if not revision.resolvable:
        return []
    query = _query(text)
    result = search_policy(
        stores, query, sources=[source], effective_date=revision.effective_from, n_results=CANDIDATE_CHUNKS
    )
    definitions = section.section_ref.startswith(_DEFINITIONS)
    candidates: dict[str, float] = {}
    for hit in result.results:
        if hit.revision_id == revision.revision_id and (definitions or not hit.section_ref.startswith(_DEFINITIONS)):
            candidates.setdefault(hit.section_ref, hit.score)
        if len(candidates) == CANDIDATE_SECTIONS:
            break
    if not candidates:
        return []
    sections = {ref: stores.vectors.section_chunks(source, revision.revision_id, ref) for ref in candidates}
    cut = {ref: passages(merge_chunk_texts([c.text for c in chunks])) for ref, chunks in sections.items()}
    asked = passages(text)
    owners = [ref for ref, parts in cut.items() for _ in parts]
    vectors = np.asarray(stores.embedder.embed_batch([*asked, *(p for parts in cut.values() for p in parts)]))
    similarity = vectors[: len(asked)] @ vectors[len(asked) :].T
    best: dict[str, tuple[float, int]] = {}
    for column, ref in enumerate(owners):
        score = float(similarity[:, column].max())
        if ref not in best or score > best[ref][0]:
            best[ref] = (score, column)
    flat = [p for parts in cut.values() for p in parts]
    ranked = sorted(best.items(), key=lambda item: -item[1][0])[:MAX_MATCHES]
    return [
        SectionMatch(
            source=source,
            revision_id=revision.revision_id,
            version_label=revision.version_label,
            section_ref=ref,
            chapter=str(sections[ref][0].metadata.get("chapter", "")),
            page_numbers=sorted({int(p) for c in sections[ref] for p in _pages(c.metadata)}),
            score=round(score, 4),
            retrieval_score=round(candidates[ref], 6),
            passage=flat[column],
        )
        for ref, (score, column) in ranked
    ]


def passages(text: str) -> list[str]:
    """A section's paragraphs and lettered or numbered points (blank-line separated), each of at least
    a few words; the whole text when it has no such break."""
    parts = [" ".join(p.split()) for p in _PASSAGE_BREAK.split(text)]
    kept = [p for p in parts if len(p.split()) >= _MIN_PASSAGE_WORDS]
    return kept or [" ".join(text.split())]


def _pages(metadata: Mapping[str, object]) -> list[str]:
    return str(metadata.get("page_numbers") or metadata.get("page_number", "")).split(",")


def word_diff(old: str, new: str) -> WordDiff:
    """A word-level diff (``difflib`` over whitespace-split words), rendered compactly."""
    a, b = old.split(), new.split()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    parts: list[str] = []
    removed = added = 0
    opcodes = matcher.get_opcodes()
    for index, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag == "equal":
            parts.append(_elide(b[j1:j2], first=index == 0, last=index == len(opcodes) - 1))
            continue
        if i2 > i1:
            removed += i2 - i1
            parts.append("[-" + " ".join(a[i1:i2]) + "-]")
        if j2 > j1:
            added += j2 - j1
            parts.append("{+" + " ".join(b[j1:j2]) + "+}")
    return WordDiff(
        similarity=round(matcher.ratio(), 4),
        words_from=len(a),
        words_to=len(b),
        words_removed=removed,
        words_added=added,
        rendered=" ".join(p for p in parts if p),
    )


def _elide(words: list[str], *, first: bool, last: bool) -> str:
    head = [] if first else words[:CONTEXT_WORDS]
    tail = [] if last else words[-CONTEXT_WORDS:]
    if len(words) <= len(head) + len(tail) + 1:
        return " ".join(words)
    return " ".join([*head, "…", *tail])


def _query(text: str) -> str:
    """The section's text as a search query, cut at a word boundary under the search's limit."""
    words = " ".join(text.split())
    if len(words) <= MAX_QUERY_CHARS:
        return words
    return words[:MAX_QUERY_CHARS].rsplit(" ", 1)[0]


def _pick(
    stores: PolicyStores, source: str, revision_id: str | None, day: str | date | None, *, before: Revision | None
) -> Revision:
    if revision_id:
        return stores.registry.get_revision(source, check_revision_id(revision_id))
    if day is not None:
        when = parse_date(day, field="from_date" if before is not None else "to_date")
        resolution = stores.resolver.resolve_for_policy(source, when)
        if resolution.revision is None:
            raise RevisionNotFoundError(
                f"No revision of '{source}' was in force on {when.isoformat()} ({resolution.reason})",
                source=source,
                reason=resolution.reason,
            )
        return resolution.revision
    stores.registry.get_policy(source)
    ordered = sorted(
        (r for r in stores.registry.list_revisions(source) if r.resolvable), key=lambda r: r.effective_from
    )
    if before is not None:
        ordered = [r for r in ordered if r.effective_from < before.effective_from]
    if not ordered:
        raise RevisionNotFoundError(
            f"'{source}' has no {'earlier ' if before else ''}ingested revision to compare; name the revisions",
            source=source,
        )
    return ordered[-1]


def _section(stores: PolicyStores, source: str, section_ref: str, revision: Revision) -> PolicySection | None:
    try:
        return get_policy_section(stores, source, section_ref, revision_id=revision.revision_id)
    except SectionNotFoundError:
        return None


def _side(section: PolicySection | None) -> SectionText | None:
    if section is None:
        return None
    return SectionText(**section.model_dump(include=set(SectionText.model_fields)))


def _cited(revision: Revision) -> RevisionCited:
    return RevisionCited(
        revision_id=revision.revision_id,
        version_label=revision.version_label,
        effective_from=revision.effective_from.isoformat(),
        effective_to=iso(revision.effective_to),
    )
