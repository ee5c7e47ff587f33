"""The int8 encoder on the real model, and the encoder each collection records (real Chroma on disk)."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest
from chromadb.api.types import Metadata

from lib.composition import open_stores
from lib.config import Settings
from lib.errors import EncoderMismatchError
from lib.policies.stores import open_policy_stores
from lib.stores.chroma import ChunkCollection, open_chroma
from lib.stores.embeddings import Embedder
from lib.stores.encoders import ENCODERS, bind_encoder, recorded_encoder, reencode_collection
from lib.stores.onnx_encoder import int8_file_name, onnx_file_name

ROOT = Path(__file__).resolve().parents[3]

TEXTS = [
    "cycle parking",
    "When should development be refused on highways grounds?",
    "Planning policies and decisions should promote an effective use of land in meeting the need for homes "
    "and other uses, while safeguarding and improving the environment and ensuring safe and healthy living "
    "conditions. Strategic policies should set out a clear strategy for accommodating objectively assessed needs.",
    "Para 116",
]


_MAKE_INT8 = "import logging, sys; from pathlib import Path; from lib.stores.onnx_encoder import load_int8_encoder; "
_MAKE_INT8 += "logging.basicConfig(level=logging.INFO); load_int8_encoder(Path(sys.argv[1]))"


@pytest.fixture(scope="module")
def made_at_once(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[subprocess.CompletedProcess[str]]]:
    """An empty model cache filled by two processes started at once, as two services starting together."""
    folder = tmp_path_factory.mktemp("models")
    starts = [
        subprocess.Popen(
            [sys.executable, "-c", _MAKE_INT8, str(folder)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    done = []
    for proc in starts:
        out, err = proc.communicate(timeout=900)
        done.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return folder, done


@pytest.fixture(scope="module")
def int8(made_at_once: tuple[Path, list[subprocess.CompletedProcess[str]]]) -> Embedder:
    """The int8 encoder from the model cache the two processes made."""
    return Embedder(encoder="int8", int8_dir=made_at_once[0], workers=2)


@pytest.fixture(scope="module")
def torch_embedder() -> Embedder:
    return Embedder(encoder="torch")


def collection(settings: Settings) -> ChunkCollection:
    return ChunkCollection(open_chroma(settings.chroma), f"enc_{uuid.uuid4().hex[:12]}")


def test_processes_starting_at_once_make_the_model_files_once_and_both_use_them(
    made_at_once: tuple[Path, list[subprocess.CompletedProcess[str]]],
) -> None:
    folder, done = made_at_once
    assert [p.returncode for p in done] == [0, 0], [p.stderr[-800:] for p in done]
    assert sum(p.stderr.count("embeddings.int8_quantised") for p in done) == 1
    assert sorted(p.name for p in folder.iterdir() if not p.name.endswith(".lock")) == sorted(
        [onnx_file_name(), int8_file_name()]
    ), "nothing half-written is left beside the two files"


def test_the_model_files_are_named_for_the_versions_that_made_them() -> None:
    assert onnx_file_name().startswith("all-MiniLM-L6-v2-") and int8_file_name().startswith("all-MiniLM-L6-v2-int8-")
    assert onnx_file_name() != int8_file_name()


def test_int8_vectors_are_unit_length_and_close_to_torchs(int8: Embedder, torch_embedder: Embedder) -> None:
    quantised = np.asarray(int8.embed_batch(TEXTS))
    reference = np.asarray(torch_embedder.embed_batch(TEXTS))
    assert quantised.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(quantised, axis=1), 1.0, atol=1e-5)
    assert (quantised * reference).sum(axis=1).min() > 0.97
    assert not np.allclose(quantised, reference, atol=1e-3), "the int8 path should really be quantised"
    assert int8.int8_dir is not None and (int8.int8_dir / int8_file_name()).is_file()


def test_an_int8_vector_is_the_same_alone_and_inside_a_padded_batch(int8: Embedder) -> None:
    alone = np.vstack([np.asarray(int8.embed_batch([t])) for t in TEXTS])
    batch = np.asarray(int8.embed_batch(TEXTS + TEXTS[::-1]))
    assert np.abs(batch[: len(TEXTS)] - alone).max() <= 1e-6
    assert np.abs(batch[len(TEXTS) :][::-1] - alone).max() <= 1e-6


def test_int8_queries_are_embedded_like_int8_documents(int8: Embedder) -> None:
    queries = int8.embed_queries(TEXTS)
    assert np.abs(queries - np.asarray(int8.embed_batch(TEXTS), dtype=np.float32)).max() <= 1e-6


def test_int8_related_texts_are_closer_than_unrelated_ones(int8: Embedder) -> None:
    query, near, far = np.asarray(
        int8.embed_batch(
            [
                "refusing development on highway safety grounds",
                "Development should only be refused on highways grounds if there would be an unacceptable impact "
                "on highway safety",
                "The glossary defines ancient woodland as an area wooded continuously since 1600",
            ]
        )
    )
    assert query @ near > query @ far + 0.2


def test_int8_without_a_folder_is_refused() -> None:
    with pytest.raises(ValueError, match="int8_dir"):
        Embedder(encoder="int8")


def test_a_new_collection_records_the_configured_encoder(settings: Settings) -> None:
    chunks = collection(settings)
    assert recorded_encoder(chunks) is None
    assert bind_encoder(chunks, "int8") == "minilm-l6-v2/int8"
    reopened = ChunkCollection(open_chroma(settings.chroma), chunks.collection.name)
    assert reopened.collection.metadata["encoder"] == "minilm-l6-v2/int8"
    assert bind_encoder(reopened, "int8") == "minilm-l6-v2/int8"


def test_opening_a_collection_with_another_encoder_is_refused(settings: Settings, torch_embedder: Embedder) -> None:
    chunks = collection(settings)
    bind_encoder(chunks, "torch")
    chunks.upsert(["a"], ["cycle parking"], torch_embedder.embed_batch(["cycle parking"]), [{"chunk_index": 0}])
    with pytest.raises(EncoderMismatchError, match="minilm-l6-v2/torch") as refused:
        bind_encoder(ChunkCollection(open_chroma(settings.chroma), chunks.collection.name), "int8")
    assert refused.value.error_type == "encoder_mismatch"


def test_a_collection_from_before_encoders_were_recorded_holds_torch_vectors(
    settings: Settings, torch_embedder: Embedder
) -> None:
    chunks = collection(settings)
    chunks.upsert(["a"], ["cycle parking"], torch_embedder.embed_batch(["cycle parking"]), [{"chunk_index": 0}])
    assert recorded_encoder(chunks) == "minilm-l6-v2/torch"
    with pytest.raises(EncoderMismatchError):
        bind_encoder(chunks, "int8")
    assert bind_encoder(chunks, "torch") == "minilm-l6-v2/torch"
    assert chunks.collection.metadata["encoder"] == "minilm-l6-v2/torch"


def test_reencoding_replaces_every_vector_keeps_texts_and_metadata_and_records_the_encoder(
    settings: Settings, torch_embedder: Embedder, int8: Embedder
) -> None:
    chunks = collection(settings)
    bind_encoder(chunks, "torch")
    ids = [f"c{i}" for i in range(len(TEXTS))]
    metadatas: list[Metadata] = [{"chunk_index": i, "revision_ref": "NPPF/rev_a"} for i in range(len(TEXTS))]
    chunks.upsert(ids, TEXTS, torch_embedder.embed_batch(TEXTS), metadatas)
    seen: list[tuple[int, int]] = []
    assert reencode_collection(chunks, "int8", int8.embed_batch, lambda done, total: seen.append((done, total))) == 4
    assert seen[-1] == (4, 4)
    stored = chunks.collection.get(ids=ids, include=["embeddings", "documents", "metadatas"])
    order = [stored["ids"].index(i) for i in ids]
    documents, stored_metadatas = stored["documents"] or [], stored["metadatas"] or []
    assert [documents[k] for k in order] == TEXTS
    assert [stored_metadatas[k] for k in order] == metadatas
    vectors = np.asarray(stored["embeddings"])[order]
    assert np.abs(vectors - np.asarray(int8.embed_batch(TEXTS))).max() <= 1e-6
    assert bind_encoder(chunks, "int8") == "minilm-l6-v2/int8"
    with pytest.raises(EncoderMismatchError):
        bind_encoder(chunks, "torch")


def test_an_interrupted_switch_is_refused_by_both_encoders_until_finished(
    settings: Settings, torch_embedder: Embedder, int8: Embedder
) -> None:
    chunks = collection(settings)
    chunks.upsert(["a"], ["cycle parking"], torch_embedder.embed_batch(["cycle parking"]), [{"chunk_index": 0}])

    def crash(texts: list[str]) -> list[list[float]]:
        raise RuntimeError("the worker died")

    with pytest.raises(RuntimeError):
        reencode_collection(chunks, "int8", crash)
    for name in ENCODERS:
        with pytest.raises(EncoderMismatchError, match="->"):
            bind_encoder(chunks, name)
    reencode_collection(chunks, "int8", int8.embed_batch)
    assert bind_encoder(chunks, "int8") == "minilm-l6-v2/int8"


def test_open_stores_embeds_with_int8_from_the_machine_model_cache_by_default(settings: Settings) -> None:
    stores = open_stores(settings)
    assert (stores.embedder.encoder_id, stores.embedder.int8_dir) == (
        "minilm-l6-v2/int8",
        settings.embeddings.model_cache_dir,
    )
    assert stores.policies.vectors.collection.metadata["encoder"] == "minilm-l6-v2/int8"
    assert stores.documents.chunks.collection.metadata["encoder"] == "minilm-l6-v2/int8"
    stores.policies.vectors.upsert(
        ["a"], ["cycle parking"], stores.embedder.embed_batch(["cycle parking"]), [{"chunk_index": 0}]
    )
    with pytest.raises(EncoderMismatchError):
        open_policy_stores(settings.replace(embedding_encoder="torch"))


def test_a_data_dir_made_under_torch_is_refused_by_the_int8_default_saying_how_to_go_on(
    settings: Settings, torch_embedder: Embedder
) -> None:
    torch_settings = settings.replace(embedding_encoder="torch")
    stores = open_stores(torch_settings)
    assert stores.embedder.encoder_id == "minilm-l6-v2/torch"
    stores.policies.vectors.upsert(
        ["a"], ["cycle parking"], torch_embedder.embed_batch(["cycle parking"]), [{"chunk_index": 0}]
    )
    with pytest.raises(EncoderMismatchError) as refused:
        open_policy_stores(settings)
    assert "EMBEDDING_ENCODER=torch" in refused.value.message and "reencode_collections" in refused.value.message
    assert open_stores(torch_settings).embedder.encoder == "torch"
