"""The notes snapshot without stores: a snapshot reached by updates ranks exactly as one built at once (what
a second replica holds), only changed notes are tokenised, and both legs see exactly the allowed notes."""

from __future__ import annotations

import numpy as np

from lib.notes.index import Snapshot
from lib.notes.search import key, rank_snapshot
from lib.retrieval import DocumentChunks, SearchMode
from lib.stores.chroma import StoredChunk

TOPICS = ["flood risk", "cycle parking", "heritage assets", "para 116", "green belt", "bus frequency"]


def document(document_id: int, generation: int = 1, words: str = "") -> DocumentChunks[int]:
    texts = [f"Note {document_id} on {TOPICS[document_id % 6]} {words}", f"Follow-up on {TOPICS[document_id % 5]}"]
    chunks = tuple(
        StoredChunk(f"kb_{document_id}_{generation}_{i:05d}", t, {"document_id": document_id, "chunk_index": i})
        for i, t in enumerate(texts)
    )
    vectors = np.random.default_rng(document_id * 10 + generation).standard_normal((2, 8)).astype(np.float32)
    return DocumentChunks(document_id, generation, chunks, vectors / np.linalg.norm(vectors, axis=1, keepdims=True))


def ranked(snapshot: Snapshot, allowed: set[int] | None, mode: SearchMode) -> list[tuple[tuple[int, int], float]]:
    vector = np.ones(8, dtype=np.float32) / np.sqrt(8)
    hits = rank_snapshot(snapshot, "flood risk para 116 heritage", vector, allowed, mode, 20)
    return [(key(hit), hit.relevance) for hit in hits]


def test_a_snapshot_reached_by_updates_ranks_exactly_as_one_built_at_once() -> None:
    first = tuple(document(i) for i in range(1, 601))
    old = Snapshot.after(None, 1, first)
    rewritten = {7: document(7, 2, "heritage heritage"), 450: document(450, 3, "para 116")}
    documents = (*(rewritten.get(d.key, d) for d in first if d.key != 300), document(601))
    new = Snapshot.after(old, 2, documents)
    fresh = Snapshot.after(None, 2, documents)

    assert new.index.lexical.keys() == fresh.index.lexical.keys() == [d.key for d in documents]
    shared = sum(a is b for a, b in zip(old.index.lexical.segments, new.index.lexical.segments, strict=False))
    assert shared >= len(old.index.lexical.segments) - 3
    for allowed in (None, {i for i in range(1, 602) if i % 3 == 0}, {7, 450}, set()):
        for mode in SearchMode:
            assert ranked(new, allowed, mode) == ranked(fresh, allowed, mode)


def test_both_legs_see_only_the_allowed_notes_and_their_live_text() -> None:
    snapshot = Snapshot.after(None, 1, tuple(document(i) for i in range(1, 50)))
    allowed = {4, 10, 16}
    for mode in SearchMode:
        hits = rank_snapshot(snapshot, "flood risk", np.ones(8, np.float32), allowed, mode, 10)
        assert hits and {key(hit)[0] for hit in hits} <= allowed
        assert all(hit.chunk.text == snapshot.chunk(*key(hit)).text for hit in hits)
    rewritten = tuple(document(4, 2, "drainage") if d.key == 4 else d for d in snapshot.documents)
    updated = Snapshot.after(snapshot, 2, rewritten)
    hits = rank_snapshot(updated, "drainage", None, None, SearchMode.LEXICAL, 10)
    assert [key(hit) for hit in hits] == [(4, 0)] and "drainage" in hits[0].chunk.text
