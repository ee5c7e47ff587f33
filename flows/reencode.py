"""``reencode_collections``: switch the policy and application-document collections to another encoder.

Every stored chunk (every revision, superseded or not, and every application document) is re-embedded
from its stored text with the target encoder, in place, and the encoder is then recorded with the
collection (``lib.stores.encoders.reencode_collection``). While it runs a collection records ``old->new``
and every process refuses to open it; services configured with the old encoder keep their open stores, so
stop them before switching and start them with the new ``EMBEDDING_ENCODER`` after. Running it again is
safe: an interrupted switch is finished, a finished one is redone with the same vectors.
"""

from __future__ import annotations

from prefect import flow, task
from prefect.artifacts import create_table_artifact
from pydantic import BaseModel

from flows.common import IO_TASK_OPTIONS, artifact_key, log_event
from lib.config import Settings, load_settings
from lib.stores.chroma import ChunkCollection, open_chroma
from lib.stores.embeddings import Embedder, settings_embedder
from lib.stores.encoders import EncoderName, encoder_id, recorded_encoder, reencode_collection

FLOW = "reencode"


class ReencodedCollection(BaseModel):
    collection: str
    encoder_before: str | None
    encoder: str
    chunks: int


class ReencodeResult(BaseModel):
    encoder: str
    collections: list[ReencodedCollection]


def target_embedder(settings: Settings, encoder: EncoderName) -> Embedder:
    """An embedder of ``encoder`` built from ``settings`` as ``open_stores`` builds it."""
    return settings_embedder(settings.embeddings, encoder)


def reencode_one(collection: ChunkCollection, encoder: EncoderName, embedder: Embedder) -> ReencodedCollection:
    name = collection.collection.name
    before = recorded_encoder(collection)
    log_event("reencode.started", collection=name, encoder_before=before, encoder=encoder_id(encoder))
    chunks = reencode_collection(collection, encoder, embedder.embed_batch)
    log_event("reencode.done", collection=name, chunks=chunks, encoder=encoder_id(encoder))
    return ReencodedCollection(collection=name, encoder_before=before, encoder=encoder_id(encoder), chunks=chunks)


def reencode_stores(settings: Settings, encoder: EncoderName) -> ReencodeResult:
    """Re-embed ``settings``' policy and document collections with ``encoder`` and record it with each.
    What the flow runs (as one task, retried on a store outage: a rerun finishes the switch)."""
    chroma = open_chroma(settings.chroma)
    embedder = target_embedder(settings, encoder)
    done = [
        reencode_one(ChunkCollection(chroma, name), encoder, embedder)
        for name in (settings.chroma.policy_collection, settings.chroma.document_collection)
    ]
    return ReencodeResult(encoder=encoder_id(encoder), collections=done)


@task(name="reencode-collections", **IO_TASK_OPTIONS)
def run_reencode(settings: Settings, encoder: EncoderName) -> ReencodeResult:
    return reencode_stores(settings, encoder)


@flow(name="reencode_collections", validate_parameters=True)
def reencode_collections(encoder: EncoderName) -> ReencodeResult:
    """Switch every collection to ``encoder``; then set ``EMBEDDING_ENCODER`` to it and restart the services.

    Args:
        encoder: The encoder to switch to: torch or int8.
    """
    result = run_reencode(load_settings(), encoder)
    create_table_artifact(
        [c.model_dump() for c in result.collections],
        key=artifact_key(FLOW, encoder),
        description=f"collections re-embedded with {result.encoder}",
    )
    return result
