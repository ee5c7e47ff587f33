"""What a difference between a quote and its text does to the meaning: each differing stretch of words
(``lib.quotes.diff``) is read for a change of

- ``negation``: a negative (not, no, never, nor, without, cannot, ...n't) added or removed;
- ``modal``: a modal verb (must, should, may, might, will, would, shall, could, can, ought) changed, added or
  removed;
- ``number``: a figure, percentage or number word changed, added or removed (``10%`` -> ``20%``; ``1,000`` and
  ``1000``, ``10 per cent`` and ``10%``, ``two`` and ``2`` are the same number);
- ``date``: a month or day named differently;
- ``qualifier``: a word that narrows or widens what is said (only, unless, except, all, any, or, at least,
  significantly, clearly...) added, removed or changed;
- ``antonym``: a word replaced by its opposite (permitted/refused, increase/decrease, before/after,
  within/outside, minimum/maximum...), or by itself with a negative prefix (acceptable/unacceptable);
- ``wording``: none of these, but a word of substance replaced, added or left out (``Green Belt`` for ``town
  centre``, ``new`` dropped): not a slip, so not ``close``.

The rest is a slip that leaves the meaning: a typo (a misspelt word, ``susbtantially``, is read as the word it
misspells unless the two are opposites), a dropped or swapped article (``SLIPS``), a comma, a word's case, a
plural for a singular, a hyphen for a space, a number written another way.
The vocabulary is general English as planning policy writes it, not tuned to one document.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field
from rapidfuzz import fuzz
from rapidfuzz.distance import OSA

TYPO_AT = 0.8
"""How alike (rapidfuzz's ratio, 0..1) a word must be to another to be read as its misspelling."""

Kind = Literal["negation", "modal", "number", "date", "qualifier", "antonym", "wording"]


def _words(text: str) -> list[str]:
    """A table's words, written as prose for reading."""
    return text.split()


NEGATIONS = frozenset(_words("not no never none nor neither nothing nowhere nobody without cannot"))
MODALS = frozenset(_words("must should may might will would shall could can ought"))
_CONTRACTED = {"can't": "can", "won't": "will", "shan't": "shall", "cannot": "can"}
QUALIFIERS = frozenset(
    _words(
        """only unless except excepting exception exceptional exceptionally solely exclusively always sometimes all any
    every some or least most generally normally usually wholly entirely fully partly partially particularly
    especially significantly substantially clearly demonstrably"""
    )
)
SLIPS = frozenset(_words("a an the that which and per cent percent"))
"""Words whose dropping, adding or swapping for one another leaves what a sentence says (``per cent``: ``10%``)."""
DATES = frozenset(
    _words(
        """january february march april may june july august september october november december monday tuesday
    wednesday thursday friday saturday sunday"""
    )
)
_OPPOSITES = """
permit permits permitted permitting permissible permission allow allows allowed allowing approve approves approved
  approving approval grant grants granted granting accept accepts accepted accepting
  | refuse refuses refused refusing refusal reject rejects rejected rejecting rejection prohibit prohibits
  prohibited prohibiting prohibition prevent prevents prevented preventing resist resists resisted resisting
support supports supported supporting encourage encourages encouraged encouraging | oppose opposes opposed opposing
  resist resists resisted resisting
increase increases increased increasing rise rises | decrease decreases decreased decreasing reduce reduces reduced
  reducing reduction fall falls
maximum maximise maximised maximising maximize maximized | minimum minimise minimised minimising minimize minimized
before prior earlier earliest early | after later latest late
within inside | outside beyond
above over | below under
more greater higher larger | less fewer lower smaller lesser
most highest largest greatest | least lowest smallest fewest
include includes included including inclusion | exclude excludes excluded excluding exclusion
enhance enhances enhanced enhancing benefit benefits improve improves improved | harm harms harmed harming damage
  damages damaged worsen worsens
positive | negative
require requires required requiring mandatory compulsory | optional voluntary
gain gains | loss losses
add adds added adding | remove removes removed removing
retain retains retained retaining protect protects protected protecting | lose loses lost losing
major | minor
long longer longest | short shorter shortest
strong strongly | weak weakly
upper | lower
north northern | south southern
east eastern | west western
"""
_PREFIXES = ("un", "in", "im", "il", "ir", "dis", "non-", "non")
_ORDINALS = {"first": "1st", "second": "2nd", "third": "3rd"}
_FRACTIONS = ("half", "quarter", "twice", "double", "treble")
_UNITS = _words("""zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen
seventeen eighteen nineteen twenty""")
_TENS = _words("thirty forty fifty sixty seventy eighty ninety")
_NUMBER_WORDS = (
    {word: str(i) for i, word in enumerate(_UNITS)}
    | {word: f"{i}0" for i, word in enumerate(_TENS, start=3)}
    | {"hundred": "100", "thousand": "1000", "million": "1000000"}
    | _ORDINALS
    | {f"{word}th": f"{i}th" for i, word in enumerate(_words("four fif six seven eigh nin ten"), start=4)}
    | {word: word for word in _FRACTIONS}
)
_FIGURE = re.compile(r"[£$€]?\d+(?:[.,/:]\d+)*(?:%|st|nd|rd|th|m|bn|k)?")
_NUMBER_WORD = re.compile(r"\b(?:" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)
_PER_CENT = re.compile(r"(\d)\s*(?:per\s*cent|percent)\b", re.IGNORECASE)


def _groups() -> dict[str, frozenset[str]]:
    """Each word of the table of opposites to the words opposite it."""
    opposite: dict[str, set[str]] = {}
    for row in re.split(r"\n(?! )", _OPPOSITES.strip()):
        left, right = (frozenset(side.split()) for side in row.split("|"))
        for a, b in ((left, right), (right, left)):
            for word in a:
                opposite.setdefault(word, set()).update(b)
    return {word: frozenset(others) for word, others in opposite.items()}


OPPOSITES = _groups()


class MeaningChange(BaseModel):
    """A difference that changes what the passage says, with the words of both sides verbatim."""

    kind: Kind = Field(description="negation | modal | number | date | qualifier | antonym | wording")
    quoted: str = Field(description="The quote's words in the differing stretch (empty when it left them out)")
    source: str = Field(description="The text's words in the differing stretch (empty when the quote added them)")


def _negations(words: Sequence[str]) -> int:
    return sum(1 for w in words if w in NEGATIONS or w.endswith("n't"))


def _modals(words: Sequence[str]) -> Counter[str]:
    found = (_CONTRACTED.get(w, w.removesuffix("n't")) for w in words)
    return Counter(w for w in found if w in MODALS)


def _numbers(text: str) -> Counter[str]:
    """The numbers of a stretch, written one way: figures without thousands commas, number words as figures."""
    text = _NUMBER_WORD.sub(lambda m: _NUMBER_WORDS[m.group(0).lower()], text)
    text = _PER_CENT.sub(r"\1%", text)
    figures = Counter(m.group(0).replace(",", "").lstrip("£$€") for m in _FIGURE.finditer(text))
    return figures + Counter(w for w in re.findall(r"[a-z]+", text.lower()) if w in _FRACTIONS)


def _opposed(a: str, b: str) -> bool:
    if b in OPPOSITES.get(a, ()):
        return True
    short, long = sorted((a, b), key=len)
    return len(short) >= 4 and any(long == prefix + short for prefix in _PREFIXES)


def _misspelt(q: list[str], s: list[str]) -> tuple[list[str], list[str]]:
    """Both sides without the words one misspells of the other (``susbtantially`` for ``substantially``: words of
    six letters or more, at least ``TYPO_AT`` alike, not opposites), which change nothing."""
    q, s = list(q), list(s)
    for a in [w for w in q if w not in s and w.isalpha() and len(w) >= 6]:
        twin = next((b for b in s if b not in q and b.isalpha() and len(b) >= 6 and _typo(a, b)), None)
        if twin is not None:
            q.remove(a)
            s.remove(twin)
    return q, s


def _typo(a: str, b: str) -> bool:
    return fuzz.ratio(a, b) >= TYPO_AT * 100 and not _opposed(a, b)


def kinds(quoted: str, source: str) -> list[Kind]:
    """The kinds of change of meaning in one differing stretch (``quoted`` where the text has ``source``)."""
    q, s = _misspelt(re.findall(r"[\w'-]+", quoted.lower()), re.findall(r"[\w'-]+", source.lower()))
    found: list[Kind] = []
    if _negations(q) != _negations(s):
        found.append("negation")
    if _modals(q) != _modals(s):
        found.append("modal")
    if _numbers(quoted) != _numbers(source):
        found.append("number")
    if Counter(w for w in q if w in DATES and w != "may") != Counter(w for w in s if w in DATES and w != "may"):
        found.append("date")
    if Counter(w for w in q if w in QUALIFIERS) != Counter(w for w in s if w in QUALIFIERS):
        found.append("qualifier")
    if any(_opposed(a, b) for a in set(q) - set(s) for b in set(s) - set(q)):
        found.append("antonym")
    if not found and _reworded(q, s):
        found.append("wording")
    return found


def _bare(words: Sequence[str]) -> list[str]:
    """Words as a rewording is judged: hyphenated ones split, possessives plain, without ``SLIPS`` and numbers
    (a number's change is judged as a number)."""
    out = []
    for word in words:
        for part in word.removesuffix("'s").split("-"):
            if part and part not in SLIPS and part not in _NUMBER_WORDS and not part[0].isdigit():
                out.append(part)
    return out


def _reworded(q: Sequence[str], s: Sequence[str]) -> bool:
    """Whether a word of substance was replaced, added or left out: anything but ``SLIPS``, case, punctuation,
    a number written another way, or a slip of one word for another (``_slip``)."""
    left, right = Counter(_bare(q)), Counter(_bare(s))
    for word in list(left):
        for twin in list(right):
            if left[word] and right[twin] and word != twin and _slip(word, twin):
                left[word] -= 1
                right[twin] -= 1
    return +left != +right


def _slip(a: str, b: str) -> bool:
    """A plural for a singular, or a misspelling: one letter added, dropped, changed or two swapped (``fo`` for
    ``of``, ``higer`` for ``higher``), or longer words ``TYPO_AT`` alike."""
    if a in (b + "s", b + "es") or b in (a + "s", a + "es"):
        return True
    return OSA.distance(a, b) <= 1 or (min(len(a), len(b)) >= 6 and _typo(a, b))


def meaning_changes(stretches: Sequence[tuple[str, str]]) -> list[MeaningChange]:
    """Each change of meaning among the differing stretches ``(quoted, source)``, one entry per kind found."""
    return [MeaningChange(kind=k, quoted=q, source=s) for q, s in stretches for k in kinds(q, s)]
