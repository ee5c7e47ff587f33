"""Deleting an application document everywhere: registry entry, chunks, original file, in that order.

The entry goes first, so searches stop seeing the document at once; a failure after it leaves orphan
chunks or an unreferenced file, which the audit (``lib.documents.audit``) finds and removes.
"""

from __future__ import annotations

import logging

from lib.documents.models import DeletedDocument
from lib.documents.stores import DocumentStores
from lib.errors import DocumentNotFoundError

logger = logging.getLogger(__name__)


def delete_document(stores: DocumentStores, document_id: str) -> DeletedDocument:
    """Remove a document everywhere; ``DocumentNotFoundError`` if it is not registered (or went meanwhile)."""
    record = stores.registry.require(document_id)
    if not stores.registry.remove(record):
        raise DocumentNotFoundError(f"Document not found: {document_id}")
    chunks_removed = stores.chunks.delete_document(record.document_id)
    file_removed = stores.objects.delete(record.object_key)
    logger.info(
        "documents.deleted application_ref=%s document_id=%s chunks=%d file_removed=%s",
        record.application_ref,
        record.document_id,
        chunks_removed,
        file_removed,
    )
    return DeletedDocument(
        document_id=record.document_id,
        application_ref=record.application_ref,
        chunks_removed=chunks_removed,
        file_removed=file_removed,
    )
