"""Printed page numbers: the page as the document prints it (``57``, ``iv``, ``A-3``, ``62-63``), read from the
numbers in its margins, never guessed.

A number in a top or bottom margin (``lib.text.page_furniture`` finds those rows) is taken for the printed
page only when something beyond its being there says it is one:
* it keeps step with a number on a nearby page (the next page prints the next number, one page apart per PDF
  page, two on a two-page spread; a run of two pages is enough, so an appendix that restarts at 1, a jump
  in numbering, roman front matter and ``A-3``-style appendix pages each start a run of their own; three
  for a ``loose`` number, one that ends a short margin line recurring on too few pages to be a running
  footer);
* or it is worded as a page number (``Page 5``, ``5 of 40``);
* or the PDF's page label (``PageText.label``) says the same: the label confirms what is printed, and never
  stands in for it (a label that disagrees with the print is ignored, and a page that prints no number has
  none, whatever its label).
Where a page holds several candidates (a running footer ``Local Plan 2014 | 57``), the one in the longest run
wins. A page whose left and right halves print consecutive numbers is a two-page spread: ``62-63`` for the
page, ``62`` and ``63`` for its halves. Nothing is interpolated from neighbours: every value is digits or
numerals the page prints.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

SEARCH_PAGES = 4
"""A number keeps step with one on a page at most this many PDF pages away (unnumbered maps, dividers between)."""
LOOSE_RUN = 3
"""A number at the end of a short margin line that recurs on too few pages to be a running header (a footer
naming its chapter: ``Housing | 57``) is the page number only in a run of at least this many pages."""
LOOSE_MAX_CHARS = 60

_WORD = r"(?:page|pg\.?|p\.)\s*"
_BARE_RE = re.compile(rf"^(?P<word>{_WORD})?(?P<num>\d{{1,5}})(?P<of>\s*(?:of|/)\s*\d{{1,5}})?$", re.IGNORECASE)
_DECORATION_RE = re.compile(r"^[-\u2013\u2014|\u00b7\u2022]+\s*|\s*[-\u2013\u2014|\u00b7\u2022]+$")
_BARE_SPREAD_RE = re.compile(r"^(\d{1,5})(?:\s*[-\u2013\u2014]\s*|\s+)(\d{1,5})$")
_BARE_ROMAN_RE = re.compile(rf"^(?:{_WORD})?([ivxl]{{1,8}}|[IVXL]{{1,8}})$", re.IGNORECASE)
_PREFIXED_RE = re.compile(rf"^(?:{_WORD})?([A-Z]{{1,2}})\s?[-\u2013\u2014]\s?(\d{{1,3}})$", re.IGNORECASE)
_WORDED_RE = re.compile(r"\bpage\s+(\d{1,5})(?:\s+of\s+\d{1,5})?\b", re.IGNORECASE)
_NUMBER_RE = re.compile(r"(?<![\d.,/:])\d{1,5}(?![\d/:]|[.,]\d)")
_SET_APART_RE = re.compile(r"^\d{1,5}\s*(?:[|\u00b7\u2022]|\s[-\u2013\u2014]\s)")
_IN_ROW_PREFIXED_RE = re.compile(r"(?<![\w-])([A-Z])\s?[-\u2013]\s?(\d{1,3})(?![\w-])")
_ROMAN_RE = re.compile(r"^m{0,3}(cm|cd|d?c{0,3})(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})$")
_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}
_LABEL_DASHES_RE = re.compile(r"\s*[\u2013\u2014]\s*")
_DIGITS_RE = re.compile(r"\d+")


@dataclass(frozen=True)
class PageToken:
    """A number a margin row prints. ``series`` keeps numberings apart ("" arabic, "roman", ``A-`` for
    ``A-3``); ``first``..``last`` its value (two apart from one for ``62-63`` printed as one); ``bare``: the
    row is the number alone; ``worded``: ``Page 5`` or ``5 of 40``; ``centre``: the row's middle, 0..1 across;
    ``loose``: from a short margin line that is no running header (``loose_tokens``); ``slot``: for a number
    inside a longer line, the line's words with digits masked and which of its numbers this is, so the same
    place in the same footer can be compared from page to page; ``edge``: that number starts or ends its line
    (``57 | Local Plan`` on a left-hand page, ``Local Plan | 58`` on a right-hand one)."""

    text: str
    series: str
    first: int
    last: int
    bare: bool = True
    worded: bool = False
    centre: float | None = None
    loose: bool = False
    slot: str = ""
    edge: bool = False


@dataclass(frozen=True)
class _Option:
    """A reading of one PDF page: one number, or a spread (its halves' numbers)."""

    page: int
    series: str
    first: int
    last: int
    halves: tuple[str, ...]
    bare: bool
    worded: bool
    loose: bool = False
    slot: str = ""
    edge: bool = False
    paired: bool = False

    @property
    def weight(self) -> int:
        """Printed pages the reading vouches for on its own: two numbers printed apart, left and right, are two."""
        return 2 if self.paired else 1

    @property
    def text(self) -> str:
        return "-".join(dict.fromkeys(self.halves))

    @property
    def spread(self) -> bool:
        return self.last > self.first


def roman_value(text: str) -> int | None:
    """The value of a roman numeral in one case (``iv`` -> 4), None for anything else."""
    lowered = text.lower()
    if not text or not (text.islower() or text.isupper()) or not _ROMAN_RE.match(lowered):
        return None
    values = [_ROMAN_VALUES[ch] for ch in lowered]
    return sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))


