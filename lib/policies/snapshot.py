"""Every policy's revisions held in memory for the hot path (the resolver, hence every search).

A snapshot is loaded once and reused while ``policy_registry:generation`` still holds the token it was
loaded under. Every registry write replaces the token in the same MULTI/EXEC as its data, so a reader
checks one key per request and sees each write on its next request, in every replica. A token rather
than a counter: after a flush or a restore the key is new and no old snapshot can match it. Edits made
behind the registry's back (``redis-cli``) do not replace it: a snapshot is therefore also reloaded once
it is ``max_age_s`` (30 s) old, and ``DEL policy_registry:generation`` makes every replica reload on its
next read. (A reload costs a few milliseconds; a shorter age would make a review agent asking one
question every few seconds pay it on every question.)
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from lib.policies.models import Revision

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RegistrySnapshot:
    """Every registered policy's revisions, newest ``effective_from`` first, as of one registry generation."""

    generation: str
    revisions: Mapping[str, tuple[Revision, ...]]
    """By source slug, sorted; a policy without revisions maps to ``()``."""
    loaded_at: float = 0.0
    """The cache's clock reading when it was read."""

    @property
    def sources(self) -> list[str]:
        return list(self.revisions)


class SnapshotCache:
    """The latest snapshot of one registry, shared by its threads; at most one thread reloads at a time."""

    def __init__(self, *, max_age_s: float, clock: Callable[[], float]) -> None:
        self.max_age_s = max_age_s
        """How long a snapshot may be reused while the generation is unchanged: the bound on how late edits
        made behind the registry's back are seen. Writes through the registry are seen on the next read."""
        self._clock = clock
        self._snapshot: RegistrySnapshot | None = None
        self._lock = threading.Lock()

    def get(self, generation: str, load: Callable[[], Mapping[str, Sequence[Revision]]]) -> RegistrySnapshot:
        """The cached snapshot if it was loaded under ``generation`` and is young enough, else ``load()``'s.

        The caller reads ``generation`` before ``load`` reads the data, so a write racing the load leaves
        the snapshot labelled with the older token and the next call reloads: a snapshot is never
        newer-labelled than its data.
        """
        if (cached := self._snapshot) is not None and self._is_current(cached, generation):
            return cached
        with self._lock:
            if (cached := self._snapshot) is not None and self._is_current(cached, generation):
                return cached
            loaded_at = self._clock()
            by_source = load()
            snapshot = RegistrySnapshot(generation, {s: tuple(r) for s, r in by_source.items()}, loaded_at)
            self._snapshot = snapshot
        logger.debug("registry.snapshot_loaded generation=%s policies=%d", generation, len(by_source))
        return snapshot

    def _is_current(self, snapshot: RegistrySnapshot, generation: str) -> bool:
        return snapshot.generation == generation and self._clock() - snapshot.loaded_at < self.max_age_s
