"""verify_quote on the real NPPF (December 2024 in force from 2024-12-12, the December 2025 draft registered
from 2099): passages taken from the revisions' own text, then quoted as a person or an agent would quote
them — word for word, reflowed, with a curly quote, with a word changed, from the draft as of 2025 — through
``lib`` and through a real MCP client."""

from __future__ import annotations

import re
from typing import Any

import pytest

from lib.policies.quotes import verify_quote
from lib.policies.sections import get_policy_section
from lib.policies.stores import PolicyStores
from lib.quotes.classify import Verdict
from lib.quotes.normalise import normalise
from mcp_service.tools.document_content import mark_json
from tests.mcp_service.conftest import READ_KEY, Service
from tests.mcp_service.tools import call

IN_FORCE = "2025-06-01"


@pytest.fixture(scope="module")
def policies(nppf_service: Service) -> PolicyStores:
    return nppf_service.stores.policies


def sentence(text: str, containing: str = "") -> str:
    """The first whole sentence of ``text`` (at least 60 characters) containing ``containing``."""
    for found in re.finditer(r"[A-Z][^.]{58,400}?\.", text):
        if containing in found.group(0):
            return found.group(0)
    raise AssertionError(f"no sentence with {containing!r} in {text[:200]!r}")


def test_a_sentence_of_para_116_as_the_section_gives_it_is_exact_with_its_page(policies: PolicyStores) -> None:
    section = get_policy_section(policies, "NPPF", "Para 116", effective_date=IN_FORCE)
    quoted = sentence(section.text)
    out = verify_quote(policies, quoted, effective_date=IN_FORCE)
    assert out.verdict == Verdict.EXACT and out.match is not None and out.elsewhere == []
    assert (out.match.source, out.match.revision_id, out.match.section_ref) == ("NPPF", "rev_NPPF_2024_12", "Para 116")
    assert out.match.page_number in section.page_numbers and out.match.in_force
    assert quoted.split()[0] in out.match.context and out.match.similarity == 1.0
    assert "Para 116" in out.message and "word for word" in out.message
    assert out.match.printed_page == section.printed_page and section.printed_page is not None
    assert out.match.citation.startswith("NPPF ") and f"Para 116, p. {section.printed_page}" in out.match.citation
    assert out.match.citation in out.message


def test_a_passage_reflowed_across_lines_and_a_page_is_normalised(policies: PolicyStores) -> None:
    """A paragraph printed over two pages, quoted from the end of one page into the next as one line."""
    section = next(
        s
        for ref in ("Para 11", "Para 16", "Para 35", "Para 61", "Para 72", "Para 124", "Para 135", "Para 155")
        if len((s := get_policy_section(policies, "NPPF", ref, effective_date=IN_FORCE)).page_numbers) > 1
    )
    lines = section.text.split("\n")
    assert len(lines) > 3, section.text[:300]
    middle = len(section.text) // 2
    quoted = " ".join(section.text[middle - 150 : middle + 150].split()[1:-1])  # whole words, one line
    out = verify_quote(policies, quoted, effective_date=IN_FORCE)
    assert out.verdict in (Verdict.EXACT, Verdict.NORMALISED) and out.match is not None
    assert out.match.section_ref == section.section_ref and out.match.page_number in section.page_numbers
    assert normalise(out.match.matched_text).text == normalise(quoted).text


def test_a_curly_apostrophe_typed_straight_is_normalised(policies: PolicyStores) -> None:
    section = get_policy_section(policies, "NPPF", "Para 61", effective_date=IN_FORCE)
    printed = sentence(section.text, "Government\u2019s")
    out = verify_quote(policies, printed.replace("\u2019", "'"), effective_date=IN_FORCE)
    assert out.verdict == Verdict.NORMALISED and out.match is not None and out.match.section_ref == "Para 61"
    assert out.match.matched_text == " ".join(printed.split())


