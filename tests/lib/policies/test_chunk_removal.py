"""``remove_revision_chunks`` as the ``remove_policy_revision`` tool calls it (with the registry): chunks removed
for a registered revision, orphans a crash left removed too, and precise not-found errors for anything else."""

from __future__ import annotations

import pytest
import redis

from lib.composition import Stores
from lib.errors import PolicyNotFoundError, RevisionNotFoundError
from lib.models import Chunk
from lib.policies.ingest import store_chunks
from lib.policies.keys import revision_hash_key
from lib.policies.lifecycle import create_revision, remove_revision_chunks
from lib.policies.models import PolicyCreate, RevisionCreate
from lib.stores.embeddings import Embedder


def test_orphans_are_removed_and_what_never_existed_is_not_found(
    stores: Stores, redis_client: redis.Redis, embedder: Embedder
) -> None:
    policies = stores.policies
    policies.registry.create_policy(PolicyCreate(source="NPPF", title="NPPF", category="national_policy"))
    create_revision(
        policies.registry,
        policies.vectors,
        "NPPF",
        RevisionCreate(revision_id="rev_a", version_label="a", effective_from="2024-01-01"),
    )
    page = {"chapter": "1. Intro", "page_number": 1, "page_numbers": [1]}
    chunks = [Chunk(text=f"text {i}", section_ref=f"Para {i}", chunk_index=i, **page) for i in range(2)]
    vector = embedder.embed("highways")
    store_chunks(
        policies.registry,
        policies.vectors,
        "NPPF",
        "rev_a",
        chunks,
        [vector] * 2,
        page_count=1,
        file_size_bytes=1,
        extraction_method="text_layer",
    )
    redis_client.delete(revision_hash_key("NPPF", "rev_a"))  # a crash between the registry and Chroma

    assert remove_revision_chunks(policies.vectors, "NPPF", "rev_a", registry=policies.registry) == 2
    with pytest.raises(RevisionNotFoundError):
        remove_revision_chunks(policies.vectors, "NPPF", "rev_a", registry=policies.registry)
    with pytest.raises(PolicyNotFoundError):
        remove_revision_chunks(policies.vectors, "NOPE", "rev_a", registry=policies.registry)
