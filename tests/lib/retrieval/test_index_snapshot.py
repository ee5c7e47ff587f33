"""Index snapshots: a slice read back from disk is the slice that was saved (rows, vectors, metadata of every
type, the lexical twin), only under the stamp it was saved with; a file that cannot be trusted is ignored; and a
loader that reads one serves it at once and checks it against the store in the background."""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from lib.retrieval import file_columns
from lib.retrieval.corpus_index import CorpusIndex, Stamp
from lib.retrieval.file_columns import FileRows, FileTexts
from lib.retrieval.index_cache import IndexCache
from lib.retrieval.index_loader import IndexLoader
from lib.retrieval.index_snapshot import LEFTOVER_S, IndexSnapshots
from lib.retrieval.slice_search import exact_hits, lexical_hits
from tests.polling import eventually

STAMP: Stamp = (3, "2024-12-12T00:00:00", 7)
TEXTS = ["Flood risk on highways — see Para 116.", "Green belt boundaries (Policy GB1).", "", "Café parking ½ space"]
METADATAS = [
    {"section_ref": "Para 116", "page_number": 12, "score": 1.0, "exact": True, "cites": ["NPPF|Para 11"]},
    {"page_number": 12, "section_ref": "Policy GB1", "score": -0.0, "exact": False, "cites": []},
    {"section_ref": "Page 3", "supports": None, "score": 1e-300},
    {"section_ref": "Para 7", "page_number": 2**40, "score": float("inf"), "k": "1"},
]


def heading_text(metadata: dict[str, object], text: str) -> str:
    return f"{metadata.get('section_ref', '')} {text}"


def saved_index(key: str = "LP:rev", stamp: Stamp = STAMP) -> CorpusIndex:
    vectors = np.random.default_rng(3).normal(size=(len(TEXTS), 384)).astype(np.float32)
    ids = [f"{key}-{i}" for i in range(len(TEXTS))]
    return CorpusIndex.from_embeddings(key, stamp, ids, vectors, TEXTS, METADATAS, heading_text)  # type: ignore[arg-type]


def test_a_slice_read_back_is_the_slice_saved(tmp_path: Path) -> None:
    snapshots = IndexSnapshots(tmp_path, heading_text)  # type: ignore[arg-type]
    saved = saved_index()
    snapshots.save(saved)
    loaded = snapshots.load(saved.key, STAMP)

    assert loaded is not None and loaded.serial != saved.serial and loaded.stamp == STAMP
    assert loaded.ids == saved.ids and loaded.texts == saved.texts
    assert [repr(dict(m)) for m in loaded.metadatas] == [repr(dict(m)) for m in saved.metadatas]
    assert np.array_equal(loaded.vectors.codes, saved.vectors.codes) and loaded.digest == saved.digest
    assert np.array_equal(loaded.vectors.exact.matrix(), saved.vectors.exact.matrix())
    assert "lexical" in vars(loaded), "the lexical twin comes with it: nothing tokenised again"
    for name in ("indptr", "rows_of", "counts", "lengths", "doc_freqs"):
        assert np.array_equal(getattr(loaded.lexical, name), getattr(saved.lexical, name)), name
    assert loaded.lexical.vocabulary == saved.lexical.vocabulary
    assert loaded.indexed_texts() == saved.indexed_texts(), "its lexical text is the collection's own"
    query = saved.embedding(1) + np.float32(0.01)
    assert exact_hits(query, 3, [loaded]).tolist() == exact_hits(query, 3, [saved]).tolist()
    assert lexical_hits("policy gb1 green", 3, [loaded]).hits.tolist() == (
        lexical_hits("policy gb1 green", 3, [saved]).hits.tolist()
    )


