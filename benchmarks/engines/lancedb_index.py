"""The policy corpus in LanceDB, as the product would hold it if LanceDB replaced our own index: one table of
chunks (id, source, text, the text BM25 reads, the vector, the dates the chunk's revision is in force), a full-text
index on the lexical text, B-tree indexes on the dates, optionally a vector index, and one dated hybrid search.

This module is the code of ours the engine needs (issue 47 item 3), counted in decision 0050; the measuring is in
``benchmarks/engines/measure.py``. It runs in the engines' own environment (``benchmarks/engines/requirements.txt``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
from lancedb.index import FTS, BTree, HnswSq
from lancedb.rerankers import RRFReranker

TABLE = "chunks"
DIMENSIONS = 384


def schema(dimensions: int = DIMENSIONS) -> pa.Schema:
    return pa.schema(
        [
            pa.field("id", pa.string()),
            pa.field("source", pa.string()),
            pa.field("text", pa.string()),
            pa.field("lexical", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dimensions)),
            pa.field("effective_from", pa.date32()),
            pa.field("effective_to", pa.date32(), nullable=True),
        ]
    )


def batch(
    ids: list[str],
    sources: list[str],
    texts: list[str],
    lexical: list[str],
    vectors: np.ndarray,
    effective_from: list[date],
    effective_to: list[date | None],
) -> pa.RecordBatch:
    """One batch of chunks in the table's schema."""
    flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).ravel())
    columns = [
        pa.array(ids),
        pa.array(sources),
        pa.array(texts),
        pa.array(lexical),
        pa.FixedSizeListArray.from_arrays(flat, vectors.shape[1]),
        pa.array(effective_from, pa.date32()),
        pa.array(effective_to, pa.date32()),
    ]
    return pa.RecordBatch.from_arrays(columns, schema=schema(vectors.shape[1]))


def create(path: Path, batches: Iterable[pa.RecordBatch], *, vector_index: bool) -> lancedb.table.Table:
    """Write the chunks and build the indexes: BM25 over ``lexical`` (English stemming), B-trees on the dates, and
    an HNSW graph over int8-quantised vectors when ``vector_index`` (else the dense leg reads every row, exact)."""
    table = lancedb.connect(path).create_table(TABLE, data=batches, schema=schema(), mode="overwrite")
    table.create_index("lexical", config=FTS())
    table.create_index("effective_from", config=BTree())
    table.create_index("effective_to", config=BTree())
    if vector_index:
        table.create_index("vector", config=HnswSq(distance_type="cosine"))
    return table


def open_table(path: Path) -> lancedb.table.Table:
    return lancedb.connect(path).open_table(TABLE)


def in_force(day: date, sources: list[str] | None = None) -> str:
    """The filter of chunks whose revision is in force on ``day`` (``effective_from <= day < effective_to``)."""
    clause = f"effective_from <= date '{day}' AND (effective_to IS NULL OR effective_to > date '{day}')"
    if sources:
        clause += " AND source IN (" + ", ".join(f"'{s}'" for s in sources) + ")"
    return clause


def dated_hybrid(
    table: lancedb.table.Table,
    vector: np.ndarray,
    text: str,
    day: date,
    *,
    k: int = 10,
    depth: int = 100,
    sources: list[str] | None = None,
) -> list[tuple[str, float]]:
    """The ``k`` best chunks in force on ``day``: each leg's ``depth`` best (the filter applied before the search,
    not to its answers), fused by reciprocal rank (k=60)."""
    query = (
        table.search(query_type="hybrid")
        .vector(np.asarray(vector, dtype=np.float32))
        .text(text)
        .distance_type("cosine")
        .where(in_force(day, sources), prefilter=True)
        .select(["id"])
        .rerank(RRFReranker())
        .limit(depth)
    )
    hits = query.to_arrow()
    return list(zip(hits["id"].to_pylist()[:k], hits["_relevance_score"].to_pylist()[:k], strict=True))
