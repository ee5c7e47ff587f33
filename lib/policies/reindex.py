"""Reindex: run the one pipeline again over a revision's stored file, one reindex of a revision at a time.

A revision still ``processing`` is refused (its first ingestion owns it), and so is a second reindex
while the first holds ``policy_reindex_lock:{source}:{revision_id}`` in Redis: two reindexes of one
revision would race on its stale-chunk deletion. The lock is a lease lock (``lib.stores.locks``): renewed
while the reindex runs, so it holds however long that takes, and is free one lease after its holder died.
``ingest_revision`` writes the new chunks before deleting the old ones, so a search during a reindex
always finds the revision.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import redis

from lib.errors import CannotReindexError
from lib.policies.ingest import Progress, ingest_revision
from lib.policies.models import IngestOutcome, Revision, RevisionStatus
from lib.policies.registry import PolicyRegistry
from lib.policies.stores import PolicyStores
from lib.stores.locks import LeaseLock


def reindex_lock_key(source: str, revision_id: str) -> str:
    return f"policy_reindex_lock:{source}:{revision_id}"


def check_reindexable(registry: PolicyRegistry, source: str, revision_id: str) -> Revision:
    """The revision, if a reindex may start now; ``CannotReindexError`` (409) while it is ``processing``.

    Takes the registry alone so a route can answer 409 before it submits anything.
    """
    revision = registry.get_revision(source, revision_id)
    if revision.status == RevisionStatus.PROCESSING:
        raise CannotReindexError(
            f"Revision '{revision_id}' of '{source}' is still processing; wait for its ingestion to finish",
            source=source,
            revision_id=revision_id,
        )
    return revision


@contextmanager
def reindex_lock(client: redis.Redis, source: str, revision_id: str) -> Iterator[None]:
    """Hold the revision's reindex lock for the block, or raise ``CannotReindexError`` if another reindex holds it."""
    lock = LeaseLock(client, reindex_lock_key(source, revision_id))
    if not lock.acquire():
        raise CannotReindexError(
            f"Revision '{revision_id}' of '{source}' is already being reindexed",
            source=source,
            revision_id=revision_id,
        )
    try:
        yield
    finally:
        lock.release()


def reindex_revision(
    stores: PolicyStores,
    source: str,
    revision_id: str,
    *,
    progress: Progress | None = None,
    replacement: bytes | None = None,
) -> IngestOutcome:
    """Re-read the stored file and rebuild the revision's chunks in place (spec 001 FR-012); with
    ``replacement``, rebuild them from that PDF, which becomes the revision's file (spec 000 FR-005)."""
    with reindex_lock(stores.registry.client, source, revision_id):
        check_reindexable(stores.registry, source, revision_id)
        return ingest_revision(stores, source, revision_id, progress=progress, replacement=replacement)