def test_a_slice_read_back_leaves_its_exact_vectors_and_texts_in_the_file(tmp_path: Path) -> None:
    """Only the codes, bounds, ids, metadata and postings are held; a text or an exact row is read when asked."""
    snapshots = IndexSnapshots(tmp_path)
    saved = saved_index()
    loaded = snapshots.save(saved)
    assert loaded is not None and isinstance(loaded.texts, FileTexts) and isinstance(loaded.vectors.exact, FileRows)
    assert loaded.nbytes < saved.nbytes - loaded.vectors.exact.count * 384 * 4
    assert loaded.texts[3] == loaded.texts[-1] == "Café parking ½ space" and loaded.texts[2] == ""
    assert loaded.texts[1:3] == TEXTS[1:3] and list(loaded.texts) == TEXTS and len(loaded.texts) == 4
    with pytest.raises(IndexError):
        loaded.texts[4]
    assert np.array_equal(loaded.embedding(2), saved.embedding(2))
    assert loaded.chunk(3).text == TEXTS[3]


def test_a_held_slice_reads_its_own_file_when_another_snapshot_replaces_it_or_it_is_deleted(tmp_path: Path) -> None:
    snapshots = IndexSnapshots(tmp_path)
    held = snapshots.save(saved_index())
    newer = (4, "2025-01-01T00:00:00", 8)
    other = CorpusIndex.from_embeddings(
        "LP:rev", newer, ["n-0"], np.ones((1, 384), np.float32), ["another revision"], [{"section_ref": "Para 1"}]
    )
    assert snapshots.save(other) is not None
    assert held is not None and list(held.texts) == TEXTS
    assert np.array_equal(held.embedding(1), saved_index().embedding(1))
    snapshots.path("LP:rev").unlink()
    assert held.texts[0] == TEXTS[0] and exact_hits(held.embedding(0), 1, [held])["row"].tolist() == [0]


def test_a_snapshot_is_read_only_under_its_own_stamp_and_a_new_save_replaces_it(tmp_path: Path) -> None:
    snapshots = IndexSnapshots(tmp_path)
    snapshots.save(saved_index())
    assert snapshots.load("LP:rev", (3, "2024-12-12T00:00:00", 8)) is None, "a write moved the stamp since"
    assert snapshots.load("LP:other", STAMP) is None
    newer = (4, "2025-01-01T00:00:00", 8)
    snapshots.save(saved_index(stamp=newer))
    assert snapshots.load("LP:rev", STAMP) is None
    assert (loaded := snapshots.load("LP:rev", newer)) is not None and loaded.stamp == newer
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".npz"], "one file per slice, no temporary left"