def bare_tokens(text: str, centre: float | None = None) -> list[PageToken]:
    """The page number a margin row is alone (``12``, ``Page 12``, ``p. 12``, ``12 of 80``, ``- 12 -``, ``iv``,
    ``A-3``, ``62-63``); [] when the row holds anything else. Roman numerals are front matter's: i to l
    (``c`` or ``d`` alone is a list item's letter)."""
    text = _DECORATION_RE.sub("", " ".join(text.split()))
    if match := _BARE_RE.match(text):
        number = int(match["num"])
        worded = bool(match["word"] or match["of"])
        return [PageToken(str(number), "", number, number, worded=worded, centre=centre)]
    if (match := _BARE_SPREAD_RE.match(text)) and int(match[2]) == int(match[1]) + 1:
        return [PageToken(f"{int(match[1])}-{int(match[2])}", "", int(match[1]), int(match[2]), centre=centre)]
    if (match := _BARE_ROMAN_RE.match(text)) and (value := roman_value(match[1])) is not None:
        return [PageToken(match[1], "roman", value, value, centre=centre)]
    if match := _PREFIXED_RE.match(text):
        prefix = match[1].upper()
        return [PageToken(f"{prefix}-{int(match[2])}", f"{prefix}-", int(match[2]), int(match[2]), centre=centre)]
    return []


def row_tokens(text: str, centre: float | None = None) -> list[PageToken]:
    """Every number a running header or footer prints (``Fenland Local Plan | 57``, ``Page 5 of 40``,
    ``Appendix A | A-3``): candidates only, a run decides which, if any, is the page number. Only ``Page N``
    counts as worded inside a longer line (``Part 1 of 2`` in a header is no page number)."""
    if bare := bare_tokens(text, centre):
        return bare
    key = _slot_key(text)
    tokens = [
        PageToken(
            str(int(m[1])),
            "",
            int(m[1]),
            int(m[1]),
            bare=False,
            worded=True,
            centre=centre,
            slot=_slot(key, text, m.start(1)),
            edge=_at_edge(text, m.start(), m.end()),
        )
        for m in _WORDED_RE.finditer(text)
    ]
    worded = {t.first for t in tokens}
    tokens += [
        PageToken(
            str(int(m[0])),
            "",
            int(m[0]),
            int(m[0]),
            bare=False,
            centre=centre,
            slot=_slot(key, text, m.start()),
            edge=_at_edge(text, m.start(), m.end()),
        )
        for m in _NUMBER_RE.finditer(text)
        if int(m[0]) not in worded
    ]
    tokens += [
        PageToken(
            f"{m[1]}-{int(m[2])}",
            f"{m[1]}-",
            int(m[2]),
            int(m[2]),
            bare=False,
            centre=centre,
            slot=_slot(key, text, m.start(2)),
            edge=_at_edge(text, m.start(), m.end()),
        )
        for m in _IN_ROW_PREFIXED_RE.finditer(text)
    ]
    return tokens


def _slot_key(text: str) -> str:
    return " ".join(_DIGITS_RE.sub("#", text.lower()).split())


def _at_edge(text: str, start: int, end: int) -> bool:
    """The number at ``start``..``end`` is the first or last word of its line (decoration aside)."""
    return not _DECORATION_RE.sub("", text[:start]).strip() or not _DECORATION_RE.sub("", text[end:]).strip()


def _slot(key: str, text: str, start: int) -> str:
    """Which number of its line (masked as ``key``) the number at ``start`` is."""
    return f"{key}@{len(_DIGITS_RE.findall(text[:start]))}"


