"""Which encoder made a collection's vectors, recorded with the collection so queries use the same one.

Vectors of two encoders are not comparable (the int8 encoder's differ from torch's by a cosine of about
0.006), so every vector of a collection comes from one encoder, named in the collection's Chroma metadata
under ``encoder`` (e.g. ``minilm-l6-v2/torch``). Opening a collection with another encoder configured is
refused; switching is ``reencode_collection`` (the ``reencode`` flow), which re-embeds every stored chunk.
A collection made before encoders were recorded holds torch vectors and is recorded as such when opened.
While a switch runs the collection records ``old->new``, which no configuration matches, so an interrupted
switch stays refused until the flow is run again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, get_args

from lib.errors import EncoderMismatchError
from lib.stores.chroma import ChunkCollection

EncoderName = Literal["torch", "int8"]
ENCODERS: tuple[EncoderName, ...] = get_args(EncoderName)
MODEL_ID = "minilm-l6-v2"
LEGACY_ENCODER: EncoderName = "torch"
"""What made the vectors of a collection that records no encoder: the only encoder there was."""
_KEY = "encoder"
_SLICE = 256


def encoder_id(name: EncoderName) -> str:
    """The name recorded with a collection: ``minilm-l6-v2/torch`` or ``minilm-l6-v2/int8``."""
    if name not in ENCODERS:
        raise ValueError(f"unknown encoder {name!r}; expected one of {', '.join(ENCODERS)}")
    return f"{MODEL_ID}/{name}"


def recorded_encoder(collection: ChunkCollection) -> str | None:
    """The encoder the collection records; a collection with vectors but no record is the legacy encoder's."""
    recorded = (collection.collection.metadata or {}).get(_KEY)
    if recorded is None and collection.count():
        return encoder_id(LEGACY_ENCODER)
    return None if recorded is None else str(recorded)


def _remedy(recorded: str, name: EncoderName) -> str:
    if "->" in recorded:
        return "a switch of encoders was interrupted; run the reencode_collections flow (flows/reencode.py) again"
    return (
        f"set EMBEDDING_ENCODER={recorded.rsplit('/', 1)[-1]} to use the collection as it is, or switch it with the "
        f"reencode_collections flow (flows/reencode.py), which re-embeds every chunk with '{name}'"
    )


def _record(collection: ChunkCollection, value: str) -> None:
    # Chroma refuses any ``hnsw:`` key on modify (the space is fixed at creation) and keeps it in its config.
    kept = {k: v for k, v in (collection.collection.metadata or {}).items() if not k.startswith("hnsw:")}
    collection.collection.modify(metadata={**kept, _KEY: value})


def bind_encoder(collection: ChunkCollection, name: EncoderName) -> str:
    """Check that ``collection`` holds vectors of encoder ``name`` (recording it on a collection that records
    none) and return its id. Raises ``EncoderMismatchError`` when the collection records another."""
    wanted = encoder_id(name)
    recorded = recorded_encoder(collection) or wanted
    if (collection.collection.metadata or {}).get(_KEY) is None:
        _record(collection, recorded)
    if recorded != wanted:
        raise EncoderMismatchError(
            f"Collection '{collection.collection.name}' holds vectors of encoder '{recorded}' but EMBEDDING_ENCODER "
            f"is '{name}': {_remedy(recorded, name)}",
            collection=collection.collection.name,
            recorded=recorded,
            configured=wanted,
        )
    return recorded


def reencode_collection(
    collection: ChunkCollection,
    name: EncoderName,
    embed: Callable[[list[str]], list[list[float]]],
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Re-embed every chunk of ``collection`` (every revision and document, from its stored text) with
    ``embed``, the encoder ``name``'s, then record that encoder; return the number of chunks re-embedded.

    In place: ids, texts and metadata stay; only the vectors change. Until it finishes the collection records
    ``old->new`` and no process can open it, so queries never compare vectors of two encoders.
    """
    wanted = encoder_id(name)
    before = recorded_encoder(collection)
    if before is not None and "->" in before:
        before = before.split("->", 1)[0]
    if before is not None and before != wanted:
        _record(collection, f"{before}->{wanted}")
    ids = [cid for cid, _ in collection.iter_metadata()]
    for start in range(0, len(ids), _SLICE):
        page = collection.collection.get(ids=ids[start : start + _SLICE], include=["documents", "metadatas"])
        texts = [text or "" for text in page["documents"] or []]
        metadatas = [dict(meta or {}) for meta in page["metadatas"] or []]
        collection.upsert(page["ids"], texts, embed(texts), metadatas)
        if progress is not None:
            progress(start + len(page["ids"]), len(ids))
    _record(collection, wanted)
    return len(ids)
