"""How long work (an ingestion, a re-index) says how far it has got: ``progress(phase, percent)``.

Every ingestion reports the same phases, so a client shows one kind of progress bar whatever it ingests:
fetch (the file is read), extract (text layer, OCR), chunk, embed (in slices, so the bar moves on a long
document), store, done. The callback runs on the thread doing the work; a caller that wants the work to stop
(a cancelled MCP task, ``mcp_service.tools.tasks``) raises from it, and the work ends there as it would on any
other error (nothing half-written is kept: each ingestion undoes or never starts its writes).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lib.stores.embeddings import Embedder

Progress = Callable[[str, float], None]
"""``progress(phase, percent)``: phases are fetch, extract, chunk, embed, store, done."""

EMBED_SLICE = 256
"""Texts embedded per call between two progress reports."""

EMBED_FROM, EMBED_TO = 35.0, 85.0
"""The share of the bar embedding takes (it is most of an ingestion's time after extraction)."""


def no_progress(phase: str, percent: float) -> None:
    """The callback of a caller that asked for no progress."""
    return None


def embed_with_progress(embedder: Embedder, texts: Sequence[str], report: Progress) -> list[list[float]]:
    """Embed in slices (reporting ``embed`` before each) ordered longest first, so each slice pads as little
    as one big call would.

    The order is a pure function of the texts, so ingesting the same file again embeds the same batches and
    gets bit-identical vectors.
    """
    order = sorted(range(len(texts)), key=lambda i: (-len(texts[i]), i))
    vectors: list[list[float]] = [[] for _ in texts]
    for start in range(0, len(order), EMBED_SLICE):
        report("embed", EMBED_FROM + (EMBED_TO - EMBED_FROM) * start / len(order))
        batch = order[start : start + EMBED_SLICE]
        for i, vector in zip(batch, embedder.embed_batch([texts[i] for i in batch]), strict=True):
            vectors[i] = vector
    return vectors
