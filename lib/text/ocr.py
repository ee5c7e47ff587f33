"""Tesseract OCR of one rendered page (spec 003 FR-005, NFR-001): words and their mean confidence.

Tesseract is run directly rather than through ``pytesseract``: pytesseract hands ``os.environ`` to
its subprocess, so the only way to give Tesseract ``OMP_THREAD_LIMIT=1`` would be to set it for the
whole process, where it would later make torch (embeddings, same process) single-threaded too. One
single-threaded Tesseract per core is the fastest layout here: Tesseract's own OpenMP threads fight over
the cores and are 5x slower.

Every failure is a typed ``ExtractionFailedError`` whose message names no file-system path.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import NamedTuple

from lib.errors import ExtractionFailedError

LOW_CONFIDENCE = 70.0
"""OCR pages whose mean word confidence is below this are logged at WARNING (spec 003 NFR-001)."""
OCR_LANGUAGE = "eng"
OCR_TIMEOUT_SECONDS = 600

_TSV_WORD_LEVEL = "5"


class OcrText(NamedTuple):
    text: str
    confidence: float | None
    """Mean word confidence, 0..100; None when Tesseract found no words."""


def ocr_png(png: bytes, dpi: int) -> OcrText:
    """One Tesseract call per page giving words and confidences (TSV). Safe to call from several threads:
    each call is its own single-threaded process."""
    command = [_tesseract_binary(), "stdin", "stdout", "--dpi", str(dpi), "-l", OCR_LANGUAGE, "tsv"]
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    try:
        done = subprocess.run(command, input=png, capture_output=True, env=env, timeout=OCR_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired as exc:
        raise ExtractionFailedError(f"OCR of a page took longer than {OCR_TIMEOUT_SECONDS} s") from exc
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
        raise ExtractionFailedError(f"OCR failed: {detail[0][:200]}")
    return parse_tesseract_tsv(done.stdout.decode("utf-8", "replace"))


@contextmanager
def ocr_pool(workers: int) -> Iterator[ThreadPoolExecutor]:
    """Threads for ``ocr_png``, one per worker. No thread starts until a page is submitted
    (``ThreadPoolExecutor`` spawns them on submit), and most PDFs need none. On the way out, an error
    included, queued pages are cancelled and running ones awaited."""
    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="ocr")
    try:
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def parse_tesseract_tsv(tsv: str) -> OcrText:
    """Words grouped back into lines and paragraphs, and their mean confidence (None when no words)."""
    lines: dict[tuple[str, str, str], list[str]] = {}
    confidences: list[float] = []
    for row in csv.DictReader(io.StringIO(tsv), delimiter="\t", quoting=csv.QUOTE_NONE):
        word = (row.get("text") or "").strip()
        if row.get("level") != _TSV_WORD_LEVEL or not word:
            continue
        lines.setdefault((row["block_num"], row["par_num"], row["line_num"]), []).append(word)
        confidence = float(row.get("conf") or -1)
        if confidence >= 0:
            confidences.append(confidence)
    paragraphs: dict[tuple[str, str], list[str]] = {}
    for (block, par, _), words in lines.items():
        paragraphs.setdefault((block, par), []).append(" ".join(words))
    text = "\n\n".join("\n".join(paragraph) for paragraph in paragraphs.values())
    return OcrText(text, sum(confidences) / len(confidences) if confidences else None)


def _tesseract_binary() -> str:
    binary = shutil.which("tesseract")
    if binary is None:
        raise ExtractionFailedError("OCR is needed but the tesseract program is not installed")
    return binary
