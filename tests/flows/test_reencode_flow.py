"""Switching encoders: the reencode flow re-embeds every revision's chunks, then the stores open with the
new encoder only (real Redis, Chroma, the real model and its int8 export)."""

from __future__ import annotations

import numpy as np
import pytest

from flows.reencode import reencode_stores
from lib.composition import Stores, open_stores
from lib.config import Settings
from lib.errors import EncoderMismatchError
from lib.models import Section
from lib.policies.ingest import store_chunks
from lib.policies.lifecycle import create_revision
from lib.policies.models import PolicyCreate, RevisionCreate
from lib.policies.search import search_policy
from lib.policies.stores import open_policy_stores
from lib.text.chunking import chunk_sections

HIGHWAYS = "Development should only be prevented or refused on highways grounds if there would be an unacceptable impact on highway safety."  # noqa: E501
CYCLING = "Cycle parking should be secure, covered and conveniently located close to building entrances."


def store(stores: Stores, rid: str, frm: str, to: str | None, text: str) -> None:
    policies = stores.policies
    create_revision(
        policies.registry,
        policies.vectors,
        "NPPF",
        RevisionCreate(revision_id=rid, version_label=rid, effective_from=frm, effective_to=to),
    )
    chunks = chunk_sections([Section(section_ref="Para 116", text=text, page_number=3, page_spans=[(0, 3)])])
    store_chunks(
        policies.registry,
        policies.vectors,
        "NPPF",
        rid,
        chunks,
        policies.embedder.embed_batch([c.text for c in chunks]),
        page_count=3,
        file_size_bytes=10,
        extraction_method="text_layer",
    )


def test_reencode_switches_every_revision_and_the_stores_then_open_with_the_new_encoder_only(
    flow_settings: Settings, redis_client: object
) -> None:
    torch_settings = flow_settings.replace(embedding_encoder="torch")
    torch_kb = open_stores(torch_settings)  # a data dir made before int8 was the default
    assert torch_kb.documents.chunks.count() == 0  # opening the document stores records the encoder on them too
    torch_kb.policies.registry.create_policy(PolicyCreate(source="NPPF", title="NPPF", category="national_policy"))
    store(torch_kb, "rev_old", "2023-09-05", "2024-12-11", CYCLING)
    store(torch_kb, "rev_new", "2024-12-12", None, HIGHWAYS)
    int8_settings = flow_settings.replace(embedding_encoder="int8")
    with pytest.raises(EncoderMismatchError):
        open_policy_stores(int8_settings)

    result = reencode_stores(int8_settings, "int8")

    assert result.encoder == "minilm-l6-v2/int8"
    before = [(c.encoder_before, c.chunks) for c in result.collections]
    assert before == [("minilm-l6-v2/torch", 2), ("minilm-l6-v2/torch", 0)]
    with pytest.raises(EncoderMismatchError):
        open_policy_stores(torch_settings)
    switched = open_stores(int8_settings)
    stored = switched.policies.vectors.collection.get(include=["embeddings", "documents"])
    expected = switched.embedder.embed_batch(list(stored["documents"] or []))
    assert np.abs(np.asarray(stored["embeddings"]) - np.asarray(expected)).max() <= 1e-6
    for day, text in (("2024-01-01", CYCLING), ("2025-01-01", HIGHWAYS)):
        assert (
            search_policy(switched.policies, "highway safety", effective_date=day, n_results=1).results[0].text == text
        )
