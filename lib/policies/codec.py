"""Policy and revision records as the flat string hashes Redis stores (spec 000 FR-008 field names).

Empty strings stand for ``None`` (an open ``effective_to``, no ``ingested_at``) because a hash field
cannot hold a null; a field missing from an older hash reads as its default.

``effective_to_set`` ("1"/"0") says whether ``effective_to`` is the user's or derived from the next revision
(``lib.policies.temporal``). A hash written before it existed had ``superseded_by``, the id of the revision whose
arrival closed it: an end date with no ``superseded_by`` was the user's.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from redis.typing import EncodableT, FieldT

from lib.dates import iso, parse_date
from lib.policies.models import Policy, Revision, RevisionStatus
from lib.policies.temporal import RevisionRecord

CHUNKS_GENERATION_FIELD = "chunks_generation"
"""Bumped in the revision's hash by ``PolicyRegistry.chunks_changed``; never written by ``record_to_hash``, so
the registry's rewrites of a record (HSET of its fields) keep it."""

END_SET_FIELD = "effective_to_set"

Hash = dict[FieldT, EncodableT]
"""A hash to write, typed as redis-py's ``hset(mapping=...)`` takes it; every value written here is a str."""


def policy_to_hash(policy: Policy) -> Hash:
    return {
        "source": policy.source,
        "title": policy.title,
        "description": policy.description,
        "category": policy.category.value,
        "created_at": policy.created_at.isoformat(),
        "updated_at": policy.updated_at.isoformat(),
    }


def record_to_hash(record: RevisionRecord) -> Hash:
    rev = record.revision
    return {
        "revision_id": rev.revision_id,
        "source": rev.source,
        "version_label": rev.version_label,
        "effective_from": rev.effective_from.isoformat(),
        "effective_to": iso(rev.effective_to) or "",
        "status": rev.status.value,
        "file_path": rev.file_path,
        "file_sha256": rev.file_sha256,
        "file_size_bytes": str(rev.file_size_bytes),
        "page_count": str(rev.page_count),
        "chunk_count": str(rev.chunk_count),
        "extraction_method": rev.extraction_method,
        "notes": rev.notes,
        "created_at": rev.created_at.isoformat(),
        "ingested_at": rev.ingested_at.isoformat() if rev.ingested_at else "",
        "error": rev.error,
        END_SET_FIELD: "1" if record.end_set else "0",
        "progress_phase": rev.progress_phase,
        "progress_percent": f"{rev.progress_percent:g}",
        "reading": rev.reading,
    }


def record_from_hash(data: Mapping[str, str]) -> RevisionRecord:
    if END_SET_FIELD in data:
        end_set = data[END_SET_FIELD] == "1"
    else:
        end_set = bool(data.get("effective_to")) and not data.get("superseded_by")
    return RevisionRecord(revision_from_hash(data), end_set)


def revision_from_hash(data: Mapping[str, str]) -> Revision:
    return Revision(
        revision_id=data["revision_id"],
        source=data["source"],
        version_label=data.get("version_label", ""),
        effective_from=parse_date(data["effective_from"]),
        effective_to=parse_date(data["effective_to"]) if data.get("effective_to") else None,
        status=RevisionStatus(data["status"]),
        file_path=data.get("file_path", ""),
        file_sha256=data.get("file_sha256", ""),
        file_size_bytes=int(data.get("file_size_bytes") or 0),
        page_count=int(data.get("page_count") or 0),
        chunk_count=int(data.get("chunk_count") or 0),
        extraction_method=data.get("extraction_method", ""),
        notes=data.get("notes", ""),
        created_at=datetime.fromisoformat(data["created_at"]),
        ingested_at=datetime.fromisoformat(data["ingested_at"]) if data.get("ingested_at") else None,
        error=data.get("error", ""),
        progress_phase=data.get("progress_phase", ""),
        progress_percent=float(data.get("progress_percent") or 0.0),
        reading=data.get("reading", ""),
    ).with_chunks_generation(int(data.get(CHUNKS_GENERATION_FIELD) or 0))
