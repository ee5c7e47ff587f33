"""What each ``kb`` tool does: spec 002's collection convention around one engine call, or the upload staging.

Collections are tags (spec 002): every document carries exactly one ``collection:<name>`` tag
(``collection:documents`` unless told otherwise); agents see it as a top-level ``collection`` and never
among ``tags``. Writes put it in; reads take it out (``present``). Moving a document to another collection
removes the old tag through the engine's tag API first, then adds the new one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

import anyio.to_thread

from lib.config import Settings
from lib.errors import InvalidArgumentError
from lib.notes.uploads import UploadStaging


class KbEngine(Protocol):
    """The engine calls the tools make: over HTTP (``kb_engine_client.KbEngineClient``, an engine elsewhere) or in
    process (``kb_engine_local.LocalKbEngine``, the engine this service mounts); both answer the API's JSON bodies
    and raise the same ``KBError``s."""

    base_url: str

    async def aclose(self) -> None: ...
    async def search(self, query: str, top: int, tags: list[str], fts_only: bool) -> dict[str, Any]: ...
    async def submit_note(
        self, text: str, tags: list[str], *, title: str | None = None, source_path: str | None = None
    ) -> dict[str, Any]: ...
    async def submit_file(
        self, filename: str, content: IO[bytes], content_type: str, tags: list[str], *, source_path: str | None = None
    ) -> dict[str, Any]: ...
    async def jobs(self, status: str | None) -> dict[str, Any]: ...
    async def job(self, job_id: str) -> dict[str, Any]: ...
    async def document(self, document_id: int) -> dict[str, Any]: ...
    async def documents_by_source_path(self, source_path: str) -> dict[str, Any]: ...
    async def add_tags(self, document_id: int, tags: list[str]) -> dict[str, Any]: ...
    async def remove_tag(self, document_id: int, tag: str) -> dict[str, Any]: ...
    async def update_note(self, document_id: int, text: str) -> dict[str, Any]: ...
    async def status(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class KbStores:
    """What the ``kb`` tools stand on: the engine (in process or over HTTP), this deployment's upload staging, the
    settings."""

    settings: Settings
    engine: KbEngine
    staging: UploadStaging


COLLECTION_TAG = "collection:"
DEFAULT_COLLECTION = "documents"
COLLECTION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}")


def collection_tag(collection: str) -> str:
    if not COLLECTION_NAME.fullmatch(collection):
        raise InvalidArgumentError(
            "collection must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit"
        )
    return COLLECTION_TAG + collection


def tags_in(collection: str, tags: list[str] | None) -> list[str]:
    """A document's tags: its one collection tag first, then ``tags`` without any other collection tag."""
    return list(
        dict.fromkeys([collection_tag(collection), *(t for t in tags or [] if not t.startswith(COLLECTION_TAG))])
    )


def search_tags(collection: str | None, tags: list[str] | None) -> list[str]:
    """The tag filter of a search: ``tags`` combined with ``collection:<collection>`` when one is named."""
    return tags_in(collection, tags) if collection is not None else list(dict.fromkeys(tags or []))


def present(item: dict[str, Any]) -> dict[str, Any]:
    """``item`` with its ``collection:*`` tag moved out of ``tags`` into ``collection``."""
    tags = [str(t) for t in item.get("tags") or []]
    collections = [t.removeprefix(COLLECTION_TAG) for t in tags if t.startswith(COLLECTION_TAG)]
    return {
        **item,
        "collection": collections[0] if collections else None,
        "tags": [t for t in tags if not t.startswith(COLLECTION_TAG)],
    }


def _renamed_status(body: dict[str, Any], name: str) -> dict[str, Any]:
    """The engine's own ``status`` under ``name``: ``status`` at the top of a result is the envelope's."""
    body = dict(body)
    if "status" in body:
        body[name] = body.pop("status")
    return body


async def search(
    engine: KbEngine, query: str, top: int, collection: str | None, tags: list[str] | None, fts_only: bool
) -> dict[str, Any]:
    found = await engine.search(query, top, search_tags(collection, tags), fts_only)
    results = [present(hit) for hit in found.get("results") or []]
    return {**found, "query": found.get("query", query), "results_count": len(results), "results": results}


