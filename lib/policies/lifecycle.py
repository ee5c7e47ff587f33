"""Revision operations that span stores: register (object store + registry), date edits (registry +
chunk metadata), deletion (registry + chunks + file) and the removal of a revision's chunks alone.

The registry is always written first: it decides what a search can see, so a crash between two
steps leaves only orphans (unreferenced chunks or files) that the audit reports and repairs, never a
search result from the wrong revision.

Operations that touch only the registry and the chunks take those two; the ones that also store or
delete the original file take the ``PolicyStores``.
"""

from __future__ import annotations

import logging
from enum import StrEnum

from pydantic import BaseModel, Field

from lib.config import Settings
from lib.errors import (
    FileTooLargeError,
    InvalidArgumentError,
    KBError,
    PolicyNotFoundError,
    RevisionAlreadyExistsError,
    RevisionNotFoundError,
    StoreUnavailableError,
)
from lib.paths import read_allowed_file
from lib.policies.chunks import PolicyVectorStore
from lib.policies.models import CreatedRevision, Revision, RevisionCreate, RevisionStatus, RevisionUpdate
from lib.policies.page_images import drop_renders
from lib.policies.registry import PolicyRegistry, check_revision_id, check_source
from lib.policies.stores import PolicyStores
from lib.stores.objects import ObjectStore, policy_file_key, sha256_bytes, validate_key
from lib.text.filetypes import FileKind, detect_file_type

logger = logging.getLogger(__name__)


class RemovedRevision(BaseModel):
    source: str
    revision_id: str
    chunks_removed: int
    file_removed: bool


class RegistrationAction(StrEnum):
    REGISTERED = "registered"
    RESUMED = "resumed"
    UNCHANGED = "unchanged"
    REPLACED_FAILED = "replaced_failed"


class Registration(BaseModel):
    """What ``ensure_registered`` found or did; ``superseded`` lists revisions a new one closed."""

    revision: Revision
    action: RegistrationAction
    superseded: list[Revision] = Field(default_factory=list)


def read_source_file(objects: ObjectStore, settings: Settings, file: str) -> bytes:
    """The bytes an operator named: an object-store key (an earlier upload) or a path in ``ALLOWED_FILE_ROOTS``.

    A relative name that is a key in the object store wins; anything else (absolute paths included) is a
    path on disk and goes through the allowed-roots check.
    """
    try:
        key = validate_key(file)
    except InvalidArgumentError:
        key = None
    if key is not None and objects.exists(key):
        if objects.size(key) > settings.files.max_upload_bytes:
            raise FileTooLargeError(f"File is larger than the {settings.files.max_upload_bytes} byte limit")
        content = objects.get_bytes(key)
    else:
        content = read_allowed_file(settings, file)
    detect_file_type(content, {FileKind.PDF}, file_name=file)
    return content


def ensure_registered(stores: PolicyStores, source: str, data: RevisionCreate, content: bytes) -> Registration:
    """Register a revision so that running the same ingestion again is safe (idempotent by content hash).

    - not registered yet: store the file and create the revision (``registered``);
    - registered with this very file and already ``active``/``superseded``: nothing to do (``unchanged``);
    - registered with this file and still ``processing`` (a run that died): ingest it again (``resumed``);
    - ``failed`` (any file): the failed attempt is removed and the revision registered afresh
      (``replaced_failed``), so the new parameters and file apply;
    - otherwise (a live revision with another file): ``RevisionAlreadyExistsError``; reindex or use a new id.
    """
    check_source(source)
    revision_id = check_revision_id(data.resolved_revision_id(source))
    sha = sha256_bytes(content)
    try:
        existing: Revision | None = stores.registry.get_revision(source, revision_id)
    except RevisionNotFoundError:
        existing = None
    action = RegistrationAction.REGISTERED
    if existing is not None:
        if existing.file_sha256 == sha and existing.status != RevisionStatus.FAILED:
            if existing.status == RevisionStatus.PROCESSING:
                if existing.file_path and not stores.objects.exists(existing.file_path):
                    stores.objects.put_bytes(existing.file_path, content, content_type="application/pdf")
                return Registration(revision=existing, action=RegistrationAction.RESUMED)
            return Registration(revision=existing, action=RegistrationAction.UNCHANGED)
        if existing.status != RevisionStatus.FAILED:
            raise RevisionAlreadyExistsError(
                f"Revision '{revision_id}' of '{source}' already exists with another file; "
                "reindex it, or register the new file under another revision_id",
                source=source,
                revision_id=revision_id,
            )
        action = RegistrationAction.REPLACED_FAILED  # register_revision replaces it
    created = register_revision(stores, source, data.model_copy(update={"revision_id": revision_id}), content)
    return Registration(revision=created.revision, action=action, superseded=created.superseded)


