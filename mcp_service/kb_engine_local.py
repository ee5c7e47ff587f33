"""The kb engine called in process: what the ``kb`` tools use when the engine is this very service (no
``KB_ENGINE_URL``), instead of calling its own ``/api/v1`` over HTTP.

The same operations as ``KbEngineClient`` with the same JSON bodies: each calls the ``lib.notes`` function the
REST route calls (``mcp_service.rest.kb_routes``), on a worker thread (searches on the search lane), and raises
the ``KBError`` the route would have answered with. The tool's caller was authenticated by the MCP server; no
engine key is involved.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import IO, Any, TypeVar

import anyio.to_thread
from pydantic import BaseModel

from lib.composition import Stores
from lib.errors import InvalidArgumentError
from lib.notes import engine
from lib.notes.ingest import update_note
from lib.notes.jobs import new_file_job, new_note_job
from lib.notes.models import DocumentOut, JobStatus
from lib.notes.search import search_notes
from lib.notes.status import engine_status
from mcp_service.search_lane import run_search

T = TypeVar("T")


def _body(model: BaseModel) -> dict[str, Any]:
    body: dict[str, Any] = model.model_dump(mode="json")
    return body


class LocalKbEngine:
    """Every engine call the ``kb`` tools make, answered by this process's stores."""

    def __init__(self, stores: Stores, base_url: str) -> None:
        self.stores = stores
        self.base_url = base_url
        """Where the same engine answers over HTTP (``kb_status`` reports it)."""

    async def aclose(self) -> None:
        """Nothing to close: the stores belong to the app."""

    async def _run(self, work: Callable[[], T]) -> T:
        return await anyio.to_thread.run_sync(work)

    async def search(self, query: str, top: int, tags: list[str], fts_only: bool) -> dict[str, Any]:
        notes = self.stores.notes
        work = partial(search_notes, notes, query, top, tags, fts_only=fts_only)
        return _body(await run_search(work, notes.settings.search))

    async def submit_note(
        self, text: str, tags: list[str], *, title: str | None = None, source_path: str | None = None
    ) -> dict[str, Any]:
        notes = self.stores.notes
        job = await self._run(lambda: new_note_job(notes.jobs, text, tags, title=title, source_path=source_path))
        return await self._submitted(job.job_id)

    async def submit_file(
        self, filename: str, content: IO[bytes], content_type: str, tags: list[str], *, source_path: str | None = None
    ) -> dict[str, Any]:
        """``content_type`` is not needed here: ``new_file_job`` tells the type from the bytes."""
        notes = self.stores.notes
        data = await self._run(content.read)
        job = await self._run(lambda: new_file_job(notes, notes.jobs, data, filename, tags, source_path=source_path))
        return await self._submitted(job.job_id)

    async def _submitted(self, job_id: str) -> dict[str, Any]:
        from flows.kb_documents import submit_queued_job  # Prefect is a heavy import only jobs need

        status: JobStatus = await self._run(partial(submit_queued_job, self.stores, job_id))
        return {"job_id": job_id, "status": status.value}

    async def jobs(self, status: str | None) -> dict[str, Any]:
        if status and status not in set(JobStatus):
            raise InvalidArgumentError(f"status must be one of {', '.join(JobStatus)}")
        wanted = JobStatus(status) if status else None
        listed = await self._run(partial(engine.jobs, self.stores.notes, wanted))
        return {"jobs": [_body(job) for job in listed]}

    async def job(self, job_id: str) -> dict[str, Any]:
        return _body(await self._run(partial(engine.job, self.stores.notes, job_id)))

    async def document(self, document_id: int) -> dict[str, Any]:
        return _body(await self._run(partial(engine.document_detail, self.stores.notes, document_id)))

    async def documents_by_source_path(self, source_path: str) -> dict[str, Any]:
        found = await self._run(partial(engine.documents_with_source_path, self.stores.notes, source_path))
        return {"documents": [_body(document) for document in found]}

    async def add_tags(self, document_id: int, tags: list[str]) -> dict[str, Any]:
        return _body(await self._run(partial(engine.change_tags, self.stores.notes, document_id, tags, add=True)))

    async def remove_tag(self, document_id: int, tag: str) -> dict[str, Any]:
        return _body(await self._run(partial(engine.change_tags, self.stores.notes, document_id, [tag], add=False)))

    async def update_note(self, document_id: int, text: str) -> dict[str, Any]:
        return _body(DocumentOut.of(await self._run(partial(update_note, self.stores.notes, document_id, text))))

    async def status(self) -> dict[str, Any]:
        return _body(await self._run(partial(engine_status, self.stores.notes)))
