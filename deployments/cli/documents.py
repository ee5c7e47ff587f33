"""Application-document commands."""

from __future__ import annotations

import typer

from deployments.cli.app import app, fail, open_stores_from_env
from lib.documents.deletion import delete_document
from lib.errors import KBError


@app.command("delete-document")
def delete_application_document(document_id: str) -> None:
    """Delete an application document everywhere: registry entry, chunks and original file."""
    try:
        stores = open_stores_from_env()
        removed = delete_document(stores.documents, document_id)
    except KBError as exc:
        fail(exc)
    typer.echo(
        f"deleted {removed.document_id} of {removed.application_ref}: {removed.chunks_removed} chunks, "
        f"file {'removed' if removed.file_removed else 'not found'}"
    )
