"""Which governance documents are in force on a day: pure rules over the registry's records (spec 004, issue 12).

A document is in force on ``day`` when all of these hold:

1. it was created on or before ``day`` (a document that states no date counts as always existing);
2. ``day`` is not past its ``supported_until`` (inclusive: in force on that very day);
3. its status is not Rejected or Withdrawn (never adopted, so never in force, whatever the day);
4. no document that replaces it existed yet on ``day``. Its replacements are the ids its own
   ``Superseded-By`` names and every document whose ``Replaces`` names it. A replacement counts from its
   ``created`` day (undated: always); a replacement that is itself Rejected or Withdrawn replaced nothing;
   a replacement named but not in the corpus cannot be dated and counts as existing.

A ``Superseded`` status describes today, so it is not a rule of its own: for an earlier day the document is
in force until its successor was created (PEP 513 was in force in 2017; PEP 600, created 2019-05-03, took it
out of force from that day), and a ``Final`` document that a later one ``Replaces`` leaves force the day the
later one was created.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

NEVER_IN_FORCE = frozenset({"rejected", "withdrawn"})


@dataclass(frozen=True)
class Lifecycle:
    """What the rules read of one document."""

    id: str
    status: str
    created: date | None = None
    supported_until: date | None = None
    superseded_by: tuple[str, ...] = ()
    replaces: tuple[str, ...] = ()

    @property
    def never_in_force(self) -> bool:
        return self.status.strip().lower() in NEVER_IN_FORCE


def replacements(documents: Mapping[str, Lifecycle]) -> dict[str, set[str]]:
    """For every document id, the ids of the documents that replace it (both directions of the chain)."""
    replaced_by: dict[str, set[str]] = {doc_id: set(doc.superseded_by) for doc_id, doc in documents.items()}
    for doc in documents.values():
        for old in doc.replaces:
            replaced_by.setdefault(old, set()).add(doc.id)
    return replaced_by


def replaced_since(doc_id: str, documents: Mapping[str, Lifecycle], replaced_by: Mapping[str, set[str]]) -> date | None:
    """The first day a replacement of ``doc_id`` existed; ``date.min`` when one always did (undated or not in
    the corpus); ``None`` when nothing replaces it."""
    first: date | None = None
    for successor_id in replaced_by.get(doc_id, ()):
        successor = documents.get(successor_id)
        if successor is None or successor.created is None:
            if successor is None or not successor.never_in_force:
                return date.min
            continue
        if successor.never_in_force:
            continue
        first = successor.created if first is None else min(first, successor.created)
    return first


def is_in_force(
    doc: Lifecycle, day: date, documents: Mapping[str, Lifecycle], replaced_by: Mapping[str, set[str]]
) -> bool:
    if doc.never_in_force:
        return False
    if doc.created is not None and doc.created > day:
        return False
    if doc.supported_until is not None and day > doc.supported_until:
        return False
    since = replaced_since(doc.id, documents, replaced_by)
    return since is None or since > day


def in_force_ids(documents: Mapping[str, Lifecycle], day: date) -> set[str]:
    """The ids of the documents in force on ``day``."""
    replaced_by = replacements(documents)
    return {doc_id for doc_id, doc in documents.items() if is_in_force(doc, day, documents, replaced_by)}
