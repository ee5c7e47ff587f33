"""``verify_quote``: is a quoted passage in the revision of a policy in force on a day, how faithfully
(``lib.quotes``: exact, normalised, close, altered), and if not there, in which other revision is it
(``not_in_force``)?

A revision is read as its sections (the chunks sharing a ``section_ref``, rejoined without the splitter's
overlap), kept with the revision's slice of the corpus index (``CorpusIndex.derived``), so the reading lives
exactly as long as the slice and follows its stamp. The revisions in force on the day are searched first;
only when none holds the quote exactly or normalised are the policy's other revisions (superseded, or not yet
in force) read, and a quote one of them holds word for word (or normalised) is ``not_in_force``, naming it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from typing import Any

from pydantic import BaseModel, Field

from lib.citation import format_citation
from lib.dates import iso, parse_date
from lib.policies.chunks import revision_ref
from lib.policies.models import Revision
from lib.policies.search import check_sources
from lib.policies.stores import PolicyStores
from lib.policies.temporal import resolve_revision
from lib.quotes.classify import Quote, QuoteMatch, Verdict, check_quote, rank
from lib.quotes.passages import Passage, Passages
from lib.quotes.report import MatchFields, describe, match_fields
from lib.retrieval import CorpusIndex


def read_revision(texts: Sequence[str], metadatas: Sequence[Mapping[str, Any]]) -> Passages:
    """A revision's sections, in document order, from its chunks (any order)."""
    return Passages.read(
        texts, metadatas, key=lambda m: str(m.get("section_ref", "")), order=lambda m: (int(m.get("chunk_index", 0)),)
    )


def _revision_text(stores: PolicyStores, source: str, revision: Revision) -> Passages:
    """The revision's reading, kept with its slice of the corpus index when the slice can be held."""
    key = revision_ref(source, revision.revision_id)
    held = stores.vectors.held_blocks({key: revision})
    if held:
        index: CorpusIndex = held[0]
        return index.derived("quotes", lambda: read_revision(index.texts, index.metadatas))
    chunks = stores.vectors.chunks({"revision_ref": key})
    return read_revision([c.text for c in chunks], [c.metadata for c in chunks])


class QuoteLocation(MatchFields):
    """Where a quote was found: the revision (and whether it was in force on the day asked), the section and
    page, the sentence around it, and for a ``close`` or ``altered`` match what differs."""

    source: str
    revision_id: str
    version_label: str
    effective_from: str
    effective_to: str | None
    in_force: bool = Field(description="Whether this revision was in force on the effective_date asked")
    section_ref: str
    citation: str = Field(
        description="The match cited as people write it: edition, section and printed page, with the PDF page "
        "where they differ ('NPPF December 2024, Para 116, p. 33 (PDF page 35)')"
    )


class QuoteVerification(BaseModel):
    verdict: str = Field(
        description="exact | normalised | close | altered | not_found in the revision(s) in force; not_in_force "
        "when only another revision holds the quote (elsewhere names it)"
    )
    quote: str
    effective_date: str
    sources: list[str]
    match: QuoteLocation | None = Field(description="The best match in a revision in force on the day")
    elsewhere: list[QuoteLocation] = Field(
        default_factory=list,
        description="When the revision in force does not hold the quote (exactly or normalised): the other "
        "revisions that do, superseded or not yet in force",
    )
    message: str


def _location(source: str, revision: Revision, day: date, hit: tuple[Passage, QuoteMatch]) -> QuoteLocation:
    section, found = hit
    fields = match_fields(section, found)
    return QuoteLocation(
        **fields,
        citation=format_citation(
            document=f"{source} {revision.version_label}",
            section_ref=section.key,
            page_number=fields["page_number"],
            printed_page=fields["printed_page"],
        ),
        source=source,
        revision_id=revision.revision_id,
        version_label=revision.version_label,
        effective_from=revision.effective_from.isoformat(),
        effective_to=iso(revision.effective_to),
        in_force=revision.covers(day),
        section_ref=section.key,
    )


def verify_quote(
    stores: PolicyStores,
    quote: str,
    *,
    sources: Sequence[str] | None = None,
    effective_date: str | date | None = None,
) -> QuoteVerification:
    """Is ``quote`` in the revision of each of ``sources`` (default: every policy) in force on
    ``effective_date`` (default today)? Its verdict and where; if not exactly or normalised there, the other
    revisions that hold it."""
    quote = check_quote(quote)
    day = parse_date(effective_date, field="effective_date") if effective_date is not None else date.today()
    snapshot = stores.registry.snapshot()
    wanted = check_sources(snapshot.sources, sources)
    in_force: list[tuple[str, Revision]] = []
    others: list[tuple[str, Revision]] = []
    for source in wanted:
        revision = resolve_revision(source, snapshot.revisions[source], day).revision
        if revision is not None and revision.resolvable:
            in_force.append((source, revision))
        others.extend((source, r) for r in snapshot.revisions[source] if r.resolvable and r is not revision)

    read = Quote.read(quote)
    match: QuoteLocation | None = None
    for source, revision in in_force:
        hit = _revision_text(stores, source, revision).best(read, close=True)
        if hit is not None:
            found = _location(source, revision, day, hit)
            if match is None or _key(found) > _key(match):
                match = found
    elsewhere: list[QuoteLocation] = []
    if match is None or rank(match.verdict) < rank(Verdict.NORMALISED):
        for source, revision in others:
            hit = _revision_text(stores, source, revision).best(read, close=False)
            if hit is not None:
                elsewhere.append(_location(source, revision, day, hit))
    verdict = Verdict.NOT_IN_FORCE.value if elsewhere else (match.verdict if match else Verdict.NOT_FOUND.value)
    return QuoteVerification(
        verdict=verdict,
        quote=quote,
        effective_date=day.isoformat(),
        sources=list(wanted),
        match=match,
        elsewhere=elsewhere,
        message=_message(match, elsewhere, in_force, day),
    )


def _key(location: QuoteLocation) -> tuple[int, float]:
    return rank(location.verdict), location.similarity if location.similarity is not None else 0.0


def _when(location: QuoteLocation, day: date) -> str:
    """'superseded on 2024-12-12' or 'in force from 2099-01-01' for a revision not in force on ``day``."""
    if location.effective_to is not None and date.fromisoformat(location.effective_to) < day:
        return f"superseded on {(date.fromisoformat(location.effective_to) + timedelta(days=1)).isoformat()}"
    return f"in force from {location.effective_from}"


def _message(
    match: QuoteLocation | None, elsewhere: list[QuoteLocation], in_force: list[tuple[str, Revision]], day: date
) -> str:
    editions = ", ".join(f"{s} {r.version_label}" for s, r in in_force)
    if not in_force:
        head = f"No revision of these policies was in force on {day.isoformat()}"
    elif match is not None and not elsewhere:
        return describe(match, match.citation)
    else:
        head = f"Not found in the revision in force on {day.isoformat()} ({editions})"
    if elsewhere:
        head += "; found in " + "; ".join(
            f"the {e.version_label} edition of {e.source} ({_when(e, day)}): {e.citation}" for e in elsewhere
        )
    if match is not None:
        head += f". In the revision in force: {describe(match, match.citation)}"
    return head