def loose_tokens(text: str, centre: float | None = None, *, head: bool = False) -> list[PageToken]:
    """The number a short margin line ends with (``Housing | 57``), or starts with when a rule sets it apart
    from the words (``57 | Housing``) or the line is a head of page (``54 THE SIEGE OF VICKSBURG.``), when the
    line is no running header: a candidate that needs a longer run (``LOOSE_RUN``). A number followed by words
    at a page's foot is a footnote's or an item's (``9 SUB12 and SUB14.``), no page number."""
    line = _DECORATION_RE.sub("", " ".join(text.split()))
    words = line.split()
    if len(text) > LOOSE_MAX_CHARS or len(words) < 2:
        return []
    key = _slot_key(text)
    ends = {"end": words[-1].strip("|\u00b7\u2022")}
    if head or _SET_APART_RE.match(line):
        ends["start"] = words[0].strip("|\u00b7\u2022")
    return [
        PageToken(str(int(word)), "", int(word), int(word), bare=False, centre=centre, loose=True, slot=f"{key}@{end}")
        for end, word in ends.items()
        if word.isdigit() and len(word) <= 5 and int(word) > 0
    ]


def without_number(text: str, token: PageToken) -> str:
    """``text`` less the page number ``token`` was read from: "" for a number alone on its row; for a short
    margin line (``loose_tokens``), the line without its first or last word and the rule beside it
    (``Housing | 57`` -> ``Housing``), so no other words leave the text."""
    if not token.loose:
        return ""
    words = _DECORATION_RE.sub("", " ".join(text.split())).split()
    kept = words[1:] if token.slot.endswith("@start") else words[:-1]
    return _DECORATION_RE.sub("", " ".join(kept)).strip()


def same_label(label: str, printed: str) -> bool:
    """A PDF page label that says what the page prints (case and dash style aside)."""
    return bool(label) and _LABEL_DASHES_RE.sub("-", label.strip()).lower() == printed.lower()


@dataclass(frozen=True)
class PrintedReading:
    """What ``read_printed_pages`` read: the printed page of every (PDF page, half) that prints one, and the
    tokens (by PDF page) those readings were made of, so that only the row or words actually read as the page
    number leave the text (a footnote ``9 …`` at the foot of a page printing ``9`` stays)."""

    by_half: dict[tuple[int, int], str]
    read: frozenset[tuple[int, PageToken]]

    def is_read(self, page: int, token: PageToken) -> bool:
        return (page, token) in self.read


def read_printed_pages(
    candidates: Mapping[tuple[int, int], Sequence[PageToken]],
    spreads: set[int],
    labels: Mapping[int, str] | None = None,
) -> PrintedReading:
    """The printed page of every (PDF page, half) that prints one, from the tokens found in its margins.
    ``spreads``: pages read as two halves (a two-page spread, or two columns); ``labels``: the PDF's page
    labels, by page. A half of a spread gets its own number, a page read whole the page's (``62-63``)."""
    labels = labels or {}
    options, sources = _options(candidates, spreads)
    options = _without_constants(options)
    chains = _chain_lengths(options)
    found: dict[tuple[int, int], str] = {}
    read: set[tuple[int, PageToken]] = set()
    for page, page_options in options.items():
        accepted = [
            o
            for o in page_options
            if chains[o] >= (LOOSE_RUN if o.loose else 2) or o.worded or same_label(labels.get(page, ""), o.text)
        ]
        if not accepted:
            continue
        best = max(accepted, key=lambda o: (chains[o], o.bare, o.worded, same_label(labels.get(page, ""), o.text)))
        read.update((page, token) for token in sources[best])
        if len(best.halves) == 2 and page in spreads:
            found[(page, 0)], found[(page, 1)] = best.halves
        else:
            found[(page, 0)] = found[(page, 1)] = best.text
    return PrintedReading(found, frozenset(read))


def page_values(by_half: Mapping[tuple[int, int], str]) -> dict[int, str]:
    """One printed page per PDF page: a spread's halves joined (``62-63``)."""
    pages: dict[int, list[str]] = {}
    for (page, _), value in sorted(by_half.items()):
        if value not in pages.setdefault(page, []):
            pages[page].append(value)
    return {page: "-".join(values) for page, values in pages.items()}


def _options(
    candidates: Mapping[tuple[int, int], Sequence[PageToken]], spreads: set[int]
) -> tuple[dict[int, list[_Option]], dict[_Option, set[PageToken]]]:
    """Each page's possible readings: every token alone, and every pair of consecutive numbers the page's left
    and right halves print alone on their lines (a spread, or a landscape page printing two page numbers side
    by side); and the tokens each reading is made of."""
    by_page: dict[int, list[tuple[int | None, PageToken]]] = {}
    for (page, half), tokens in candidates.items():
        for token in tokens:
            side = half if page in spreads else _side(token.centre)
            by_page.setdefault(page, []).append((side, token))
    options: dict[int, list[_Option]] = {}
    sources: dict[_Option, set[PageToken]] = {}
    for page, sided in sorted(by_page.items()):
        made: dict[_Option, set[PageToken]] = {}
        for _, t in sided:
            alone = _Option(page, t.series, t.first, t.last, _halves(t), t.bare, t.worded, t.loose, t.slot, t.edge)
            made.setdefault(alone, set()).add(t)
        for side_l, left in sided:
            for side_r, right in sided:
                if (
                    (side_l, side_r) == (0, 1)
                    and left.bare
                    and right.bare
                    and left.series == right.series
                    and right.first == left.last + 1
                ):
                    pair = _Option(
                        page,
                        left.series,
                        left.first,
                        right.last,
                        (left.text, right.text),
                        left.bare and right.bare,
                        left.worded and right.worded,
                        paired=True,
                    )
                    made.setdefault(pair, set()).update((left, right))
        options[page] = sorted(made, key=lambda o: (o.series, o.first, o.last, o.halves))
        sources.update(made)
    return options, sources


