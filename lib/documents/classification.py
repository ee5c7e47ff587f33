"""Document type of a planning-application file (spec 003 appendix): file name first, then content, then ``other``.

A file name is the applicant's own label and is reliable when it names the report, so it wins. Names
like ``Appendix_C.pdf`` or ``12345-001.pdf`` say nothing, so the text is scanned for phrases typical of
each report; two distinct phrases of one type are needed, and the type with the most wins (ties go to
the earlier row of the table). Everything else is ``other``.

Matching works on words: a file name's ``_``, ``-``, ``.`` and camel-case humps become spaces, and every
pattern is anchored on word edges, so ``FRA_rev_B`` is a flood risk assessment and ``Fractional.pdf`` is
not; ``TRICS`` counts in a transport assessment but ``metrics`` does not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath
from typing import Literal

from lib.errors import InvalidArgumentError

OTHER = "other"

_FILE_NAME_PATTERNS: dict[str, tuple[str, ...]] = {
    # type: regexes over the normalised name (lower case, words separated by single spaces)
    "transport_assessment": (
        r"transport (?:assessment|statement)",
        r"travel plan",
        r"traffic (?:impact|assessment)",
    ),
    "design_access_statement": (
        r"design (?:and |& )?access statement",
        r"d ?(?:&|and) ?a statement",
        r"das",
    ),
    "site_plan": (r"site plan", r"location plan", r"block plan", r"layout plan"),
    "floor_plan": (r"floor plans?", r"(?:basement|ground|first|second|third|upper|lower) floor"),
    "elevation": (r"elevations?", r"street scene"),
    "planning_statement": (r"planning statement", r"supporting statement"),
    "environmental_statement": (
        r"environmental statement",
        r"environmental impact (?:statement|assessment)",
        r"eia",
    ),
    "noise_assessment": (r"noise (?:impact )?(?:assessment|report|survey)", r"acoustic"),
    "flood_risk_assessment": (r"flood risk(?: assessment)?", r"fra", r"drainage strategy"),
    "ecology_report": (
        r"ecology (?:report|survey|assessment|appraisal)",
        r"ecological (?:appraisal|assessment|survey|report)",
        r"bat survey",
        r"biodiversity",
    ),
    "heritage_statement": (r"heritage (?:statement|assessment|impact assessment)", r"archaeolog(?:ical|y)"),
    "arboricultural_report": (
        r"arboricultural (?:report|survey|assessment|impact assessment|method statement)",
        r"tree survey",
    ),
}

_CONTENT_KEYWORDS: dict[str, tuple[str, ...]] = {
    "transport_assessment": (
        "transport assessment",
        "travel plan",
        "trip generation",
        "traffic flow",
        "junction capacity",
        "parking provision",
        "cycle parking",
        "highway network",
        "vehicle movements",
        "modal split",
        "trics",
        "visibility splays",
        "sustainable transport",
    ),
    "design_access_statement": (
        "design and access statement",
        "design principles",
        "access arrangements",
        "inclusive design",
        "scale and massing",
        "character and appearance",
        "layout and design",
        "design evolution",
        "appearance and materials",
    ),
    "site_plan": (
        "site location plan",
        "site plan",
        "block plan",
        "location plan",
        "red line boundary",
        "site boundary",
        "ordnance survey",
        "crown copyright",
        "1:1250",
        "1:2500",
        "1:500",
    ),
    "floor_plan": (
        "floor plan",
        "ground floor",
        "first floor",
        "second floor",
        "bedroom",
        "kitchen",
        "living room",
        "bathroom",
        "en-suite",
        "gross internal area",
    ),
    "elevation": (
        "front elevation",
        "rear elevation",
        "side elevation",
        "north elevation",
        "south elevation",
        "east elevation",
        "west elevation",
        "street scene",
        "ridge height",
        "eaves height",
        "facing brick",
    ),
    "planning_statement": (
        "planning statement",
        "planning policy",
        "local plan",
        "nppf",
        "national planning policy framework",
        "material considerations",
        "planning balance",
        "development plan",
        "planning history",
        "presumption in favour",
    ),
    "environmental_statement": (
        "environmental statement",
        "environmental impact assessment",
        "eia regulations",
        "scoping opinion",
        "non-technical summary",
        "likely significant effects",
        "cumulative effects",
        "residual effects",
    ),
    "noise_assessment": (
        "noise assessment",
        "noise level",
        "decibel",
        "acoustic",
        "sound insulation",
        "noise sensitive",
        "background noise",
        "noise impact",
        "bs 4142",
        "laeq",
    ),
    "flood_risk_assessment": (
        "flood risk",
        "flood zone",
        "surface water",
        "drainage strategy",
        "suds",
        "sustainable drainage",
        "attenuation",
        "sequential test",
        "exception test",
        "greenfield runoff",
    ),
    "ecology_report": (
        "protected species",
        "habitat",
        "biodiversity net gain",
        "bat survey",
        "great crested newt",
        "breeding birds",
        "ecological appraisal",
        "badger",
        "reptile",
    ),
    "heritage_statement": (
        "heritage statement",
        "listed building",
        "conservation area",
        "heritage asset",
        "historic environment",
        "archaeological",
        "scheduled monument",
        "grade ii",
    ),
    "arboricultural_report": (
        "arboricultural",
        "tree survey",
        "root protection area",
        "bs 5837",
        "tree protection plan",
        "tree preservation order",
        "canopy spread",
    ),
}

DOCUMENT_TYPES: tuple[str, ...] = (*_FILE_NAME_PATTERNS, OTHER)
"""Every type the classifier can return, in the appendix's order; ``other`` last."""