@pytest.mark.parametrize(
    "damage",
    ["truncated", "garbage", "parts_disagree", "rows_out_of_range", "empty", "vectors_short", "compressed"],
)
def test_a_snapshot_that_cannot_be_trusted_is_ignored_and_logged(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    snapshots = IndexSnapshots(tmp_path)
    snapshots.save(saved_index())
    path = snapshots.path("LP:rev")
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage == "garbage":
        path.write_bytes(b"\x00" * 4096)
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        with np.load(path, allow_pickle=False) as stored:
            arrays = {name: stored[name] for name in stored.files}
        if damage == "parts_disagree":
            arrays["text_ends"] = arrays["text_ends"][:-1]
        elif damage == "vectors_short":
            arrays["vectors"] = arrays["vectors"][:-1]
        elif damage == "rows_out_of_range":
            arrays["rows_of"] = arrays["rows_of"] + 10
        (np.savez_compressed if damage == "compressed" else np.savez)(path, allow_pickle=False, **arrays)

    with caplog.at_level(logging.WARNING):
        assert snapshots.load("LP:rev", STAMP) is None
    assert "index_snapshot.unreadable" in caplog.text


def test_prune_deletes_the_snapshots_of_other_keys_and_old_leftovers_only(tmp_path: Path) -> None:
    snapshots = IndexSnapshots(tmp_path)
    assert snapshots.prune(["LP:a"]) == 0, "no directory yet"
    held = {key: snapshots.save(saved_index(key)) for key in ("LP:a", "LP:b", "LP:c")}
    old, fresh = tmp_path / "old.tmp", tmp_path / "fresh.tmp"
    old.write_bytes(b"interrupted")
    fresh.write_bytes(b"being written")
    os.utime(old, (time.time() - LEFTOVER_S - 60,) * 2)
    assert snapshots.prune(["LP:a", "LP:gone"]) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([snapshots.path("LP:a").name, "fresh.tmp"])
    assert snapshots.load("LP:a", STAMP) is not None and snapshots.load("LP:b", STAMP) is None
    served = held["LP:b"]
    assert served is not None and list(served.texts) == TEXTS, "a slice still served reads its deleted file"


def test_past_its_share_of_descriptors_a_slice_is_held_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Snapshot files may take only ``OPEN_SHARE`` of the process's descriptors; past it a slice loaded from the
    store is served from memory (and a snapshot is not read), so sockets never run out."""
    monkeypatch.setattr(file_columns, "OPEN_SHARE", 0.0)
    store = Store()
    loader = IndexLoader(IndexCache(), store.load, verify=store.verify, snapshots=IndexSnapshots(tmp_path))
    with caplog.at_level(logging.WARNING):
        served = loader.get("LP:rev", STAMP)
    assert served is not None and isinstance(served.texts, list) and served.texts[0] == TEXTS[0]
    assert snapshots_on_disk(tmp_path) == 1 and "index_snapshot.too_many_open" in caplog.text
    monkeypatch.setattr(file_columns, "OPEN_SHARE", 0.5)
    assert IndexSnapshots(tmp_path).load("LP:rev", STAMP) is not None


def snapshots_on_disk(directory: Path) -> int:
    return len(list(directory.glob("*.npz")))


def test_a_snapshot_that_cannot_be_written_is_logged_and_loses_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "taken").write_text("a file where the directory should be")
    snapshots = IndexSnapshots(tmp_path / "taken" / "snapshots")
    with caplog.at_level(logging.WARNING):
        snapshots.save(saved_index())
    assert "index_snapshot.save_failed" in caplog.text and snapshots.load("LP:rev", STAMP) is None


class Store:
    """Slices of the fixed rows; ``text`` changes what the store holds behind the pipeline's back."""

    def __init__(self) -> None:
        self.loads = 0
        self.checks = 0
        self.text = TEXTS[0]
        self.gate = threading.Event()
        """Checks wait for it, so a test sees what was served before any check ran."""
        self.gate.set()

    def load(self, key: str, stamp: Stamp) -> CorpusIndex:
        self.loads += 1
        index = saved_index(key, stamp)
        return CorpusIndex(key, stamp, index.ids, index.vectors, [self.text, *TEXTS[1:]], index.metadatas)

    def verify(self, index: CorpusIndex) -> bool:
        self.gate.wait(30)
        self.checks += 1
        return index.texts[0] == self.text


def test_a_replica_starting_again_reads_its_slices_from_snapshots_and_checks_them_in_the_background(
    tmp_path: Path,
) -> None:
    store = Store()
    first = IndexLoader(IndexCache(), store.load, verify=store.verify, snapshots=IndexSnapshots(tmp_path))
    loaded = first.get("LP:rev", STAMP)
    assert loaded is not None and store.loads == 1, "loaded from the store, and saved"
    assert isinstance(loaded.texts, FileTexts), "served as read back from its file"

    store.text = "rewritten behind the pipeline while the replica was down"
    store.gate.clear()
    again = IndexLoader(IndexCache(), store.load, verify=store.verify, snapshots=IndexSnapshots(tmp_path))
    served = again.get("LP:rev", STAMP)
    assert served is not None and served.texts[0] == TEXTS[0] and store.loads == 1, "read from the snapshot"
    assert list(again._due) == ["LP:rev"], "queued for a check at once"
    store.gate.set()
    eventually(lambda: store.checks == 1 and not again._due)
    eventually(lambda: (held := again.get("LP:rev", STAMP)) is not None and held.texts[0] == store.text)
    assert store.loads == 2, "the check found the change: loaded from the store"
    assert served.texts[0] == TEXTS[0], "a slice still held reads its own file, not the snapshot saved over it"

    third = IndexLoader(IndexCache(), store.load, verify=store.verify, snapshots=IndexSnapshots(tmp_path))
    reread = third.get("LP:rev", STAMP)
    assert reread is not None and reread.texts[0] == store.text and store.loads == 2, "the reload was saved"
    assert third.get("LP:rev", (4, "2025-01-01T00:00:00", 8)) is not None and store.loads == 3, "a new stamp"
