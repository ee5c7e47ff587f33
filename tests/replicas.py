"""Replicas in one test process: each its own Chroma client, corpus index and registry snapshot over the same
Redis and Chroma, as two ``policy-kb serve`` processes are; and how two searches' answers are compared."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from lib.policies.chunks import PolicyVectorStore
from lib.policies.registry import PolicyRegistry
from lib.policies.resolver import EffectiveDateResolver
from lib.policies.search import SearchResult
from lib.policies.stores import PolicyStores
from lib.stores.chroma import open_chroma
from lib.stores.redis_server import redis_client


def ids(result: SearchResult) -> list[str]:
    return [h.chunk_id for h in result.results]


SCORES = {"relevance_score", "score", "dense_score", "lexical_score"}


def assert_same_result(a: SearchResult, b: SearchResult) -> None:
    """Same hits, citations and order; scores equal up to float32 rounding of the distance."""
    assert ids(a) == ids(b)
    assert [h.model_dump(exclude=SCORES) for h in a.results] == [h.model_dump(exclude=SCORES) for h in b.results]
    for score in SCORES:
        mine, theirs = ([getattr(h, score) for h in r.results] for r in (a, b))
        assert [s is None for s in mine] == [s is None for s in theirs]
        assert np.allclose([s or 0.0 for s in mine], [s or 0.0 for s in theirs], atol=1e-5)


def replica_of(policies: PolicyStores, snapshot_dir: Path | None = None) -> PolicyStores:
    """Another service process over the same stores: its own Chroma client, cache and registry snapshot; its
    index snapshots in ``snapshot_dir`` if given."""
    registry = PolicyRegistry(redis_client(policies.settings))
    vectors = PolicyVectorStore(
        open_chroma(policies.settings.chroma),
        policies.vectors.collection.name,
        changed=registry.chunks_changed,
        snapshot_dir=snapshot_dir,
    )
    return dataclasses.replace(policies, registry=registry, resolver=EffectiveDateResolver(registry), vectors=vectors)
