"""Names in the governance collection: chunk ids, generation keys, and the text a chunk is searched by."""

from __future__ import annotations

from typing import Any


def generation_key(doc_id: str, generation: int) -> str:
    """What one generation of one document's chunks is filtered by: ``{doc_id}@{generation}``."""
    return f"{doc_id}@{generation}"


def governance_chunk_id(doc_id: str, generation: int, chunk_index: int) -> str:
    return f"{generation_key(doc_id, generation)}#{chunk_index:04d}"


def search_text(metadata: dict[str, Any], text: str) -> str:
    """What is embedded and indexed for one chunk: the document's label and title and the heading path over
    the text, so "PEP 723", a title's words or a section's name find chunks that do not repeat them."""
    doc_id = str(metadata.get("doc_id", ""))
    label = f"PEP {int(doc_id[4:])}" if doc_id.startswith("PEP-") and doc_id[4:].isdigit() else doc_id
    return f"{label}: {metadata.get('title', '')}\n{metadata.get('heading', '')}\n\n{text}"
