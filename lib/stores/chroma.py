"""ChromaDB: the client, and one collection of chunks with their embeddings, texts and metadata.

``ChunkCollection`` is the base of both chunk stores (``lib.policies.chunks.PolicyVectorStore`` and
``lib.documents.chunks.DocumentChunkStore``): writes in batches under Chroma's limit, reads paged, and
Chroma's own nearest-neighbour query. Each store adds its ids, metadata and where-clauses.

With a Chroma server (``CHROMA_HOST``) every call on the collection goes through ``Unreachable``'s guard: a
server that does not answer (stopped, restarting, network down) is ``StoreUnavailableError``, which the
MCP envelope and the REST API answer as ``store_unavailable`` and flows retry (its cause is transient).
``HttpClient`` opens a new connection on the next call, so nothing needs restarting once the server is back.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import chromadb
import httpx
import numpy as np
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection
from chromadb.api.types import Metadata

from lib.config import ChromaSettings
from lib.errors import StoreUnavailableError
from lib.observability import store_call

_PAGE = 5000
_UNREACHABLE = (httpx.TransportError, ConnectionError, TimeoutError)
"""What ``HttpClient`` raises when the server does not answer (connection refused or reset, timeouts)."""


def open_chroma(chroma: ChromaSettings) -> ClientAPI:
    """A Chroma server client when ``CHROMA_HOST`` is set, else the embedded persistent client."""
    chroma_settings = chromadb.Settings(anonymized_telemetry=False, allow_reset=False)
    if chroma.host:
        return chromadb.HttpClient(host=chroma.host, port=chroma.port, settings=chroma_settings)
    assert chroma.persist_dir is not None
    chroma.persist_dir.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(chroma.persist_dir), settings=chroma_settings)


def relevance(distance: float) -> float:
    """``max(0, 1 - d/2)`` of Chroma's squared L2 distance: the cosine similarity for unit vectors."""
    return max(0.0, 1.0 - distance / 2.0)


def where_in(field: str, values: Sequence[str]) -> dict[str, Any]:
    """The where-clause ``field`` is one of ``values`` (a plain equality for one value)."""
    if len(values) == 1:
        return {field: values[0]}
    return {field: {"$in": list(values)}}


def where_all(*clauses: dict[str, Any]) -> dict[str, Any]:
    """The where-clause every one of ``clauses`` holds (Chroma refuses an ``$and`` of one)."""
    return clauses[0] if len(clauses) == 1 else {"$and": list(clauses)}


def store_unavailable(exc: BaseException) -> StoreUnavailableError:
    return StoreUnavailableError(
        f"The Chroma server did not answer ({type(exc).__name__}); try again shortly", store="chroma"
    )


class Unreachable:
    """A Chroma ``Collection`` whose calls raise ``StoreUnavailableError`` (caused by the transport error)
    when the server does not answer; attributes that are not calls (``name``, ``metadata``) pass through."""

    def __init__(self, collection: Collection) -> None:
        self._collection = collection

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._collection, name)
        if not callable(value):
            return value
        return _guarded(value)


def _guarded(call: Callable[..., Any]) -> Callable[..., Any]:
    operation = getattr(call, "__name__", "call")

    @functools.wraps(call)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        with store_call("chroma", operation):
            try:
                return call(*args, **kwargs)
            except _UNREACHABLE as exc:
                raise store_unavailable(exc) from exc

    return guarded


@dataclass(frozen=True)
class StoredChunk:
    """A chunk as read from the store or a held slice; ``metadata`` is read-only (a held slice's is decoded as
    it is read: ``lib.retrieval.metadata_table.RowMetadata``)."""

    id: str
    text: str
    metadata: Mapping[str, Any]
    distance: float | None = None


class ChunkCollection:
    """One Chroma collection of chunks: batched writes, paged reads. Shared by policy and document chunks.

    Chroma clients are thread-safe; one instance per process and collection.
    """

    def __init__(self, client: ClientAPI, collection_name: str) -> None:
        self._client = client
        try:
            collection = client.get_or_create_collection(
                collection_name, embedding_function=None, metadata={"hnsw:space": "l2"}
            )
            self.max_batch = client.get_max_batch_size()
        except _UNREACHABLE as exc:
            raise store_unavailable(exc) from exc
        self.collection = cast(Collection, Unreachable(collection))

    def upsert(
        self,
        ids: Sequence[str],
        texts: Sequence[str],
        embeddings: Sequence[Sequence[float]],
        metadatas: Sequence[Metadata],
    ) -> None:
        """Upsert in batches under Chroma's limit (5,461 locally)."""
        for start in range(0, len(ids), self.max_batch):
            end = start + self.max_batch
            self.collection.upsert(
                ids=list(ids[start:end]),
                documents=list(texts[start:end]),
                embeddings=np.asarray(embeddings[start:end], dtype=np.float32),
                metadatas=list(metadatas[start:end]),
            )

    def delete_ids(self, ids: Sequence[str]) -> int:
        for start in range(0, len(ids), self.max_batch):
            self.collection.delete(ids=list(ids[start : start + self.max_batch]))
        return len(ids)

    def count(self) -> int:
        return self.collection.count()

    def query(
        self, embedding: Sequence[float] | np.ndarray, n_results: int, where: dict[str, Any] | None
    ) -> list[StoredChunk]:
        """Chroma's own (HNSW, where-filtered) nearest-neighbour query."""
        result = self.collection.query(
            query_embeddings=[np.asarray(embedding, dtype=np.float32).tolist()],
            n_results=n_results,
            where=where,
            include=["documents", "metadatas", "distances"],
        )
        return [
            StoredChunk(id=i, text=t or "", metadata=dict(m or {}), distance=d)
            for i, t, m, d in zip(
                result["ids"][0],
                (result["documents"] or [[]])[0],
                (result["metadatas"] or [[]])[0],
                (result["distances"] or [[]])[0],
                strict=True,
            )
        ]

    def iter_metadata(self, where: dict[str, Any] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every (id, metadata) matching ``where``, paged: for deletes and audits over the whole collection."""
        offset = 0
        while True:
            page = self.collection.get(where=where, include=["metadatas"], limit=_PAGE, offset=offset)
            for cid, meta in zip(page["ids"], page["metadatas"] or [], strict=True):
                yield cid, dict(meta or {})
            if len(page["ids"]) < _PAGE:
                return
            offset += _PAGE

    def ids(self, where: dict[str, Any]) -> list[str]:
        ids: list[str] = []
        offset = 0
        while True:
            page = self.collection.get(where=where, include=[], limit=_PAGE, offset=offset)
            ids.extend(page["ids"])
            if len(page["ids"]) < _PAGE:
                return ids
            offset += _PAGE

    def chunks(self, where: dict[str, Any]) -> list[StoredChunk]:
        """Every chunk matching ``where`` with its text, in ``chunk_index`` (document) order."""
        chunks: list[StoredChunk] = []
        offset = 0
        while True:
            page = self.collection.get(where=where, include=["documents", "metadatas"], limit=_PAGE, offset=offset)
            for cid, text, meta in zip(page["ids"], page["documents"] or [], page["metadatas"] or [], strict=True):
                chunks.append(StoredChunk(id=cid, text=text or "", metadata=dict(meta or {})))
            if len(page["ids"]) < _PAGE:
                break
            offset += _PAGE
        return sorted(chunks, key=lambda c: int(c.metadata.get("chunk_index", 0)))
