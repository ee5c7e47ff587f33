"""Reading each format of governance document: PEP headers, Markdown front matter, plain Markdown."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from lib.governance.parsing import ParsedDocument, UnreadableDocumentError, canonical_id, parse_document
from tests.lib.governance.conftest import MADR, PEPS, SEEDS


def parse(path: Path) -> ParsedDocument:
    return parse_document(path, path.read_text(encoding="utf-8"))


def test_pep_headers_give_id_title_type_status_date_and_both_chain_directions() -> None:
    old, new = parse(PEPS / "pep-0513.rst"), parse(PEPS / "pep-0600.rst")
    assert (old.id, old.status, old.type, old.created) == ("PEP-0513", "Superseded", "Informational", date(2016, 1, 19))
    assert old.title == "A Platform Tag for Portable Linux Built Distributions"
    assert old.superseded_by == ["PEP-0600"]
    assert new.replaces == ["PEP-0513", "PEP-0571", "PEP-0599"]
    assert (new.type, new.status, new.created) == ("Standards Track", "Final", date(2019, 5, 3))


def test_pep_body_is_cut_at_its_reStructuredText_sections_with_heading_paths() -> None:
    doc = parse(PEPS / "pep-0723.rst")
    headings = [s.heading for s in doc.sections]
    assert headings[:3] == ["Abstract", "Motivation", "Rationale"]
    assert "Specification > Example" in headings
    assert not any("PEP:" in s.text for s in doc.sections)
    assert not any(".. canonical-pypa-spec::" in s.text for s in doc.sections)


def test_markdown_front_matter_gives_id_type_supported_until_version_and_relations() -> None:
    doc = parse(SEEDS / "PRD-0010-governance-rag-mcp-server.md")
    assert doc.id == "PRD-0010-governance-rag-mcp-server"
    assert (doc.title, doc.type, doc.version) == ("PRD-0010: Governance RAG MCP Server", "documentation", "1.0")
    assert doc.supported_until == date(2028, 1, 1)
    assert doc.relates_to[0] == "PRD-0008-governance-rag-pipeline"
    assert (doc.status, doc.created) == ("draft", date(2026, 1, 29))
    assert "Requirements > Functional" in [s.heading for s in doc.sections]


def test_madr_record_takes_its_id_from_the_file_and_its_title_from_the_first_heading() -> None:
    doc = parse(MADR / "0003-provide-own-madr-tools.md")
    assert (doc.id, doc.title, doc.type, doc.status) == (
        "0003-provide-own-madr-tools",
        "Write Own MADR Tooling",
        "adr",
        "on hold",
    )
    assert doc.sections[0].heading == "Context and Problem Statement"


def test_a_code_fence_in_markdown_is_not_a_heading() -> None:
    doc = parse(MADR / "0013-use-yaml-front-matter-for-meta-data.md")
    assert all("status: accepted" not in s.heading for s in doc.sections)
    assert any("status: accepted" in s.text for s in doc.sections)


def test_markdown_without_front_matter_reads_its_bold_field_block() -> None:
    doc = parse(SEEDS / "spec-000-policy-kb-mcp-api.txt")
    assert (doc.id, doc.status, doc.created, doc.version) == (
        "spec-000-policy-kb-mcp-api",
        "As-Built",
        date(2026, 2, 14),
        "1.0",
    )
    assert doc.title == "Specification: Policy KB MCP Server API"


@pytest.mark.parametrize("value", ["PEP 513", "pep-0513", "PEP513", "513", " pep_513 "])
def test_every_way_of_naming_a_pep_is_one_id(value: str) -> None:
    assert canonical_id(value) == "PEP-0513"


@pytest.mark.parametrize("text", ["", "   \n", "---\ntitle: [unclosed\n---\n# x\n", "PEP: none\nTitle: x\n\nbody\n"])
def test_unreadable_documents_are_refused_with_a_reason(text: str) -> None:
    with pytest.raises(UnreadableDocumentError):
        parse_document(Path("broken.md"), text)


def test_a_pep_with_headers_alone_is_one_section_holding_its_title() -> None:
    doc = parse_document(Path("pep-0210.rst"), "PEP: 210\nTitle: Decoupling the Interpreter Loop\nStatus: Rejected\n")
    assert (doc.id, doc.status, [s.text for s in doc.sections]) == (
        "PEP-0210",
        "Rejected",
        ["Decoupling the Interpreter Loop"],
    )
