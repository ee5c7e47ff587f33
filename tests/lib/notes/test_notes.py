"""lib.notes over the session's real Redis, Chroma and model: ids, tags, the all-or-nothing ingestion, the
note rewrite's generations and a second replica's view. One knowledge base for the module (its own Redis
database and collection); each test works under a tag of its own."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from lib.errors import ExtractionFailedError, InvalidArgumentError, NotANoteError
from lib.kb import KnowledgeBase
from lib.notes.ingest import file_object_key, file_type, ingest_file, ingest_note, update_note
from lib.notes.search import search_notes
from lib.notes.stores import open_note_stores
from lib.stores.embeddings import Embedder
from tests.conftest import isolated_kb
from tests.fixtures_paths import IMAGE_ONLY_PDF

NOTES_DB = 13


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory, redis_url: str, chroma_dir: Path, embedder: Embedder) -> KnowledgeBase:
    url = f"{redis_url.rsplit('/', 1)[0]}/{NOTES_DB}"
    redis.Redis.from_url(url).flushdb()
    return isolated_kb(url, tmp_path_factory.mktemp("notes"), chroma_dir, embedder,
                       kb_collection=f"kb_docs_{uuid.uuid4().hex[:12]}", enable_ocr=False)  # fmt: skip


@pytest.fixture
def tag() -> Iterator[str]:
    yield f"t{uuid.uuid4().hex[:10]}"


def texts(kb: KnowledgeBase, query: str, tags: list[str], mode: str = "hybrid") -> list[str]:
    return [hit.text for hit in search_notes(kb, query, 10, tags, mode=mode).results]


def test_document_ids_are_consecutive_integers_from_redis(kb: KnowledgeBase, tag: str) -> None:
    first = ingest_note(kb, "First note about gardening.", [tag])
    second = ingest_note(kb, "Second note about gardening.", [tag])
    assert second.document_id == first.document_id + 1
    assert kb.notes.registry.require(first.document_id).tags == [tag]


def test_a_failed_file_ingestion_registers_nothing_and_leaves_no_chunks(kb: KnowledgeBase, tag: str) -> None:
    data = IMAGE_ONLY_PDF.read_bytes()
    key = file_object_key(data, file_type(data, "scan.pdf"), "scan.pdf")
    kb.objects.put_bytes(key, data)
    before = (kb.notes.registry.counts(), kb.notes.chunks.count())
    with pytest.raises(ExtractionFailedError):
        ingest_file(kb, key, "scan.pdf", [tag])
    assert (kb.notes.registry.counts(), kb.notes.chunks.count()) == before
    assert kb.notes.registry.tagged([tag]) == set()


def test_a_rewrite_that_fails_before_the_flip_keeps_the_old_text_and_drops_the_new_chunks(
    kb: KnowledgeBase, tag: str
) -> None:
    note = ingest_note(kb, "The office closes at five on Fridays.", [tag])

    def interrupted() -> None:
        assert texts(kb, "office closes Fridays", [tag]) == ["The office closes at five on Fridays."]
        raise RuntimeError("the process died before the flip")

    with pytest.raises(RuntimeError):
        update_note(kb, note.document_id, "The office closes at noon on Fridays.", before_flip=interrupted)
    assert texts(kb, "office closes Fridays", [tag]) == ["The office closes at five on Fridays."]
    assert kb.notes.chunks.ids({"document_id": note.document_id}) == kb.notes.chunks.ids(
        {"$and": [{"document_id": note.document_id}, {"generation": note.generation}]}
    )
    updated = update_note(kb, note.document_id, "The office closes at noon on Fridays.")
    assert updated.generation > note.generation and updated.updated_at > note.updated_at
    assert texts(kb, "office closes Fridays", [tag]) == ["The office closes at noon on Fridays."]


def test_only_notes_can_be_rewritten(kb: KnowledgeBase, tag: str) -> None:
    data = b"# Heading\n\nSome markdown about rivers.\n"
    key = file_object_key(data, file_type(data, "rivers.md"), "rivers.md")
    kb.objects.put_bytes(key, data)
    document = ingest_file(kb, key, "rivers.md", [tag])
    assert document.kind == "file" and key.endswith(".md")
    with pytest.raises(NotANoteError):
        update_note(kb, document.document_id, "new text")


def test_tags_filter_needs_every_tag_and_follows_changes_on_another_replica(kb: KnowledgeBase, tag: str) -> None:
    both = ingest_note(kb, "Quarterly budget review for the design team.", [tag, "collection:memory"])
    ingest_note(kb, "Quarterly budget review for the design team.", [tag, "collection:documents"])
    replica = KnowledgeBase(**{**kb.__dict__, "note_stores": open_note_stores(kb.settings)})
    for mode in ("dense", "lexical"):
        hits = search_notes(replica, "quarterly budget review", 10, [tag, "collection:memory"], mode=mode).results
        assert [h.document_id for h in hits] == [both.document_id]
    kb.notes.registry.change_tags(both.document_id, ["collection:memory"], add=False)
    assert search_notes(replica, "quarterly budget review", 10, [tag, "collection:memory"]).results == []
    late = ingest_note(kb, "Quarterly budget review, second edition.", [tag, "collection:memory"])
    hits = search_notes(replica, "quarterly budget review", 10, [tag, "collection:memory"], mode="lexical").results
    assert [h.document_id for h in hits] == [late.document_id]


def test_bad_arguments_are_refused_before_any_work(kb: KnowledgeBase) -> None:
    for call in (
        lambda: search_notes(kb, " ", 10),
        lambda: search_notes(kb, "x", 0),
        lambda: search_notes(kb, "x", 10, ["ok", ""]),
        lambda: search_notes(kb, "x", 10, mode="fuzzy"),
        lambda: ingest_note(kb, "   ", []),
        lambda: ingest_note(kb, "text", ["\x00"]),
    ):
        with pytest.raises(InvalidArgumentError):
            call()
