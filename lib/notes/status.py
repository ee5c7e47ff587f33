"""The kb engine's status (spec 002's ``GET /api/v1/status``): version, model, device, counts, queue."""

from __future__ import annotations

import importlib.metadata

from pydantic import BaseModel

from lib.notes.stores import NoteStores
from lib.stores.embedding_model import DIMENSIONS, MODEL_NAME

DEVICE = "cpu"
"""Where the encoders run: both load on the CPU (``lib.stores.embedding_model``, the ONNX exports)."""


class ModelInfo(BaseModel):
    name: str
    encoder: str
    dimensions: int


class QueueInfo(BaseModel):
    queued: int
    running: int
    completed: int
    failed: int


class EngineStatus(BaseModel):
    version: str
    model: ModelInfo
    device: str
    documents: int
    chunks: int
    notes: int
    files: int
    queue: QueueInfo


def engine_status(stores: NoteStores) -> EngineStatus:
    """Counts from the registry (live chunks only: a note mid-rewrite counts once)."""
    counts = stores.registry.counts()
    return EngineStatus(
        version=_version(),
        model=ModelInfo(name=MODEL_NAME, encoder=stores.embedder.encoder_id, dimensions=DIMENSIONS),
        device=DEVICE,
        queue=QueueInfo.model_validate(stores.jobs.counts()),
        **counts,
    )


def _version() -> str:
    try:
        return importlib.metadata.version("policy-kb")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
