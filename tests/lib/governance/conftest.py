"""A governance index over the real fixture documents (tests/fixtures/governance), built once per session and
only read by the tests that share it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from lib.composition import Stores
from lib.governance.ingest import ingest_governance_corpus_files
from lib.governance.models import CorpusIngestReport
from lib.stores.embeddings import Embedder
from tests.conftest import isolated_stores

CORPUS = Path(__file__).parents[2] / "fixtures" / "governance"
PEPS = CORPUS / "peps"
MADR = CORPUS / "madr"
SEEDS = CORPUS / "seeds"


def stores_with_governance(redis_url: str, folder: Path, chroma_dir: Path, embedder: Embedder) -> Stores:
    """A knowledge base whose governance collection (and so its registry keys) is the test's own."""
    return isolated_stores(
        redis_url, folder, chroma_dir, embedder, governance_collection=f"gov_{uuid.uuid4().hex[:12]}"
    )


@pytest.fixture(scope="session")
def corpus_kb(
    redis_url: str, chroma_dir: Path, embedder: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Stores, CorpusIngestReport]]:
    stores = stores_with_governance(redis_url, tmp_path_factory.mktemp("governance"), chroma_dir, embedder)
    yield stores, ingest_governance_corpus_files(stores.governance, CORPUS)
