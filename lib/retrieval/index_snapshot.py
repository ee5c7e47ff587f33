"""A corpus index kept on local disk under the stamp it was loaded with, so a replica's warm-up reads its slices
back from one file each instead of the store, and does not tokenise them again.

Why: warming 1M chunks from Chroma took tens of minutes, Chroma's ``get`` and tokenising each about half of it
(decision 0036); reading a snapshot is a file read and a few array views.

What a snapshot may be trusted with: one is read only under the stamp the caller's source of truth (Redis)
gives now, so a write through the pipeline (which moves the stamp, decision 0028) is never hidden by one. A
change made behind the pipeline's back while the replica was down is not in the stamp; the loader therefore
checks a slice read from a snapshot against the store in the background as soon as it is served
(``IndexLoader``), as it checks every aged slice. The file holds arrays and JSON only (``np.load`` with
``allow_pickle=False``), is written whole or not at all (a temporary file renamed over the old one), and one
that cannot be read, or does not agree with itself, is ignored: the slice is loaded from the store.

A slice read from a snapshot keeps the file open and reads its exact vectors and its texts from it when a search
asks (``lib.retrieval.file_columns``): the file's arrays are stored uncompressed, so each has a fixed offset.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import struct
import sys
import tempfile
import time
import zipfile
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from lib.retrieval.corpus_index import CorpusIndex, LexicalText, Stamp, plain_text
from lib.retrieval.file_columns import FileRows, FileTexts, OpenFile, open_files, raise_open_file_limit
from lib.retrieval.lexical import LexicalBlock
from lib.retrieval.metadata_table import MetadataTable
from lib.retrieval.quantized import QuantizedVectors

logger = logging.getLogger(__name__)

FORMAT = 2
LEFTOVER_S = 3600
"""A temporary file this old is what an interrupted save left: ``prune`` deletes it."""


class IndexSnapshots:
    """Snapshots of the slices of one collection, one file per slice key under ``directory``; ``lexical_text``
    is what the collection's slices index for the lexical leg (a function, so not in the file)."""

    def __init__(self, directory: Path, lexical_text: LexicalText = plain_text) -> None:
        self.directory = directory
        self.lexical_text = lexical_text
        raise_open_file_limit()  # each slice read from a file keeps it open (lib.retrieval.file_columns)

    def path(self, key: str) -> Path:
        return self.directory / f"{hashlib.sha256(key.encode()).hexdigest()[:40]}.npz"

    def prune(self, keys: Collection[str]) -> int:
        """Delete the snapshots of every slice not in ``keys`` (a revision removed since, here or by another
        process) and the temporary files interrupted saves left; how many files went. A slice still served
        from a deleted file goes on reading it (its descriptor holds it)."""
        wanted = {self.path(key).name for key in keys}
        try:
            entries = list(self.directory.iterdir())
        except FileNotFoundError:
            return 0
        removed = 0
        for path in entries:
            try:
                leftover = path.suffix == ".tmp" and time.time() - path.stat().st_mtime > LEFTOVER_S
                if (path.suffix == ".npz" and path.name not in wanted) or leftover:
                    path.unlink()
                    removed += 1
            except FileNotFoundError:
                continue
        if removed:
            logger.info("index_snapshot.pruned directory=%s files=%d kept=%d", self.directory, removed, len(wanted))
        return removed

    def save(self, index: CorpusIndex) -> CorpusIndex | None:
        """Write ``index`` (its lexical twin built) whole, replacing the key's earlier snapshot, and return it as
        read back from the file (its exact vectors and texts left there); ``None`` when it cannot be written or
        read back, which is logged and loses nothing (the slice is read from the store next time)."""
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
            return None
        return self.load(index.key, index.stamp)

    def load(self, key: str, stamp: Stamp) -> CorpusIndex | None:
        """The slice ``key`` as saved under ``stamp``; ``None`` when there is none, it was saved under another
        stamp, or it cannot be read whole (or kept open: ``lib.retrieval.file_columns``)."""
        path = self.path(key)
        if not path.exists():
            return None
        try:
            file = OpenFile(path)
        except OSError as error:
            event = "too_many_open" if error.errno == errno.EMFILE else "unreadable"
            logger.warning("index_snapshot.%s key=%s open=%d error=%r", event, key, open_files(), error)
            return None
        try:
            with os.fdopen(os.dup(file.fd), "rb") as handle, np.load(handle, allow_pickle=False) as stored:
                header = json.loads(stored["header"].tobytes())
                if header.get("format") != FORMAT or header.get("key") != key or header.get("stamp") != _stamp(stamp):
                    return None
                return _index(key, stamp, header, stored, _offsets(handle), file, self.lexical_text)
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
        "error": index.vectors.error,
        "length": index.vectors.length,
    }
    terms = sorted(lexical.vocabulary, key=lexical.vocabulary.__getitem__)
    ids, id_ends = _strings(index.ids)
    texts, text_ends = _strings(index.texts)
    vocabulary, vocabulary_ends = _strings(terms)
    return {
        "header": np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
        "vectors": index.vectors.exact.matrix(),
        "codes": index.vectors.codes,
        "scales": index.vectors.scales,
        "norms": index.vectors.norms,
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


def _offsets(handle: BinaryIO) -> dict[str, tuple[int, np.dtype[Any], tuple[int, ...]]]:
    """Where each array's data starts in the file, with its dtype and shape, for those stored uncompressed in C
    order (``np.savez`` stores every one so)."""
    with zipfile.ZipFile(handle) as archive:
        members = archive.infolist()
    found = {}
    for member in members:
        if member.compress_type != zipfile.ZIP_STORED or not member.filename.endswith(".npy"):
            continue
        handle.seek(member.header_offset)
        local = handle.read(30)
        if local[:4] != b"PK\x03\x04":
            raise ValueError(f"a snapshot whose member {member.filename} has no local header")
        name, extra = struct.unpack("<HH", local[26:30])
        handle.seek(member.header_offset + 30 + name + extra)
        version = np.lib.format.read_magic(handle)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read_header(handle)
        if not fortran:
            found[member.filename.removesuffix(".npy")] = (handle.tell(), dtype, shape)
    return found


def _index(
    key: str,
    stamp: Stamp,
    header: dict[str, Any],
    stored: Any,
    offsets: dict[str, tuple[int, np.dtype[Any], tuple[int, ...]]],
    file: OpenFile,
    lexical_text: LexicalText,
) -> CorpusIndex:
    """The index a snapshot holds, checked to agree with itself (every part has the slice's row count), its exact
    vectors and texts left in ``file``."""
    ids = _unstrings(stored["ids"], stored["id_ends"])
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
    rows = len(ids)
    codes = stored["codes"]
    vectors_at, vectors_dtype, vectors_shape = offsets["vectors"]
    texts_at, texts_dtype, texts_shape = offsets["texts"]
    text_ends = stored["text_ends"]
    dims = codes.shape[0] if codes.ndim == 2 else -1
    if vectors_dtype != np.dtype("<f4") or vectors_shape != (rows, dims) or texts_dtype != np.dtype(np.uint8):
        raise ValueError("a snapshot whose vectors or texts are not stored as written")
    if vectors_at + rows * dims * 4 > file.size or texts_at + texts_shape[0] > file.size:
        raise ValueError("a snapshot shorter than its arrays")
    if len(text_ends) != rows or (rows and (int(text_ends[-1]) != texts_shape[0] or (np.diff(text_ends) < 0).any())):
        raise ValueError("a snapshot whose texts disagree with their ends")
    exact = FileRows(file, vectors_at, rows, dims)
    error, length = float(header["error"]), float(header["length"])
    vectors = QuantizedVectors(codes, stored["scales"], stored["norms"], error, length, exact)
    if not (len(metadatas) == lexical.rows == codes.shape[1] == len(vectors.scales) == len(vectors.norms) == rows):
        raise ValueError(f"a snapshot of {rows} ids whose parts disagree")
    if len(lexical.indptr) != len(terms) + 1 or int(lexical.indptr[-1]) != len(lexical.rows_of):
        raise ValueError("a snapshot whose postings disagree with their vocabulary")
    if len(lexical.rows_of) and int(lexical.rows_of.max()) >= rows:
        raise ValueError("a snapshot whose postings name rows it does not hold")
    file.prefetch(vectors_at, rows * dims * 4)
    file.prefetch(texts_at, texts_shape[0])
    texts = FileTexts(file, texts_at, text_ends)
    index = CorpusIndex(key, stamp, ids, vectors, texts, metadatas, lexical_text)
    index.__dict__["lexical"] = lexical  # the cached property, already built
    return index
