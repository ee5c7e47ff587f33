"""lib.notes over the session's real Redis, Chroma and model: ids, tags, the all-or-nothing ingestion, the
note rewrite's generations and a second replica's view. One knowledge base for the module (its own Redis
database and collection); each test works under a tag of its own."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from lib.composition import Stores
from lib.errors import ExtractionFailedError, InvalidArgumentError, NotANoteError
from lib.notes.ingest import file_object_key, file_type, ingest_file, ingest_note, update_note
from lib.notes.search import search_notes
from lib.notes.stores import NoteStores, open_note_stores
from lib.stores.embeddings import Embedder
from tests.conftest import isolated_stores
from tests.fixtures_paths import IMAGE_ONLY_PDF

NOTES_DB = 13


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory, redis_url: str, chroma_dir: Path, embedder: Embedder) -> Stores:
    url = f"{redis_url.rsplit('/', 1)[0]}/{NOTES_DB}"
    redis.Redis.from_url(url).flushdb()
    return isolated_stores(
        url,
        tmp_path_factory.mktemp("notes"),
        chroma_dir,
        embedder,
        kb_collection=f"kb_docs_{uuid.uuid4().hex[:12]}",
        enable_ocr=False,
    )


@pytest.fixture
def tag() -> Iterator[str]:
    yield f"t{uuid.uuid4().hex[:10]}"


def texts(stores: Stores, query: str, tags: list[str], mode: str = "hybrid") -> list[str]:
    return [hit.text for hit in search_notes(stores.notes, query, 10, tags, mode=mode).results]


def test_document_ids_are_consecutive_integers_from_redis(stores: Stores, tag: str) -> None:
    first = ingest_note(stores.notes, "First note about gardening.", [tag])
    second = ingest_note(stores.notes, "Second note about gardening.", [tag])
    assert second.document_id == first.document_id + 1
    assert stores.notes.registry.require(first.document_id).tags == [tag]


def test_a_failed_file_ingestion_registers_nothing_and_leaves_no_chunks(stores: Stores, tag: str) -> None:
    data = IMAGE_ONLY_PDF.read_bytes()
    key = file_object_key(data, file_type(data, "scan.pdf"), "scan.pdf")
    stores.objects.put_bytes(key, data)
    before = (stores.notes.registry.counts(), stores.notes.chunks.count())
    with pytest.raises(ExtractionFailedError):
        ingest_file(stores.notes, key, "scan.pdf", [tag])
    assert (stores.notes.registry.counts(), stores.notes.chunks.count()) == before
    assert stores.notes.registry.tagged([tag]) == set()


def test_a_rewrite_that_fails_before_the_flip_keeps_the_old_text_and_drops_the_new_chunks(
    stores: Stores, tag: str
) -> None:
    note = ingest_note(stores.notes, "The office closes at five on Fridays.", [tag])

    def interrupted() -> None:
        assert texts(stores, "office closes Fridays", [tag]) == ["The office closes at five on Fridays."]
        raise RuntimeError("the process died before the flip")

    with pytest.raises(RuntimeError):
        update_note(stores.notes, note.document_id, "The office closes at noon on Fridays.", before_flip=interrupted)
    assert texts(stores, "office closes Fridays", [tag]) == ["The office closes at five on Fridays."]
    assert stores.notes.chunks.ids({"document_id": note.document_id}) == stores.notes.chunks.ids(
        {"$and": [{"document_id": note.document_id}, {"generation": note.generation}]}
    )
    updated = update_note(stores.notes, note.document_id, "The office closes at noon on Fridays.")
    assert updated.generation > note.generation and updated.updated_at > note.updated_at
    assert texts(stores, "office closes Fridays", [tag]) == ["The office closes at noon on Fridays."]


def test_only_notes_can_be_rewritten(stores: Stores, tag: str) -> None:
    data = b"# Heading\n\nSome markdown about rivers.\n"
    key = file_object_key(data, file_type(data, "rivers.md"), "rivers.md")
    stores.objects.put_bytes(key, data)
    document = ingest_file(stores.notes, key, "rivers.md", [tag])
    assert document.kind == "file" and key.endswith(".md")
    with pytest.raises(NotANoteError):
        update_note(stores.notes, document.document_id, "new text")


def test_tags_filter_needs_every_tag_and_follows_changes_on_another_replica(stores: Stores, tag: str) -> None:
    both = ingest_note(stores.notes, "Quarterly budget review for the design team.", [tag, "collection:memory"])
    ingest_note(stores.notes, "Quarterly budget review for the design team.", [tag, "collection:documents"])
    replica = open_note_stores(stores.settings, objects=stores.objects, embedder=stores.embedder)
    for mode in ("dense", "lexical"):
        hits = search_notes(replica, "quarterly budget review", 10, [tag, "collection:memory"], mode=mode).results
        assert [h.document_id for h in hits] == [both.document_id]
    stores.notes.registry.change_tags(both.document_id, ["collection:memory"], add=False)
    assert search_notes(replica, "quarterly budget review", 10, [tag, "collection:memory"]).results == []
    late = ingest_note(stores.notes, "Quarterly budget review, second edition.", [tag, "collection:memory"])
    hits = search_notes(replica, "quarterly budget review", 10, [tag, "collection:memory"], mode="lexical").results
    assert [h.document_id for h in hits] == [late.document_id]


def test_a_note_rewritten_through_one_replica_is_searched_in_its_new_text_by_both_at_once(
    stores: Stores, tag: str
) -> None:
    """Issue 23: both replicas hold the note's old text in their index; after ``update_note`` answers through
    one, neither answers with the old text in any mode, nor finds the note by a word only the old text had."""
    note = ingest_note(stores.notes, "Bins are collected on Tuesdays from the kerbside.", [tag])
    replica = open_note_stores(stores.settings, objects=stores.objects, embedder=stores.embedder)

    def found(notes: NoteStores, query: str, mode: str = "hybrid") -> list[str]:
        return [hit.text for hit in search_notes(notes, query, 10, [tag], mode=mode).results]

    for notes in (stores.notes, replica):
        assert found(notes, "when are bins collected") == ["Bins are collected on Tuesdays from the kerbside."]
    update_note(stores.notes, note.document_id, "Bins are collected on Thursdays from the back lane.")
    for notes, mode in itertools.product((stores.notes, replica), ("hybrid", "dense", "lexical")):
        assert found(notes, "when are bins collected", mode) == ["Bins are collected on Thursdays from the back lane."]
        assert found(notes, "Tuesdays kerbside", "lexical") == []


def test_bad_arguments_are_refused_before_any_work(stores: Stores) -> None:
    for call in (
        lambda: search_notes(stores.notes, " ", 10),
        lambda: search_notes(stores.notes, "x", 0),
        lambda: search_notes(stores.notes, "x", 10, ["ok", ""]),
        lambda: search_notes(stores.notes, "x", 10, mode="fuzzy"),
        lambda: ingest_note(stores.notes, "   ", []),
        lambda: ingest_note(stores.notes, "text", ["\x00"]),
    ):
        with pytest.raises(InvalidArgumentError):
            call()
