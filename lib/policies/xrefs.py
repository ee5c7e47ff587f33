"""Cross-references: the refs a section's text cites, in its own document and in others it names.

``Policy LP3``, ``paragraphs 4.7.1 and 4.7.2`` cite the same document; ``paragraph 11 of the NPPF``,
``NPPF paragraph 11`` and ``Policy SD11 of the Joint Core Strategy`` cite another, by the name the text
gives. They are found once, at ingestion, and stored on the section's chunks (``cites`` metadata, one
``{document}|{ref}`` entry each, document empty for the same one), so they are written and removed with the
chunks. Names are resolved to registered policies when read (``DocumentNames``): a plan ingested before the
document it cites still resolves once that document is registered.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from itertools import groupby

from pydantic import BaseModel, Field

from lib.models import Chunk
from lib.policies.models import Policy
from lib.policies.refs import canonical_ref, match_ref, normalise
from lib.text.chunking import merge_chunk_texts

CITES = "cites"
"""The chunk metadata key: a list of ``{document}|{ref}`` (absent when the section cites nothing)."""

_POLICY_CODE = r"[A-Z]{1,6}[ /]?\d{1,3}(?:\.\d{1,2})*[A-Za-z]?\b"
_PARA_CODE = r"\d{1,3}(?:\.\d{1,3}){0,3}[a-z]?\b"
"""A paragraph number; a sub-point letter (``paragraph 11d``) cites the paragraph."""
_JOIN = r"\s*(?:,|and|or|&)\s*"
_NAME_WORD = r"(?:[A-Z][A-Za-z'’\-]*|\d+/\d+)"
_NAME = rf"{_NAME_WORD}(?:\s+(?:(?:and|of|for|in|the)\s+)*{_NAME_WORD}){{0,8}}"
_ADJECTIVE = r"(?:(?:adopted|emerging|submitted|current|revised|draft|made)\s+)?"
_OF_DOC = rf"(?:\s+(?:of|in)\s+(?P<det>the|this)\s+{_ADJECTIVE}(?P<doc>{_NAME}))?"
_CITED = (
    rf"(?:(?P<pword>[Pp]olic(?:y|ies))\s+(?P<pcodes>{_POLICY_CODE}(?:{_JOIN}{_POLICY_CODE})*)"
    rf"|(?P<aword>[Pp]ara(?:graph)?s?\.?)\s+(?P<acodes>{_PARA_CODE}(?:{_JOIN}{_PARA_CODE})*))"
)
_CITED_AFTER = re.compile(rf"\b{_CITED}{_OF_DOC}")
"""``Policy SD11 of the Joint Core Strategy``, or a ref alone (the same document)."""
_CITED_BEFORE = re.compile(rf"\b(?P<doc>[A-Z]{{2,}}(?: \d+/\d+)?)\)?(?:\s*\(\d{{4}}\))?,?(?:\s*\(|\s+){_CITED}")
"""``NPPF paragraph 11``, ``NPPF (paragraph 27)``, ``(NPPF) (2021), paragraph 17``: an acronym before the ref."""
_SAME_DOCUMENT = frozenset({"plan", "local plan", "document", "strategy", "core strategy"})
"""Names that, after ``the``, mean the citing document itself (``paragraph 3.1 of the Plan``)."""
_SMALL = frozenset({"of", "and", "for", "in", "the", "on", "to"})


class Citation(BaseModel):
    """One ref a section cites. ``source`` is the registered policy it resolves to (the section's own for
    refs inside its document), ``None`` when the named document is not registered."""

    section_ref: str
    source: str | None
    document: str | None = Field(description="The document as the text names it, lower case; null: the same one")


def document_name(text: str) -> str:
    """A document's name as compared: lower case, no leading ``the``, single spaces."""
    name = normalise(text).casefold().replace("’", "'")
    return name[4:] if name.startswith("the ") else name


def extract_citations(text: str, own_ref: str = "") -> list[str]:
    """The ``{document}|{ref}`` entries ``text`` cites, in order of first mention, without ``own_ref``."""
    before = list(_CITED_BEFORE.finditer(text))
    named_before = {m.start("pword") if m["pword"] else m.start("aword") for m in before}
    after = [m for m in _CITED_AFTER.finditer(text) if m.start() not in named_before]
    found: list[tuple[int, str]] = []
    for match in before + after:
        doc = _short_name(match["doc"] or "")
        if doc and (match.groupdict().get("det") == "this" or document_name(doc) in _SAME_DOCUMENT):
            doc = ""
        word, codes = ("Policy", match["pcodes"]) if match["pword"] else ("Para", match["acodes"])
        for code in re.split(_JOIN, codes):
            ref = canonical_ref(f"{word} {code.rstrip('abcdefghijklmnopqrstuvwxyz') if word == 'Para' else code}")
            if doc or ref != own_ref:
                found.append((match.start(), f"{document_name(doc)}|{ref}"))
    return list(dict.fromkeys(entry for _, entry in sorted(found, key=lambda f: f[0])))


