"""The contract's ``search``: each leg the mode uses is asked for ``Query.depth`` candidates, a leg the mode
does not use is never run, and the ranking is ``rank_chunks``'s over what the legs returned (the per-document
limit, a deeper ``ranked`` read, the fusion's parameters)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from lib.retrieval import FUSION, FusionMethod, FusionParams, LexicalAnswer, Query, SearchMode, search
from lib.retrieval.ranking import candidates, rank_chunks
from lib.stores.chroma import StoredChunk

CHUNKS = [StoredChunk(f"c{i:03d}", f"text {i}", {"doc": f"d{i % 7}"}) for i in range(300)]
CEILING = 9.5


@dataclass
class Legs:
    """Two recorded legs (best first), and each call made of them: which leg, what depth, on which thread."""

    dense_hits: list[tuple[StoredChunk, float]]
    lexical_hits: list[tuple[StoredChunk, float]]
    asked: list[tuple[str, int, str]] = field(default_factory=list)

    @classmethod
    def of(cls, seed: int) -> Legs:
        rng = np.random.default_rng(seed)
        dense = [(CHUNKS[i], float(rng.random())) for i in rng.permutation(300)[:200]]
        lexical = [(CHUNKS[i], float(rng.random()) * 9) for i in rng.permutation(300)[:150]]
        return cls(sorted(dense, key=lambda h: -h[1]), sorted(lexical, key=lambda h: -h[1]))

    def dense(self, depth: int) -> list[tuple[StoredChunk, float]]:
        self.asked.append(("dense", depth, threading.current_thread().name))
        return self.dense_hits[:depth]

    def lexical(self, depth: int) -> LexicalAnswer:
        self.asked.append(("lexical", depth, threading.current_thread().name))
        return LexicalAnswer(self.lexical_hits[:depth], CEILING)


def test_each_leg_the_mode_uses_is_asked_for_the_query_depth_and_the_other_never_runs() -> None:
    here = threading.current_thread().name
    for mode in SearchMode:
        for per_document in (None, 2):
            recorded = Legs.of(1)
            query = Query("q", 10, mode, per_document=per_document, document_fields=("doc",))
            search(query, recorded.dense, recorded.lexical)
            depth = candidates(10) if mode == SearchMode.HYBRID or per_document is not None else 10
            assert query.depth == depth
            used = {SearchMode.DENSE: ["dense"], SearchMode.LEXICAL: ["lexical"]}.get(mode, ["dense", "lexical"])
            assert recorded.asked == [(leg, depth, here) for leg in used]


def test_hits_are_rank_chunks_over_the_legs_with_the_query_s_limits() -> None:
    for seed in range(5):
        recorded = Legs.of(seed)
        for mode in SearchMode:
            for query in (
                Query("q", 10, mode),
                Query("q", 5, mode, per_document=1, document_fields=("doc",)),
                Query("q", 10, mode, ranked=candidates(10)),
                Query("q", 10, mode, fusion=FusionParams(method=FusionMethod.RRF, depth=50)),
            ):
                depth = query.depth
                found = search(query, recorded.dense, recorded.lexical)
                expected = rank_chunks(
                    mode,
                    recorded.dense_hits[:depth] if mode != SearchMode.LEXICAL else [],
                    recorded.lexical_hits[:depth] if mode != SearchMode.DENSE else [],
                    query.ranked or query.k,
                    lexical_ceiling=CEILING if mode != SearchMode.DENSE else 1.0,
                    per_document=query.per_document,
                    document_fields=query.document_fields,
                    params=query.fusion,
                )
                assert found and found == expected
                if query.per_document is not None:
                    owners = [hit.chunk.metadata["doc"] for hit in found]
                    assert len(owners) == len(set(owners)) == 5
    assert Query("q", 10).fusion == FUSION


def test_large_hybrid_searches_run_their_lexical_leg_on_a_helper_with_the_same_hits() -> None:
    here = threading.current_thread().name
    recorded = Legs.of(3)
    query = Query("q", 10)
    alone = search(query, recorded.dense, recorded.lexical)
    assert [thread for _, _, thread in recorded.asked] == [here, here]
    recorded.asked.clear()
    together = search(query, recorded.dense, recorded.lexical, rows=1_000_000, helpers=1)
    assert together == alone
    threads = {leg: thread for leg, _, thread in recorded.asked}
    assert threads["dense"] == here and threads["lexical"].startswith("search-leg")