async def add_note(
    engine: KbEngine,
    text: str,
    collection: str,
    tags: list[str] | None,
    title: str | None,
    source_path: str | None,
) -> dict[str, Any]:
    accepted = await engine.submit_note(text, tags_in(collection, tags), title=title, source_path=source_path)
    return _renamed_status(accepted, "job_status")


async def update_note(engine: KbEngine, document_id: int, text: str) -> dict[str, Any]:
    return present(_renamed_status(await engine.update_note(document_id, text), "document_status"))


async def get_documents(engine: KbEngine, document_id: int | None, source_path: str | None) -> dict[str, Any]:
    """Spec 002's ``kb_get``: by ``document_id`` the document itself with its chunks (``GET /documents/{id}``);
    by ``source_path`` every document with that path, as ``{count, documents}``."""
    if (document_id is None) == (source_path is None):
        raise InvalidArgumentError("Give exactly one of document_id and source_path")
    if document_id is not None:
        return present(_renamed_status(await engine.document(document_id), "document_status"))
    documents = list((await engine.documents_by_source_path(str(source_path))).get("documents") or [])
    shown = [present(_renamed_status(d, "document_status")) for d in documents]
    return {"count": len(shown), "documents": shown}


async def set_collection(engine: KbEngine, document_id: int, collection: str) -> dict[str, Any]:
    """Move a document to ``collection``: every other collection tag removed first, then the new one added."""
    wanted = collection_tag(collection)
    tags = [str(t) for t in (await engine.document(document_id)).get("tags") or []]
    for tag in tags:
        if tag.startswith(COLLECTION_TAG) and tag != wanted:
            await engine.remove_tag(document_id, tag)
    if wanted not in tags:
        await engine.add_tags(document_id, [wanted])
    document = await engine.document(document_id)
    document.pop("chunks", None)
    return present(_renamed_status(document, "document_status"))


async def status(engine: KbEngine, staging: UploadStaging) -> dict[str, Any]:
    body = _renamed_status(await engine.status(), "engine_status")
    in_progress = await anyio.to_thread.run_sync(staging.in_progress)
    uploads = {
        "in_progress": in_progress,
        "max_upload_bytes": staging.max_upload_bytes,
        "ttl_seconds": staging.ttl_seconds,
    }
    return {**body, "engine_url": engine.base_url, "uploads": uploads}


async def jobs(engine: KbEngine, job_status: str | None) -> dict[str, Any]:
    listed = [present(job) for job in (await engine.jobs(job_status)).get("jobs") or []]
    return {"count": len(listed), "jobs": listed}


async def start_upload(
    engine: KbEngine,
    staging: UploadStaging,
    filename: str,
    total_size: int,
    tags: list[str] | None,
    collection: str | None,
    source_path: str | None = None,
) -> dict[str, Any]:
    """Stage a new upload. The engine is asked first: an upload it could not take is not started."""
    all_tags = tags_in(collection or DEFAULT_COLLECTION, tags)
    await engine.status()
    started = await anyio.to_thread.run_sync(staging.start, filename, total_size, all_tags, source_path)
    return started.model_dump()


async def put_chunk(staging: UploadStaging, upload_id: str, data: str, chunk_index: int) -> dict[str, Any]:
    return (await anyio.to_thread.run_sync(staging.put_chunk, upload_id, chunk_index, data)).model_dump()


async def finish_upload(engine: KbEngine, staging: UploadStaging, upload_id: str) -> dict[str, Any]:
    """Reassemble and forward the file to the engine as one multipart job, with the start's tags. Only once
    the engine has taken it is the upload forgotten; otherwise it stays staged and finish may be retried."""
    assembled = await anyio.to_thread.run_sync(staging.assemble, upload_id)
    try:
        with Path(assembled.path).open("rb") as content:
            accepted = await engine.submit_file(
                assembled.filename, content, assembled.content_type, assembled.tags, source_path=assembled.source_path
            )
    except BaseException:
        await anyio.to_thread.run_sync(staging.release, assembled.upload_id)
        raise
    finally:
        assembled.path.unlink(missing_ok=True)
    await anyio.to_thread.run_sync(staging.complete, assembled.upload_id)
    return {
        **_renamed_status(accepted, "job_status"),
        "upload_id": assembled.upload_id,
        "filename": assembled.filename,
        "source_path": assembled.source_path,
        "size": assembled.size,
    }
