"""What every quote check reports about a match, whatever the store (a policy revision, an application's
documents): the fields a match carries (``MatchFields``) and the sentence that says it (``describe``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from lib.quotes.classify import QuoteMatch, Verdict
from lib.quotes.diff import WordChange, legacy
from lib.quotes.meaning import MeaningChange
from lib.quotes.passages import Passage


class MatchFields(BaseModel):
    """Where in a passage a quote matched, and how."""

    verdict: str = Field(description="exact | normalised | close | altered")
    page_number: int = Field(description="The PDF page (1 for the first) of the chunk where the match starts")
    printed_page: str | None = Field(
        default=None, description="That page as the document prints it ('57', 'iv', 'A-3'); null where none is printed"
    )
    context: str = Field(description="The passage around the match, cut at sentence ends")
    matched_text: str = Field(description="The text's own words where the quote matched")
    similarity: float | None = Field(
        description="1.0 for exact and normalised; for close, how alike (0.8..1); null for altered, which is not "
        "nearly right however alike its characters"
    )
    differences: list[str] = Field(
        default_factory=list, description="For close and altered: 'quoted' -> 'text' per differing stretch of words"
    )
    word_changes: list[WordChange] = Field(
        default_factory=list, description="For close and altered: each differing stretch, word for word, verbatim"
    )
    meaning_changes: list[MeaningChange] = Field(
        default_factory=list,
        description="For altered: each change of meaning (negation, modal, number, date, qualifier, antonym, wording) "
        "with the words of both sides",
    )


def match_fields(passage: Passage, found: QuoteMatch) -> dict[str, Any]:
    """The ``MatchFields`` of ``found`` in ``passage``, as keyword arguments."""
    return {
        "verdict": found.verdict.value,
        "page_number": passage.page_at(found.start),
        "printed_page": passage.printed_page_at(found.start),
        "context": passage.context(found.start, found.end),
        "matched_text": passage.matched(found.start, found.end),
        "similarity": None if found.verdict == Verdict.ALTERED else found.similarity,
        "differences": [legacy(c) for c in found.changes],
        "word_changes": found.changes,
        "meaning_changes": found.meaning,
    }


def _change(change: MeaningChange) -> str:
    if not change.source:
        return f"{change.kind}: the quote adds {change.quoted!r}"
    if not change.quoted:
        return f"{change.kind}: the quote leaves out {change.source!r}"
    return f"{change.kind}: the quote has {change.quoted!r} where the text has {change.source!r}"


def describe(match: MatchFields, where: str) -> str:
    """One sentence on ``match`` found at ``where`` (a document, section and page)."""
    if match.verdict == Verdict.EXACT:
        return f"Found word for word in {where}"
    if match.verdict == Verdict.NORMALISED:
        return f"Found in {where}, differing only in spacing, hyphenation, typography or an omission marked '...'"
    if match.verdict == Verdict.ALTERED:
        return f"Altered: the passage in {where} says something else ({'; '.join(map(_change, match.meaning_changes))})"
    similarity = match.similarity or 0.0
    return (
        f"Not verbatim, meaning unchanged: the closest passage is in {where} ({similarity:.0%} alike; "
        + "; ".join(match.differences[:3])
        + ")"
    )