def test_a_footnote_marker_left_out_is_normalised(policies: PolicyStores) -> None:
    """The stored text marks footnotes ``plan[^2],``; a person copying from the PDF gets no such marker. The
    sentence is one whose unmarked form is nowhere in the edition word for word (Para 2's first sentence is
    repeated unmarked in Para 48, where it is found exactly)."""
    chunks = policies.vectors.chunks({"revision_ref": "NPPF:rev_NPPF_2024_12"})
    whole = " ".join(c.text for c in chunks)
    ref, printed = next(
        (str(c.metadata["section_ref"]), s)
        for c in sorted(chunks, key=lambda c: int(c.metadata["chunk_index"]))
        for s in re.findall(r"[A-Z][^.]{40,300}\[\^\d+\][^.]*\.", c.text)
        if re.sub(r"\[\^\d+\]", "", s) not in whole
    )
    out = verify_quote(policies, re.sub(r"\[\^\d+\]", "", printed), effective_date=IN_FORCE)
    assert out.verdict == Verdict.NORMALISED and out.match is not None and out.match.section_ref == ref


def test_a_modal_verb_changed_is_altered_with_the_words_named_and_no_similarity(policies: PolicyStores) -> None:
    section = get_policy_section(policies, "NPPF", "Para 116", effective_date=IN_FORCE)
    quoted = sentence(section.text, " should ")
    changed = quoted.replace(" should ", " must ", 1)
    out = verify_quote(policies, changed, effective_date=IN_FORCE)
    assert out.verdict == Verdict.ALTERED and out.match is not None and out.match.section_ref == "Para 116"
    assert out.match.similarity is None and "%" not in out.message
    assert [(c.kind, c.quoted, c.source) for c in out.match.meaning_changes] == [("modal", "must", "should")]
    assert [(c.op, c.quoted, c.source) for c in out.match.word_changes] == [("replaced", "must", "should")]
    assert out.message.startswith("Altered") and "'must' where the text has 'should'" in out.message


def test_a_typo_is_close_with_the_word_named(policies: PolicyStores) -> None:
    section = get_policy_section(policies, "NPPF", "Para 116", effective_date=IN_FORCE)
    quoted = sentence(section.text, " should ")
    word = max(re.findall(r"[a-z]{7,}", quoted), key=len)
    typo = word[:2] + word[3] + word[2] + word[4:]
    out = verify_quote(policies, quoted.replace(word, typo, 1), effective_date=IN_FORCE)
    assert out.verdict == Verdict.CLOSE and out.match is not None and out.match.section_ref == "Para 116"
    assert out.match.similarity is not None and 0.8 <= out.match.similarity < 1.0
    assert [(c.op, c.quoted, c.source) for c in out.match.word_changes] == [("replaced", typo, word)]
    assert out.match.meaning_changes == [] and "Not verbatim" in out.message


def test_a_sentence_only_in_the_draft_is_not_in_force_in_2025_and_found_in_the_draft(policies: PolicyStores) -> None:
    """A sentence the December 2025 draft has and the December 2024 edition lacks."""
    draft = policies.vectors.chunks({"revision_ref": "NPPF:rev_NPPF_2099_01_DRAFT"})
    in_2024 = normalise(" ".join(c.text for c in policies.vectors.chunks({"revision_ref": "NPPF:rev_NPPF_2024_12"})))
    quoted = next(
        s
        for chunk in sorted(draft, key=lambda c: c.id)
        for s in re.findall(r"[A-Z][^.\n]{80,300}\.", chunk.text)
        if normalise(s).text not in in_2024.text
    )
    out = verify_quote(policies, quoted, sources=["NPPF"], effective_date=IN_FORCE)
    assert out.verdict == Verdict.NOT_IN_FORCE
    assert [(e.revision_id, e.verdict, e.in_force) for e in out.elsewhere] == [
        ("rev_NPPF_2099_01_DRAFT", "exact", False)
    ]
    assert "in force from 2099-01-01" in out.message
    as_of_2099 = verify_quote(policies, quoted, sources=["NPPF"], effective_date="2099-06-01")
    assert as_of_2099.verdict == Verdict.EXACT and as_of_2099.match is not None
    assert as_of_2099.match.revision_id == "rev_NPPF_2099_01_DRAFT"


