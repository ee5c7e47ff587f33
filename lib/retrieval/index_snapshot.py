"""A corpus index kept on local disk under the stamp it was loaded with, so a replica's warm-up reads its slices
back from one file each instead of the store, and does not tokenise them again.

Why: warming 1M chunks from Chroma took 23-28 minutes (issue 27). Per 2,000-chunk slice, Chroma's ``get`` took
~0.28 s and tokenising ~0.37 s; reading a snapshot is a file read and a few array views.

What a snapshot may be trusted with: one is read only under the stamp the caller's source of truth (Redis)
gives now, so a write through the pipeline (which moves the stamp, decision 0028) is never hidden by one. A
change made behind the pipeline's back while the replica was down is not in the stamp; the loader therefore
checks a slice read from a snapshot against the store in the background as soon as it is served
(``IndexLoader``), as it checks every aged slice. The file holds arrays and JSON only (``np.load`` with
``allow_pickle=False``), is written whole or not at all (a temporary file renamed over the old one), and one
that cannot be read, or does not agree with itself, is ignored: the slice is loaded from the store.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lib.retrieval.corpus_index import CorpusIndex, LexicalText, Stamp, plain_text
from lib.retrieval.lexical import LexicalBlock
from lib.retrieval.metadata_table import MetadataTable

logger = logging.getLogger(__name__)

FORMAT = 1


class IndexSnapshots:
    """Snapshots of the slices of one collection, one file per slice key under ``directory``; ``lexical_text``
    is what the collection's slices index for the lexical leg (a function, so not in the file)."""

    def __init__(self, directory: Path, lexical_text: LexicalText = plain_text) -> None:
        self.directory = directory
        self.lexical_text = lexical_text

    def path(self, key: str) -> Path:
        return self.directory / f"{hashlib.sha256(key.encode()).hexdigest()[:40]}.npz"

    def save(self, index: CorpusIndex) -> None:
        """Write ``index`` (its lexical twin built) whole, replacing the key's earlier snapshot; a failure to
        write is logged and loses nothing (the slice is read from the store next time)."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            arrays = _arrays(index)
            handle, temporary = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            try:
                with os.fdopen(handle, "wb") as file:
                    np.savez(file, allow_pickle=False, **arrays)
                os.replace(temporary, self.path(index.key))
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError as error:
            logger.warning("index_snapshot.save_failed key=%s error=%r", index.key, error)

    def load(self, key: str, stamp: Stamp) -> CorpusIndex | None:
        """The slice ``key`` as saved under ``stamp``; ``None`` when there is none, it was saved under another
        stamp, or it cannot be read whole."""
        path = self.path(key)
        if not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as stored:
                header = json.loads(stored["header"].tobytes())
                if header.get("format") != FORMAT or header.get("key") != key or header.get("stamp") != _stamp(stamp):
                    return None
                return _index(key, stamp, header, stored, self.lexical_text)
        except (OSError, EOFError, ValueError, KeyError, TypeError, IndexError, zipfile.BadZipFile) as error:
            logger.warning("index_snapshot.unreadable key=%s error=%r", key, error)
            return None


def _stamp(stamp: Stamp) -> str:
    return json.dumps(stamp, sort_keys=True, default=str)


def _strings(values: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``values`` as one UTF-8 byte array and the end offset of each."""
    encoded = [value.encode() for value in values]
    ends = np.cumsum([len(b) for b in encoded], dtype=np.int64) if encoded else np.zeros(0, np.int64)
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), ends


def _unstrings(blob: np.ndarray, ends: np.ndarray) -> list[str]:
    data = blob.tobytes()
    starts = [0, *ends[:-1].tolist()] if len(ends) else []
    return [data[a:b].decode() for a, b in zip(starts, ends.tolist(), strict=True)]


def _arrays(index: CorpusIndex) -> dict[str, np.ndarray]:
    lexical = index.lexical
    table = index.metadatas.state()
    header = {
        "format": FORMAT,
        "key": index.key,
        "stamp": _stamp(index.stamp),
        "metadata": table.pop("layout"),
        "total_length": lexical.total_length,
    }
    terms = sorted(lexical.vocabulary, key=lexical.vocabulary.__getitem__)
    ids, id_ends = _strings(index.ids)
    texts, text_ends = _strings(index.texts)
    vocabulary, vocabulary_ends = _strings(terms)
    return {
        "header": np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
        "scoring": index.scoring,
        "ids": ids,
        "id_ends": id_ends,
        "texts": texts,
        "text_ends": text_ends,
        "meta_narrow": table["narrow"],
        "meta_wide": table["wide"],
        "vocabulary": vocabulary,
        "vocabulary_ends": vocabulary_ends,
        "indptr": lexical.indptr,
        "rows_of": lexical.rows_of,
        "counts": lexical.counts,
        "lengths": lexical.lengths,
        "doc_freqs": lexical.doc_freqs,
    }


def _index(key: str, stamp: Stamp, header: dict[str, Any], stored: Any, lexical_text: LexicalText) -> CorpusIndex:
    """The index a snapshot holds, checked to agree with itself (every part has the slice's row count)."""
    ids = _unstrings(stored["ids"], stored["id_ends"])
    texts = _unstrings(stored["texts"], stored["text_ends"])
    metadatas = MetadataTable.from_state(
        {"layout": header["metadata"], "narrow": stored["meta_narrow"], "wide": stored["meta_wide"]}
    )
    terms = [sys.intern(term) for term in _unstrings(stored["vocabulary"], stored["vocabulary_ends"])]
    lexical = LexicalBlock(
        vocabulary={term: column for column, term in enumerate(terms)},
        indptr=stored["indptr"],
        rows_of=stored["rows_of"],
        counts=stored["counts"],
        lengths=stored["lengths"],
        doc_freqs=stored["doc_freqs"],
        total_length=int(header["total_length"]),
    )
    scoring = stored["scoring"]
    rows = len(ids)
    if not (len(texts) == len(metadatas) == lexical.rows == scoring.shape[1] == rows) or scoring.ndim != 2:
        raise ValueError(f"a snapshot of {rows} ids whose parts disagree")
    if len(lexical.indptr) != len(terms) + 1 or int(lexical.indptr[-1]) != len(lexical.rows_of):
        raise ValueError("a snapshot whose postings disagree with its vocabulary")
    if len(lexical.rows_of) and int(lexical.rows_of.max()) >= rows:
        raise ValueError("a snapshot whose postings name rows it does not hold")
    index = CorpusIndex(key, stamp, ids, scoring, texts, metadatas, lexical_text)
    index.__dict__["lexical"] = lexical  # the cached property, already built
    return index
