"""Sentence embeddings for chunks and search queries (spec 003 FR-007): all-MiniLM-L6-v2, 384 dimensions.

Vectors are L2-normalised float32; identical input gives bit-identical output (inference only, no dropout,
deterministic CPU kernels). Two encoders (``EMBEDDING_ENCODER``):

- ``int8`` (the setting's default): documents and queries alike on the int8-quantised ONNX export, each
  text alone (``Int8Encoder``); why it is the default: docs/decisions/0006-int8-encoder-default.md.
- ``torch``: documents (``embed_batch``) on sentence-transformers; queries (``embed_queries``) on the ONNX
  export (``lib.stores.onnx_encoder``) when the embedder has a folder for it and the export exists, else on
  torch: the same vectors either way (within ``ONNX_TOLERANCE``).

The model files of both are made once per machine in ``MODEL_CACHE_DIR`` (``settings_embedder``). A
collection records which encoder made its vectors (``lib.stores.encoders``); ``encoder_id`` names it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from cachetools import LRUCache

from lib.config import EmbeddingSettings
from lib.cpus import usable_cpus
from lib.observability import measured
from lib.observability.metrics import count_lookup
from lib.stores.embedding_model import DIMENSIONS, load_model
from lib.stores.encoders import EncoderName, encoder_id
from lib.stores.onnx_encoder import Int8Encoder, OnnxQueryEncoder, load_int8_encoder, load_onnx_encoder

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

logger = logging.getLogger(__name__)


class Embedder:
    """Turns text into vectors. Cheap to construct; the model behind it is shared and lazy.

    With ``onnx_dir`` set, ``embed_queries`` runs on the ONNX export kept in that folder once it exists
    (``warm_up`` makes it); until then, and without ``onnx_dir``, on torch. It also remembers the vectors
    of the last ``query_cache_size`` distinct query texts: a review agent asks the same policy questions
    of application after application, and a vector depends on nothing but its text.

    With ``encoder="int8"`` both methods run on the int8 encoder kept in ``int8_dir`` (made on first use),
    ``workers`` texts at a time.
    """

    def __init__(
        self,
        batch_size: int = 32,
        onnx_dir: Path | None = None,
        query_cache_size: int = 4096,
        *,
        encoder: EncoderName = "torch",
        int8_dir: Path | None = None,
        workers: int = 1,
    ) -> None:
        if encoder == "int8" and int8_dir is None:
            raise ValueError("the int8 encoder needs a folder (int8_dir) to keep its model in")
        self.batch_size = batch_size
        self.onnx_dir = onnx_dir
        self.query_cache_size = query_cache_size
        self.encoder: EncoderName = encoder
        self.encoder_id = encoder_id(encoder)
        self.int8_dir = int8_dir
        self.workers = workers
        self._queries: LRUCache[str, np.ndarray] = LRUCache(query_cache_size)
        self._queries_lock = threading.Lock()

    @property
    def dimensions(self) -> int:
        return DIMENSIONS

    def _int8(self) -> Int8Encoder | None:
        if self.encoder != "int8":
            return None
        assert self.int8_dir is not None
        return load_int8_encoder(self.int8_dir, self.workers)

    def embed(self, text: str) -> list[float]:
        return self.embed_batch([text])[0]

    def embed_batch(self, texts: Sequence[str], batch_size: int | None = None) -> list[list[float]]:
        """Embed in batches. Raises ``ValueError`` for empty or whitespace-only text, before any work."""
        if not texts:
            return []
        _check_texts(texts)
        if (int8 := self._int8()) is not None:
            return int8.encode(texts).tolist()
        model = load_model()
        self._warn_if_truncated(model, texts)
        vectors = model.encode(
            list(texts),
            batch_size=batch_size or self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return vectors.astype("float32").tolist()

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Search queries as a ``(n, 384)`` float32 array: the int8 encoder when configured; for torch, the
        ONNX export when configured, else torch."""
        _check_texts(texts)
        with measured("embed", queries=len(texts)):
            return self._embed_queries(texts)

    def _embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        with self._queries_lock:
            known = {t: vector for t in texts if (vector := self._queries.get(t)) is not None}
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        for text in dict.fromkeys(texts):
            count_lookup("query_embeddings", hit=text in known)
        if missing:
            encoder: OnnxQueryEncoder | None = self._int8()
            if encoder is None and self.onnx_dir is not None:
                encoder = load_onnx_encoder(self.onnx_dir, wait=False)
            vectors = (
                encoder.encode(missing) if encoder is not None else np.asarray(self.embed_batch(missing), np.float32)
            )
            with self._queries_lock:
                for text, vector in zip(missing, vectors, strict=True):
                    vector.setflags(write=False)
                    known[text] = vector
                    if self.query_cache_size:
                        self._queries[text] = vector
        return np.vstack([known[t] for t in texts])

    def warm_up(self) -> None:
        """Load the model and the ONNX export (exporting it if need be) now rather than on first requests."""
        if self.onnx_dir is not None and self.encoder == "torch":
            load_onnx_encoder(self.onnx_dir, export=True)
        self.embed_queries(["warm up"])

    @staticmethod
    def _warn_if_truncated(model: SentenceTransformer, texts: Sequence[str]) -> None:
        """Warn when a text is longer than the model reads (256 word pieces); the tail is ignored."""
        limit = model.max_seq_length
        if limit is None:
            return
        long_texts = [t for t in texts if len(t) > limit - 2]
        if not long_texts:
            return
        lengths = [len(ids) for ids in model.tokenizer(long_texts, add_special_tokens=True, verbose=False)["input_ids"]]
        over = [n for n in lengths if n > limit]
        if over:
            logger.warning("embeddings.truncated texts=%d max_tokens=%d limit=%d", len(over), max(over), limit)


def settings_embedder(embeddings: EmbeddingSettings, encoder: EncoderName | None = None) -> Embedder:
    """The embedder these settings name: ``EMBEDDING_ENCODER`` (or ``encoder``), its model files in
    ``MODEL_CACHE_DIR``, one text per core at a time for int8. What ``open_stores`` and the flows build."""
    models = embeddings.model_cache_dir
    assert models is not None, "Settings resolves MODEL_CACHE_DIR"
    return Embedder(
        batch_size=embeddings.batch_size,
        onnx_dir=models if embeddings.onnx_queries else None,
        encoder=encoder or embeddings.encoder,
        int8_dir=models,
        workers=usable_cpus(),
    )


def _check_texts(texts: Sequence[str]) -> None:
    if not texts:
        raise ValueError("nothing to embed")
    for i, text in enumerate(texts):
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"cannot embed empty text (item {i})")
