"""The in-force rules over the real PEP chains: 513 -> 600 (Superseded-By and Replaces), 722 -> 723."""

from __future__ import annotations

from datetime import date

from lib.governance.in_force import Lifecycle, in_force_ids
from lib.governance.parsing import ParsedDocument, parse_document
from tests.lib.governance.conftest import PEPS


def lifecycle(doc: ParsedDocument) -> Lifecycle:
    return Lifecycle(
        doc.id, doc.status, doc.created, doc.supported_until, tuple(doc.superseded_by), tuple(doc.replaces)
    )


def peps(*numbers: int) -> dict[str, Lifecycle]:
    docs = [parse_document(PEPS / f"pep-{n:04d}.rst", (PEPS / f"pep-{n:04d}.rst").read_text()) for n in numbers]
    return {doc.id: lifecycle(doc) for doc in docs}


def test_a_superseded_pep_was_in_force_until_the_day_its_successor_was_created() -> None:
    chain = peps(513, 600)
    assert in_force_ids(chain, date(2017, 6, 1)) == {"PEP-0513"}
    assert in_force_ids(chain, date(2019, 5, 2)) == {"PEP-0513"}
    assert in_force_ids(chain, date(2019, 5, 3)) == {"PEP-0600"}
    assert in_force_ids(chain, date(2025, 1, 1)) == {"PEP-0600"}


def test_nothing_is_in_force_before_it_was_created() -> None:
    assert in_force_ids(peps(513, 600), date(2016, 1, 18)) == set()


def test_replaces_alone_takes_the_old_document_out_of_force() -> None:
    chain = peps(513, 600)
    only_replaces = {**chain, "PEP-0513": Lifecycle("PEP-0513", "Final", date(2016, 1, 19))}
    assert in_force_ids(only_replaces, date(2019, 5, 3)) == {"PEP-0600"}
    assert in_force_ids(only_replaces, date(2018, 1, 1)) == {"PEP-0513"}


def test_rejected_and_withdrawn_documents_are_never_in_force() -> None:
    docs = peps(722, 723, 3, 220)
    for day in (date(2000, 12, 1), date(2023, 7, 30), date(2024, 1, 1)):
        assert not in_force_ids(docs, day) & {"PEP-0722", "PEP-0003", "PEP-0220"}
    assert in_force_ids(docs, date(2023, 8, 3)) == set()
    assert in_force_ids(docs, date(2023, 8, 4)) == {"PEP-0723"}


def test_a_rejected_replacement_replaced_nothing() -> None:
    old = Lifecycle("ADR-1", "Accepted", date(2020, 1, 1))
    rejected = Lifecycle("ADR-2", "Rejected", date(2021, 1, 1), replaces=("ADR-1",))
    assert in_force_ids({"ADR-1": old, "ADR-2": rejected}, date(2022, 1, 1)) == {"ADR-1"}


def test_supported_until_is_the_last_day_in_force() -> None:
    doc = Lifecycle("PRD-1", "draft", date(2026, 1, 29), supported_until=date(2028, 1, 1))
    assert in_force_ids({"PRD-1": doc}, date(2028, 1, 1)) == {"PRD-1"}
    assert in_force_ids({"PRD-1": doc}, date(2028, 1, 2)) == set()


def test_an_undated_document_counts_from_always_and_an_unknown_successor_as_existing() -> None:
    undated = Lifecycle("0003-madr", "accepted")
    orphan = Lifecycle("PEP-0001", "Superseded", date(2000, 1, 1), superseded_by=("PEP-9999",))
    assert in_force_ids({"0003-madr": undated, "PEP-0001": orphan}, date(1990, 1, 1)) == {"0003-madr"}
