"""Held-out quotes of the real NPPF (December 2024, as stored from deployments/seed): sentences of its sections,
each quoted as it is, with its typography, a line-end hyphen or an omission, altered in meaning in each way
(negation, modal, number, qualifier, antonym), with a slip (a typo, a dropped article), and as of a day another
revision is in force. The variants are derived here, by rules independent of ``lib.quotes``'s vocabulary; every
exact, normalised and altered variant must be classified right, and an altered one must name the changed words."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

import pytest

from lib.policies.quotes import QuoteVerification, verify_quote
from lib.policies.sections import get_policy_section
from lib.policies.stores import PolicyStores
from lib.quotes.normalise import normalise
from tests.mcp_service.conftest import Service

IN_FORCE = "2025-06-01"
DRAFT_IN_FORCE = "2099-06-01"
EDITION = "NPPF:rev_NPPF_2024_12"
DRAFT = "NPPF:rev_NPPF_2099_01_DRAFT"
SENTENCES = 60
_SENTENCE = re.compile(r"(?<![\w,;(])[A-Z][^.\n;:]{70,260}\.")
_MODAL_SWAPS = {"should": "must", "must": "should", "will": "may", "may": "will", "can": "should", "shall": "may"}
_OPPOSITE_WORDS = {
    "permitted": "refused",
    "refused": "permitted",
    "approved": "refused",
    "increase": "decrease",
    "increased": "decreased",
    "increasing": "decreasing",
    "before": "after",
    "after": "before",
    "within": "outside",
    "outside": "within",
    "minimum": "maximum",
    "maximum": "minimum",
    "more": "less",
    "less": "more",
    "higher": "lower",
    "lower": "higher",
    "acceptable": "unacceptable",
    "unacceptable": "acceptable",
    "appropriate": "inappropriate",
    "inappropriate": "appropriate",
    "include": "exclude",
    "including": "excluding",
    "positive": "negative",
    "support": "oppose",
    "supported": "opposed",
    "major": "minor",
    "enhance": "harm",
    "sustainable": "unsustainable",
    "large": "small",
    "larger": "smaller",
    "early": "late",
}  # a thesaurus of the test's own, not the library's table


@pytest.fixture(scope="module")
def policies(nppf_service: Service) -> PolicyStores:
    return nppf_service.stores.policies


def _folded_text(stores: PolicyStores, ref: str) -> str:
    return normalise("\n".join(c.text for c in stores.vectors.chunks({"revision_ref": ref}))).text


@pytest.fixture(scope="module")
def sentences(policies: PolicyStores) -> list[str]:
    """``SENTENCES`` sentences from as many sections of the December 2024 edition, each once in the edition."""
    chunks = sorted(policies.vectors.chunks({"revision_ref": EDITION}), key=lambda c: int(c.metadata["chunk_index"]))
    refs = list(dict.fromkeys(str(c.metadata["section_ref"]) for c in chunks))
    whole = _folded_text(policies, EDITION)
    picked: list[str] = []
    for ref in refs:
        text = get_policy_section(policies, "NPPF", ref, effective_date=IN_FORCE).text
        for found in _SENTENCE.finditer(text):
            candidate = found.group(0)
            if "[^" not in candidate and whole.count(normalise(candidate).text) == 1:
                picked.append(candidate)
                break
        if len(picked) == SENTENCES:
            break
    assert len(picked) == SENTENCES, len(picked)
    return picked


def check(stores: PolicyStores, quote: str, day: str = IN_FORCE) -> QuoteVerification:
    return verify_quote(stores, quote, sources=["NPPF"], effective_date=day)


def typography(sentence: str) -> str:
    """Straight quotes curly, hyphens between words dashes, ``fi`` a ligature, spaces doubled and a line broken."""
    out = sentence.replace("'", "\u2019").replace(" - ", " \u2013 ").replace("fi", "\ufb01")
    words = out.split(" ")
    return "  ".join(words[:3]) + "\n" + " ".join(words[3:])


def hyphenated(sentence: str) -> str:
    """The longest all-lower-case word split over a line end with a hyphen, as a PDF prints it."""
    word = max(re.findall(r"\b[a-z]{8,}\b", sentence) or ["x"], key=len)
    if word == "x":
        return ""
    return sentence.replace(word, f"{word[:4]}-\n{word[4:]}", 1)


def elided(sentence: str, i: int) -> str:
    """Words from the middle left out, marked by one of the three ellipses people write."""
    words = sentence.split()
    mark = ("...", "\u2026", "[...]")[i % 3]
    return " ".join([*words[:4], mark, *words[-5:]])


def negated(sentence: str) -> tuple[str, str] | None:
    if " not " in sentence:
        return sentence.replace(" not ", " ", 1), "not"
    found = re.search(r"\b(should|must|will|may|can|is|are)\b ", sentence)
    return (sentence[: found.end()] + "not " + sentence[found.end() :], "not") if found else None


def modal(sentence: str) -> tuple[str, str] | None:
    found = re.search(r"\b(" + "|".join(_MODAL_SWAPS) + r")\b", sentence)
    if not found:
        return None
    return sentence[: found.start()] + _MODAL_SWAPS[found.group(1)] + sentence[found.end() :], found.group(1)


def number(sentence: str) -> tuple[str, str] | None:
    found = re.search(r"\b\d+\b", sentence)
    if not found:
        return None
    return sentence[: found.start()] + str(int(found.group(0)) + 10) + sentence[found.end() :], found.group(0)


def qualifier(sentence: str) -> tuple[str, str] | None:
    for word in (" only ", " unless ", " except "):
        if word in sentence:
            return sentence.replace(word, " ", 1), word.strip()
    found = re.search(r"\b(should|must|will|may)\b ", sentence)
    return (sentence[: found.end()] + "only " + sentence[found.end() :], "only") if found else None


def antonym(sentence: str) -> tuple[str, str] | None:
    for found in re.finditer(r"\b[a-z]+\b", sentence):
        if found.group(0) in _OPPOSITE_WORDS:
            return sentence[: found.start()] + _OPPOSITE_WORDS[found.group(0)] + sentence[found.end() :], found.group(0)
    return None


ALTERATIONS: dict[str, Callable[[str], tuple[str, str] | None]] = {
    "negation": negated,
    "modal": modal,
    "number": number,
    "qualifier": qualifier,
    "antonym": antonym,
}


def test_every_sentence_quoted_as_it_stands_is_exact(policies: PolicyStores, sentences: list[str]) -> None:
    wrong = [(s, out.verdict) for s in sentences if (out := check(policies, s)).verdict != "exact"]
    assert wrong == []


def test_every_typographic_hyphenated_or_elided_quote_is_normalised(
    policies: PolicyStores, sentences: list[str]
) -> None:
    variants = [typography(s) for s in sentences] + [h for s in sentences if (h := hyphenated(s))]
    variants += [elided(s, i) for i, s in enumerate(sentences) if len(s.split()) >= 12]
    assert len(variants) >= 2 * SENTENCES
    wrong = [(v, out.verdict, out.message) for v in variants if (out := check(policies, v)).verdict != "normalised"]
    assert wrong == []


def test_every_change_of_meaning_is_altered_and_names_the_words(policies: PolicyStores, sentences: list[str]) -> None:
    whole = _folded_text(policies, EDITION)
    done: Counter[str] = Counter()
    wrong = []
    for kind, alter in ALTERATIONS.items():
        for sentence in sentences:
            made = alter(sentence)
            if made is None or normalise(made[0]).text in whole:
                continue
            quote, word = made
            out = check(policies, quote)
            done[kind] += 1
            changes = out.match.meaning_changes if out.match is not None else []
            said = rf"\b{re.escape(word)}\b"
            named = any(c.kind == kind and re.search(said, f"{c.quoted} {c.source}") for c in changes)
            if out.verdict != "altered" or not named or out.match is None or out.match.similarity is not None:
                wrong.append((kind, quote, out.verdict, [c.model_dump() for c in changes]))
    assert wrong == []
    assert min(done[kind] for kind in ALTERATIONS) >= 3, done
    assert sum(done.values()) >= 100, done


def test_slips_that_keep_the_meaning_are_close(policies: PolicyStores, sentences: list[str]) -> None:
    """A typo (two inner letters of a long word swapped) and a dropped article."""
    variants = []
    for sentence in sentences:
        word = max(re.findall(r"\b[a-z]{9,}\b", sentence) or [""], key=len)
        if word:
            variants.append(sentence.replace(word, word[:3] + word[4] + word[3] + word[5:], 1))
        if " the " in sentence:
            variants.append(sentence.replace(" the ", " ", 1))
    assert len(variants) >= SENTENCES
    verdicts = Counter(check(policies, v).verdict for v in variants)
    assert verdicts["close"] >= 0.95 * len(variants), verdicts


def test_a_sentence_of_another_revision_is_not_in_force_and_names_it(
    policies: PolicyStores, sentences: list[str]
) -> None:
    draft = _folded_text(policies, DRAFT)
    gone = [s for s in sentences if normalise(s).text not in draft]
    assert len(gone) >= 5, len(gone)
    for sentence in gone:
        out = check(policies, sentence, DRAFT_IN_FORCE)
        assert out.verdict == "not_in_force", (sentence, out.verdict)
        assert [(e.revision_id, e.verdict) for e in out.elsewhere] == [("rev_NPPF_2024_12", "exact")]
        assert "December 2024" in out.message or "rev_NPPF_2024_12" in out.message, out.message
