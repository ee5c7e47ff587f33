"""Object keys: content hashes, the policy and application layouts, and the checks every backend applies."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from lib.errors import InvalidArgumentError

HASH_BLOCK_SIZE = 8192
"""Spec 003 FR-008: files are hashed in 8192-byte blocks."""

TEMP_PREFIX = ".tmp-objectstore-"
"""Local temp files start with this; ``list`` skips them and keys may not use it."""

_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file, read in 8192-byte blocks (spec 003 FR-008) so memory stays flat."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(HASH_BLOCK_SIZE), b""):
            digest.update(block)
    return digest.hexdigest()


def policy_file_key(source: str, revision_id: str, sha256: str, suffix: str = ".pdf") -> str:
    """``policies/{source}/{revision_id}/{sha256}{suffix}``: where a policy revision's original lives."""
    _check_segment("source", source)
    _check_segment("revision_id", revision_id)
    return f"policies/{source}/{revision_id}/{_checked_sha256(sha256)}{_checked_suffix(suffix)}"


def document_file_key(application_ref_sanitized: str, sha256: str, suffix: str) -> str:
    """``applications/{ref}/{sha256}{suffix}``; ``ref`` is already sanitised (``25_01178_REM``)."""
    _check_segment("application_ref_sanitized", application_ref_sanitized)
    return f"applications/{application_ref_sanitized}/{_checked_sha256(sha256)}{_checked_suffix(suffix)}"


def _check_segment(name: str, value: str) -> None:
    if not value or value in {".", ".."} or any(char in value for char in "/\\\x00"):
        raise InvalidArgumentError(f"{name} must be a single non-empty path segment", field=name)


def _checked_sha256(sha256: str) -> str:
    if not _SHA256_RE.fullmatch(sha256):
        raise InvalidArgumentError("sha256 must be 64 lowercase hex characters", field="sha256")
    return sha256


def _checked_suffix(suffix: str) -> str:
    if suffix and (not suffix.startswith(".") or any(char in suffix for char in "/\\\x00")):
        raise InvalidArgumentError("suffix must be empty or start with '.' and contain no separators", field="suffix")
    return suffix


def validate_key(key: str) -> str:
    """Return ``key`` unchanged if it is a safe relative object key, else raise ``InvalidArgumentError``.

    Rejected: empty, absolute, backslashes, NUL, empty segments (``a//b``, trailing ``/``), ``.`` or
    ``..`` segments, and segments starting with the local store's temp prefix. ``..`` inside a segment
    (``v1..2``) is allowed: it is not traversal, and revision ids may contain it.
    """
    if not isinstance(key, str) or not key:
        raise InvalidArgumentError("object key must be a non-empty string")
    if "\\" in key or "\x00" in key:
        raise InvalidArgumentError("object key may not contain backslashes or NUL", key=printable(key))
    if key.startswith("/"):
        raise InvalidArgumentError("object key must be relative", key=printable(key))
    for segment in key.split("/"):
        if segment in {"", ".", ".."}:
            raise InvalidArgumentError("object key has an empty, '.' or '..' segment", key=printable(key))
        if segment.startswith(TEMP_PREFIX):
            raise InvalidArgumentError("object key segment uses a reserved prefix", key=printable(key))
    return key


def validate_prefix(prefix: str) -> str:
    """A list prefix is a key prefix: it may be empty or end with ``/``, but must not escape the store."""
    if prefix == "":
        return prefix
    validate_key(prefix[:-1] if prefix.endswith("/") else prefix)
    return prefix


def printable(key: str) -> str:
    """A key as it may appear in an error or a log line: escaped, at most 300 characters."""
    return key.encode("unicode_escape").decode("ascii")[:300]