MIN_CONTENT_MATCHES = 2
CONTENT_WINDOW_CHARS = 50_000
"""Only the start of the text is read: a report says what it is early, and a long one (a whole local plan)
would otherwise collect some keywords of every type."""

_NAME_RULES = [
    (doc_type, pattern, re.compile(rf"(?<![a-z0-9])(?:{pattern})(?![a-z0-9])"))
    for doc_type, patterns in _FILE_NAME_PATTERNS.items()
    for pattern in patterns
]


def _phrase_rule(phrase: str) -> re.Pattern[str]:
    """A keyword with any run of whitespace (a PDF line break) between its words and an optional plural ``s``.

    No word-edge assertions in the pattern: a pattern that starts with a literal is scanned for far
    faster, so edges are checked on each hit instead (``_found``).
    """
    words = r"\s+".join(re.escape(word) for word in phrase.split())
    return re.compile(rf"{words}s?" if phrase[-1].isalpha() else words)


def _found(rule: re.Pattern[str], text: str) -> bool:
    for match in rule.finditer(text):
        start, end = match.span()
        if (start == 0 or not text[start - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return True
    return False


_CONTENT_RULES = {
    doc_type: [(keyword, _phrase_rule(keyword)) for keyword in keywords]
    for doc_type, keywords in _CONTENT_KEYWORDS.items()
}
_CAMEL_HUMP = re.compile(r"(?<=[a-z])(?=[A-Z])")
_SEPARATORS = re.compile(r"[\s_.\-+,()\[\]]+")


@dataclass(frozen=True)
class Classification:
    document_type: str
    method: Literal["filename", "content", "fallback"]
    confidence: Literal["high", "medium", "low"]
    matched: str = ""
    """The pattern or the keywords that decided, for logs."""


def normalise_file_name(file_name: str) -> str:
    """``Transport_Assessment-v2.pdf`` → ``transport assessment v2``: the words a pattern is matched against."""
    stem = PurePath(file_name.replace("\\", "/")).stem if file_name else ""
    words = _SEPARATORS.sub(" ", _CAMEL_HUMP.sub(" ", stem.replace("’", "'")))
    return words.lower().strip()


def classify_by_file_name(file_name: str) -> Classification | None:
    name = normalise_file_name(file_name)
    for doc_type, pattern, rule in _NAME_RULES:
        if rule.search(name):
            return Classification(doc_type, "filename", "high", pattern)
    return None


def classify_by_content(text: str) -> Classification | None:
    """The type with the most distinct keywords present, if it has at least ``MIN_CONTENT_MATCHES``."""
    lowered = text[:CONTENT_WINDOW_CHARS].lower()
    best: tuple[int, str, list[str]] | None = None
    for doc_type, rules in _CONTENT_RULES.items():
        found = [keyword for keyword, rule in rules if _found(rule, lowered)]
        if len(found) >= MIN_CONTENT_MATCHES and (best is None or len(found) > best[0]):
            best = (len(found), doc_type, found)
    if best is None:
        return None
    return Classification(best[1], "content", "medium", ", ".join(best[2]))


def classify_document(file_name: str, text: str = "") -> Classification:
    """File name patterns, then content keywords, then ``other``."""
    return (
        classify_by_file_name(file_name)
        or (classify_by_content(text) if text else None)
        or Classification(OTHER, "fallback", "low")
    )


def check_document_type(document_type: str) -> str:
    if document_type not in DOCUMENT_TYPES:
        raise InvalidArgumentError(f"document_type must be one of {', '.join(DOCUMENT_TYPES)}, got {document_type!r}")
    return document_type