def _halves(token: PageToken) -> tuple[str, ...]:
    """A token's printed pages: two for ``62-63`` (or ``62 63``) printed as one, else one."""
    return (str(token.first), str(token.last)) if token.last > token.first else (token.text,)


def _without_constants(options: dict[int, list[_Option]]) -> dict[int, list[_Option]]:
    """Readings less the numbers inside a header or footer line that the page before or after prints in the
    same place of the same line: a number printed page after page (``Part 1 of 2``, a chapter's number) is no
    page number, and would otherwise keep step with the ``2`` beside it on the next page. A number alone on
    its line is never dropped so."""
    inline = {page: {(o.slot, o.first) for o in found if o.slot} for page, found in options.items()}
    return {
        page: [
            o
            for o in found
            if not o.slot or not any((o.slot, o.first) in inline.get(near, ()) for near in (page - 1, page + 1))
        ]
        for page, found in options.items()
    }


def _side(centre: float | None) -> int | None:
    if centre is None:
        return None
    return 0 if centre < 0.5 else 1


def _keeps_step(earlier: _Option, later: _Option) -> bool:
    """``later`` continues ``earlier``'s numbering: next number on the next page, or as many further on as
    the pages between can hold (one per page, two per spread)."""
    if earlier.series != later.series or not _linkable(earlier, later):
        return False
    gap = later.page - earlier.page
    step = 2 if earlier.spread or later.spread else 1
    return later.first - earlier.last == 1 + (gap - 1) * step


def _linkable(one: _Option, other: _Option) -> bool:
    """Two readings that can belong to one numbering: numbers alone on their lines; the same number of the same
    header line (a table's cells in the margin never make a run across rows that differ); a number alone and
    one in a header line; numbers that start or end header lines (mirrored footers of facing pages); numbers
    that start or end short margin lines, with their kind only."""
    if one.loose or other.loose:
        return one.loose and other.loose
    return not one.slot or not other.slot or one.slot == other.slot or (one.edge and other.edge)


def _chain_lengths(options: Mapping[int, list[_Option]]) -> dict[_Option, int]:
    """How many printed pages the run each reading belongs to spans (itself included, a spread's two among
    them): the longest run through it."""
    back: dict[_Option, int] = {}
    pages = sorted(options)
    for page in pages:
        for option in options[page]:
            earlier = [
                back[o] for p in range(page - SEARCH_PAGES, page) for o in options.get(p, []) if _keeps_step(o, option)
            ]
            back[option] = option.weight + max(earlier, default=0)
    ahead: dict[_Option, int] = {}
    for page in reversed(pages):
        for option in options[page]:
            later = [
                ahead[o]
                for p in range(page + 1, page + SEARCH_PAGES + 1)
                for o in options.get(p, [])
                if _keeps_step(option, o)
            ]
            ahead[option] = option.weight + max(later, default=0)
    return {option: back[option] + ahead[option] - option.weight for option in back}


def stored(printed: str | None) -> str:
    """A printed page as chunk metadata holds it: Chroma keeps no None, so a page printing none is ""."""
    return printed or ""


def from_stored(value: object) -> str | None:
    """A printed page read back from chunk metadata: "" (none printed), a missing field (a chunk stored before
    printed pages were strings) and the old integer 0 are None; an old integer ``57`` reads as "57"."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return str(int(value)) if value else None
    text = str(value).strip()
    return text or None


def stored_list(printed: Sequence[str | None]) -> str:
    """Printed pages of a chunk's PDF pages, comma-separated as ``page_numbers`` is ("" for a page without)."""
    return ",".join(stored(p) for p in printed)


def from_stored_list(value: object, count: int) -> list[str | None]:
    """``stored_list`` read back, ``count`` long (None for each page when the chunk predates the field)."""
    parts = str(value).split(",") if isinstance(value, str) and value else []
    if len(parts) != count:
        return [None] * count
    return [from_stored(p) for p in parts]