def register_revision(stores: PolicyStores, source: str, data: RevisionCreate, content: bytes) -> CreatedRevision:
    """Store the original (content-addressed) and create the revision as ``processing``: what every upload
    calls (REST, the web page, the ingest flow through ``ensure_registered``, the seed).

    A ``failed`` revision of the same id is removed first (record, chunks, file), so uploading it again is the
    retry, from every interface alike; a live one is ``revision_already_exists``. Chunk metadata of revisions
    the new one auto-supersedes is brought in step with their new ``effective_to``.
    """
    stores.registry.get_policy(check_source(source))
    detect_file_type(content, {FileKind.PDF})
    if len(content) > stores.settings.files.max_upload_bytes:
        raise FileTooLargeError(f"File is larger than the {stores.settings.files.max_upload_bytes} byte limit")
    revision_id = check_revision_id(data.resolved_revision_id(source))
    _drop_failed(stores, source, revision_id)
    sha = sha256_bytes(content)
    key = policy_file_key(source, revision_id, sha)
    stored = stores.objects.put_bytes(key, content, content_type="application/pdf")
    try:
        created = create_revision(
            stores.registry,
            stores.vectors,
            source,
            data.model_copy(
                update={
                    "revision_id": revision_id,
                    "file_path": stored.key,
                    "file_sha256": sha,
                    "file_size_bytes": stored.size_bytes,
                }
            ),
        )
    except KBError as exc:
        in_use = isinstance(exc, RevisionAlreadyExistsError) and (
            stores.registry.get_revision(source, revision_id).file_path == key
        )
        if not in_use:
            stores.objects.delete(key)
        raise
    return created


def _drop_failed(stores: PolicyStores, source: str, revision_id: str) -> None:
    """Remove a ``failed`` revision of this id before it is registered again (the retry of an ingestion)."""
    try:
        existing = stores.registry.get_revision(source, revision_id)
    except RevisionNotFoundError:
        return
    if existing.status != RevisionStatus.FAILED:
        return
    try:
        remove_revision(stores, source, revision_id)
    except RevisionNotFoundError:  # a concurrent retry removed it first: the same end state
        return
    logger.info(
        "lifecycle.failed_revision_replaced source=%s revision_id=%s error=%s",
        source,
        revision_id,
        existing.error[:200],
    )


def create_revision(
    registry: PolicyRegistry, vectors: PolicyVectorStore, source: str, data: RevisionCreate
) -> CreatedRevision:
    """Create a revision in the registry and carry any auto-supersession into the closed revisions' chunks.

    With Chroma down the revision is created all the same and the chunks keep their old dates for now: the
    ingestion that follows re-syncs every chunk of the policy when it stores its own, or, if it fails, the
    audit's ``stale_metadata`` repair does. Answering an error here would leave a registered revision
    that nobody ingests."""
    created = registry.create_revision(source, data)
    if created.superseded:
        policy = registry.get_policy(source)
        try:
            for closed in created.superseded:
                vectors.sync_revision_metadata(policy, closed)
        except StoreUnavailableError as exc:
            logger.warning(
                "lifecycle.sync_deferred source=%s revision_id=%s error=%s",
                source,
                created.revision.revision_id,
                exc.message,
            )
    return created