def test_text_in_no_revision_is_not_found(policies: PolicyStores) -> None:
    out = verify_quote(policies, "Every town shall build a monorail to the moon before the next election.")
    assert (out.verdict, out.match, out.elsewhere) == ("not_found", None, [])


@pytest.mark.anyio
async def test_verify_quote_through_a_real_mcp_client_and_its_errors(nppf_service: Service) -> None:
    section = get_policy_section(nppf_service.stores.policies, "NPPF", "Para 116", effective_date=IN_FORCE)
    quoted = sentence(section.text)
    out = await call(nppf_service.url, "verify_quote", {"quote": quoted, "effective_date": IN_FORCE})
    assert (out["status"], out["verdict"], out["match"]["section_ref"]) == ("success", "exact", "Para 116")
    refusals: list[tuple[dict[str, Any], str]] = [
        ({"quote": "too short"}, "invalid_argument"),
        ({"quote": quoted, "sources": ["NOPE"]}, "policy_not_found"),
        ({"quote": quoted, "effective_date": "2025-13-01"}, "invalid_date"),
    ]
    for args, error in refusals:
        refused = await call(nppf_service.url, "verify_quote", args)
        assert (refused["status"], refused["error_type"]) == ("error", error), refused


def test_the_rest_route_answers_as_the_tool_and_maps_errors(nppf_service: Service) -> None:
    section = get_policy_section(nppf_service.stores.policies, "NPPF", "Para 116", effective_date=IN_FORCE)
    quoted = sentence(section.text)
    with nppf_service.rest() as api:
        found = api.post("/quotes/verify", json={"quote": quoted, "effective_date": IN_FORCE})
        assert found.status_code == 200, found.text
        answer = verify_quote(nppf_service.stores.policies, quoted, effective_date=IN_FORCE).model_dump(mode="json")
        assert found.json() == mark_json(answer)  # the tool's answer, its document text marked as the tool's is
        short = api.post("/quotes/verify", json={"quote": "too short"})
        unknown = api.post("/quotes/verify", json={"quote": quoted, "sources": ["NOPE"]})
    assert (short.status_code, short.json()["error"]["code"]) == (400, "invalid_argument")
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "policy_not_found")


def test_the_read_only_key_may_verify_over_rest_and_mcp_but_not_write(nppf_service: Service) -> None:
    """Verifying is a read: the read-only key's POST to /quotes/verify is answered, its POST that writes is not."""
    section = get_policy_section(nppf_service.stores.policies, "NPPF", "Para 116", effective_date=IN_FORCE)
    quoted = sentence(section.text, " should ").replace(" should ", " must ", 1)
    with nppf_service.rest(READ_KEY) as api:
        verified = api.post("/quotes/verify", json={"quote": quoted, "effective_date": IN_FORCE})
        refused = api.post("/policies", json={"source": "X", "title": "X"})
    assert verified.status_code == 200, verified.text
    assert verified.json()["verdict"] == "altered" and verified.json()["match"]["similarity"] is None
    assert refused.status_code == 403, refused.text


@pytest.mark.anyio
async def test_the_read_only_key_verifies_over_a_real_mcp_client(nppf_service: Service) -> None:
    section = get_policy_section(nppf_service.stores.policies, "NPPF", "Para 116", effective_date=IN_FORCE)
    quoted = sentence(section.text, " should ").replace(" should ", " must ", 1)
    out = await call(nppf_service.url, "verify_quote", {"quote": quoted, "effective_date": IN_FORCE}, key=READ_KEY)
    assert (out["status"], out["verdict"]) == ("success", "altered")
    marked = {"content_origin": "document", "document_fields": ["source"]}  # the text's side, read from the PDF
    assert out["match"]["meaning_changes"] == [{"kind": "modal", "quoted": "must", "source": "should", **marked}]
    assert out["match"]["word_changes"] == [{"op": "replaced", "quoted": "must", "source": "should", **marked}]
