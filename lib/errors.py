"""Typed errors. Each class carries the spec's ``error_type`` so adapters map it without a lookup table.

Adapters (MCP envelope, REST error body, flow failure) read ``error_type``, ``message`` and
``details``; an exception that is not a ``KBError`` is a bug and is reported as ``internal``.
"""

from __future__ import annotations

from typing import Any, ClassVar

MAX_MESSAGE_CHARS = 1000
"""The longest error message (and string detail) any interface answers: a message that echoes a caller's
argument is cut in the middle, so a 1 MB argument is never sent back, and the start and end still read."""


def bounded(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` as it is when it fits ``limit`` characters, else its head and tail around a note of how much
    was cut: every error message and echoed input goes through this one helper."""
    if len(text) <= limit:
        return text
    note = f" … [{len(text) - limit} characters cut] … "
    keep = max(limit - len(note), 2)
    return text[: keep - keep // 2] + note + text[len(text) - keep // 2 :]


MAX_DETAIL_ITEMS = 20
"""The most entries a list in an error's details keeps (pydantic's errors, suggestions); the rest are counted."""


def bounded_details(details: dict[str, Any]) -> dict[str, Any]:
    """``details`` with every string in it ``bounded`` (keys too, at any depth; an echoed key can be the long
    part) and every list cut to ``MAX_DETAIL_ITEMS`` entries and a count of the rest."""
    bound = _bounded_value(details)
    assert isinstance(bound, dict)
    return bound


def _bounded_value(value: Any) -> Any:
    if isinstance(value, str):
        return bounded(value)
    if isinstance(value, dict):
        return {bounded(str(key), 200): _bounded_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        kept = [_bounded_value(item) for item in value[:MAX_DETAIL_ITEMS]]
        return [*kept, f"... {len(value) - MAX_DETAIL_ITEMS} more"] if len(value) > MAX_DETAIL_ITEMS else kept
    return value


class KBError(Exception):
    """Base of every expected failure: bad input, unknown ids, unreadable files, conflicts. Its message and
    string details are ``bounded``: whatever argument an error echoes, the answer stays small."""

    error_type: ClassVar[str] = "internal"
    http_status: ClassVar[int] = 500

    def __init__(self, message: str, **details: Any) -> None:
        message = bounded(message)
        super().__init__(message)
        self.message = message
        self.details = bounded_details(details)

    def envelope(self) -> dict[str, Any]:
        """The MCP tools' error shape (spec 000/003)."""
        return {"status": "error", "error_type": self.error_type, "message": self.message}


class InvalidArgumentError(KBError):
    error_type = "invalid_argument"
    http_status = 400


class InvalidDateError(InvalidArgumentError):
    error_type = "invalid_date"


class InvalidSourceError(InvalidArgumentError):
    error_type = "invalid_source"


class InvalidRevisionIdError(InvalidArgumentError):
    error_type = "invalid_revision_id"


class RegistryUnavailableError(KBError):
    error_type = "registry_unavailable"
    http_status = 503


class OverloadedError(KBError):
    """The search lane's queue is full, or a search waited its longest for a thread: refused at once rather
    than answered late; retry after ``retry_after_s`` seconds (REST: 503 with ``Retry-After``)."""

    error_type = "overloaded"
    http_status = 503
    retry_after_s: ClassVar[int] = 1


class WorkCancelledError(KBError):
    """Long work (an ingestion) stopped at a checkpoint because its caller cancelled it (tasks/cancel of an MCP
    task): nothing it would have written is kept."""

    error_type = "cancelled"
    http_status = 409


class PolicyNotFoundError(KBError):
    error_type = "policy_not_found"
    http_status = 404


class RevisionNotFoundError(KBError):
    error_type = "revision_not_found"
    http_status = 404


class PolicyAlreadyExistsError(KBError):
    error_type = "policy_already_exists"
    http_status = 409


class RevisionAlreadyExistsError(KBError):
    error_type = "revision_already_exists"
    http_status = 409


class RevisionOverlapError(KBError):
    error_type = "revision_overlap"
    http_status = 409


class CannotDeleteSoleRevisionError(KBError):
    error_type = "cannot_delete_sole_revision"
    http_status = 409


class CannotReindexError(KBError):
    error_type = "cannot_reindex"
    http_status = 409


class SectionNotFoundError(KBError):
    error_type = "section_not_found"
    http_status = 404


class FileNotFoundInStoreError(KBError):
    error_type = "file_not_found"
    http_status = 404


class ObjectStoreError(KBError):
    """The object store could not be reached or failed (network, 5xx, disk I/O): transient, retry later."""

    error_type = "object_store_unavailable"
    http_status = 503


class PathNotAllowedError(KBError):
    """A ``file_path`` outside ``ALLOWED_FILE_ROOTS``. The message never names the resolved path."""

    error_type = "path_not_allowed"
    http_status = 403


class UnsupportedFileTypeError(KBError):
    error_type = "unsupported_file_type"
    http_status = 422


class FileTooLargeError(KBError):
    error_type = "file_too_large"
    http_status = 413


class ExtractionFailedError(KBError):
    error_type = "extraction_failed"
    http_status = 422


class EncryptedPdfError(ExtractionFailedError):
    error_type = "encrypted"


class NoContentError(ExtractionFailedError):
    error_type = "no_content"


class NoChunksError(ExtractionFailedError):
    error_type = "no_chunks"


class DocumentNotFoundError(KBError):
    """No application document is registered under the ``document_id`` (spec 003 FR-003)."""

    error_type = "document_not_found"
    http_status = 404


class DocumentIdConflictError(KBError):
    """Another file or application already owns this ``document_id``: two references that sanitise alike
    (``25/01178/REM`` and ``25_01178_REM``) or two files whose hashes share their first six hex digits."""

    error_type = "document_id_conflict"
    http_status = 409


class IngestionInProgressError(KBError):
    """Another worker has been ingesting the same file for longer than a caller is prepared to wait."""

    error_type = "ingestion_in_progress"
    http_status = 409


class InconsistentStoreError(KBError):
    """The consistency audit found problems it could not (or was not asked to) repair."""

    error_type = "inconsistent_store"
    http_status = 500


class EncoderMismatchError(KBError):
    """A collection's vectors were made by another encoder than the one configured (``EMBEDDING_ENCODER``):
    its documents and the queries would not be comparable, so the collection is refused until reencoded."""

    error_type = "encoder_mismatch"
    http_status = 409


class StoreUnavailableError(KBError):
    """A store the request needs (the Chroma server, the S3 server) did not answer; nothing was written."""

    error_type = "store_unavailable"
    http_status = 503


class EngineUnavailableError(KBError):
    """The kb MCP server could not reach its engine at ``KB_ENGINE_URL`` (spec 002: engine unreachable)."""

    error_type = "engine_unavailable"
    http_status = 503


class NotANoteError(KBError):
    """Only notes can be updated in place; the document is an uploaded file (spec 002)."""

    error_type = "not_a_note"
    http_status = 409


class UploadNotFoundError(KBError):
    """No chunked upload is staged under this ``upload_id``: unknown, finished or expired (spec 002)."""

    error_type = "upload_not_found"
    http_status = 404


class JobNotFoundError(KBError):
    """No kb ingestion job has this id (spec 002)."""

    error_type = "job_not_found"
    http_status = 404


class IndexNotBuiltError(KBError):
    """The governance index holds no documents yet; the message names the command that builds it (spec 004 NF3)."""

    error_type = "index_not_built"
    http_status = 503


class InsecureConfigurationError(KBError):
    """A server would serve without credentials where it must not: no key and no OAuth without
    ``ALLOW_UNAUTHENTICATED``, or open on a host that is not loopback (decision 0045). Raised at start-up."""

    error_type = "insecure_configuration"
    http_status = 500