def _short_name(name: str) -> str:
    """Where one name ends and the next begins: an acronym is a whole name (``NPPF and NPPF`` is ``NPPF``), and
    ``and`` before an acronym starts another (``Framework and LTN 1/20``); ``Town and Country ...`` stays whole."""
    acronym = re.match(r"[A-Z]{2,}(?: \d+/\d+)?(?=\s|$)", name)
    if acronym:
        return acronym[0]
    return re.split(r"\s+(?:and|or)\s+(?=[A-Z]{2,}\b)", name)[0]


def section_citations(sections: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """``{section_ref: cites}`` for a document's ``(section_ref, text)`` pairs; a ref cut into several sections
    cites what all of them cite. A ref inside the document is recorded as the document's own ref (``paragraph
    3.60`` as ``Para 3.60``), and only when exactly one of its sections answers to it: in a plan numbered
    ``05.01``, "The NPPF ... Paragraph 17 identifies" cites the NPPF, not the plan, and is left out."""
    pairs = list(sections)
    refs = list(dict.fromkeys(ref for ref, _ in pairs))
    own: dict[str, str | None] = {}
    cites: dict[str, list[str]] = {}
    for ref, text in pairs:
        found = []
        for entry in extract_citations(text, ref):
            document, _, cited = entry.partition("|")
            if not document:
                if cited not in own:
                    matched = match_ref(cited, refs)
                    own[cited] = matched[0] if len(matched) == 1 else None
                if own[cited] in (None, ref):
                    continue
                entry = f"|{own[cited]}"
            found.append(entry)
        cites[ref] = list(dict.fromkeys([*cites.get(ref, []), *found]))
    return cites


def chunk_citations(chunks: Sequence[Chunk]) -> dict[str, list[str]]:
    """``{section_ref: cites}`` of the sections ``chunks`` were cut from (each section's chunks rejoined)."""
    return section_citations(
        (str(ref), merge_chunk_texts([c.text for c in group]))
        for ref, group in groupby(chunks, key=lambda c: c.section_ref)
    )


def citation_metadata(cites: Sequence[str] | None) -> dict[str, list[str | int | float | bool]]:
    """The chunk metadata carrying ``cites`` (nothing when empty: Chroma refuses empty lists); typed as Chroma's
    list values."""
    return {CITES: list[str | int | float | bool](cites)} if cites else {}


def _acronym(title: str) -> str:
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z'’\-]*", title) if w.casefold() not in _SMALL]
    return "".join(w[0] for w in words).casefold() if len(words) >= 2 else ""


def aliases(policy: Policy) -> set[str]:
    """The names a document may be cited by: its slug, its title, the title's acronym, any parenthesised short
    name (``Cycle Infrastructure Design (LTN 1/20)``) and the title's last word (``the Framework``)."""
    title = re.sub(r"\(([^)]*)\)", " ", policy.title)
    words = document_name(title).split()
    names = {
        policy.source.casefold(),
        policy.source.casefold().replace("_", " "),
        document_name(title),
        _acronym(title),
        words[-1] if len(words) > 1 else "",
        *(document_name(inner) for inner in re.findall(r"\(([^)]*)\)", policy.title)),
    }
    return {name for name in names if name and name not in _SAME_DOCUMENT}


class DocumentNames:
    """Resolves the names texts give to registered policies (``nppf`` -> ``NPPF``). A name that fits more than
    one policy resolves to none: a citation is never guessed."""

    def __init__(self, policies: Iterable[Policy]) -> None:
        owners: dict[str, set[str]] = {}
        for policy in policies:
            for name in aliases(policy):
                owners.setdefault(name, set()).add(policy.source)
        self._by_name = {name: next(iter(sources)) for name, sources in owners.items() if len(sources) == 1}

    def names_of(self, source: str) -> set[str]:
        """Every name that resolves to ``source``."""
        return {name for name, owner in self._by_name.items() if owner == source}

    def citation(self, entry: str, own_source: str) -> Citation:
        document, _, ref = entry.partition("|")
        if not document:
            return Citation(section_ref=ref, source=own_source, document=None)
        return Citation(section_ref=ref, source=self._by_name.get(document), document=document)