def update_revision(
    registry: PolicyRegistry, vectors: PolicyVectorStore, source: str, revision_id: str, data: RevisionUpdate
) -> Revision:
    """Edit a revision's label, notes or dates; its chunks' citation metadata follows."""
    updated = registry.update_revision(source, revision_id, data)
    sync_policy_chunks(registry, vectors, source)
    return updated


def fail_revision(
    registry: PolicyRegistry, vectors: PolicyVectorStore, source: str, revision_id: str, error: str
) -> int:
    """Mark a revision ``failed``, delete whatever chunks it had, and carry the released dates to the
    revision it had superseded. Returns the number of chunks removed.

    The registry is written first, so a failure recorded while Chroma is down still ends ``failed`` with
    its dates given back (``StoreUnavailableError`` then follows); what Chroma kept (the failed revision's
    chunks, the closed revision's old dates) is the audit's ``chunk_count_mismatch`` and ``stale_metadata``,
    which its repair fixes. A failed revision is never searched, so its chunks are invisible meanwhile."""
    registry.mark_failed(source, revision_id, error)
    removed = vectors.delete_revision(source, revision_id)
    sync_policy_chunks(registry, vectors, source)
    return removed


def sync_policy_chunks(registry: PolicyRegistry, vectors: PolicyVectorStore, source: str) -> int:
    """Rewrite date and label metadata on the chunks of every revision of a policy from the registry."""
    policy = registry.get_policy(source)
    return sum(vectors.sync_revision_metadata(policy, rev) for rev in registry.list_revisions(source))


def remove_revision_chunks(
    vectors: PolicyVectorStore, source: str, revision_id: str, *, registry: PolicyRegistry | None = None
) -> int:
    """Delete a revision's chunks and nothing else (spec 000 FR-006); 0 when a registered revision has none.

    The registry entry and the stored original stay, for the re-ingestion that follows (the spec's API
    worker removes, then ingests). Until then searches find nothing of the revision, and the audit reports
    a registered revision's missing chunks as ``chunk_count_mismatch``, which its repair fixes by
    re-ingesting from the stored file. The full deletion is ``remove_revision``.

    With ``registry`` (the ``remove_policy_revision`` tool), a revision the registry does not hold is
    ``policy_not_found`` or ``revision_not_found`` unless chunks of it were there to remove (orphans a crash
    left): "success" is never said of something that does not exist.
    """
    missing: KBError | None = None
    if registry is not None:
        try:
            registry.get_revision(source, revision_id)
        except (PolicyNotFoundError, RevisionNotFoundError) as exc:
            missing = exc
    removed = vectors.delete_revision(source, revision_id)
    if missing is not None and removed == 0:
        raise missing
    logger.info("lifecycle.chunks_removed source=%s revision_id=%s chunks=%d", source, revision_id, removed)
    return removed


def remove_revision(stores: PolicyStores, source: str, revision_id: str) -> RemovedRevision:
    """Delete a revision everywhere: registry entry (with the sole-active guard), chunks, original file
    (REST ``DELETE`` and the ``delete_policy_revision`` flow)."""
    deleted = stores.registry.delete_revision(source, revision_id)
    chunks = stores.vectors.delete_revision(source, revision_id)
    still_used = any(r.file_path == deleted.file_path for r in stores.registry.list_revisions(source))
    file_removed = bool(deleted.file_path) and not still_used and stores.objects.delete(deleted.file_path)
    if file_removed:
        drop_renders(stores.objects, deleted.file_path)
    sync_policy_chunks(stores.registry, stores.vectors, source)
    logger.info(
        "lifecycle.revision_removed source=%s revision_id=%s chunks=%d file_removed=%s",
        source,
        revision_id,
        chunks,
        file_removed,
    )
    return RemovedRevision(source=source, revision_id=revision_id, chunks_removed=chunks, file_removed=file_removed)
