"""The kb engine's HTTP API (``/api/v1``) as the ``kb`` MCP server calls it (spec 002: ``KB_ENGINE_URL``,
``KB_API_KEY``).

One ``httpx.AsyncClient`` per server, so a tool waiting on the engine holds no worker thread: when the
engine is this very service (the default) its routes need those threads to answer.

Failures come back as the ``KBError`` the engine named in its error body (``{"error": {"code", ...}}``,
``mcp_service.rest.errors``), so ``document_not_found`` and ``not_a_note`` reach the agent unchanged. Anything
that means the engine cannot be used from here (no connection, a timeout, a body that is not the API's, its
refusal of ``KB_API_KEY``) is ``EngineUnavailableError`` (``engine_unavailable``), naming the URL but never
the key.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import IO, Any
from urllib.parse import quote

import httpx

from lib.config import Settings
from lib.errors import EngineUnavailableError, InvalidArgumentError, KBError

logger = logging.getLogger(__name__)

API_PREFIX = "/api/v1"
TIMEOUT = httpx.Timeout(60.0, connect=5.0)
"""Reads are generous (a forwarded 100 MB upload, a cold model); a connection that does not open in 5 s
means the engine is not there."""


def _error_types() -> dict[str, type[KBError]]:
    found: dict[str, type[KBError]] = {}
    pending: list[type[KBError]] = [KBError]
    while pending:
        cls = pending.pop()
        found.setdefault(cls.error_type, cls)
        pending.extend(cls.__subclasses__())
    return found


class EngineError(KBError):
    """An engine error type this server has no class for: passed on with the engine's own code."""

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.engine_error_type = error_type

    def envelope(self) -> dict[str, Any]:
        return {"status": "error", "error_type": self.engine_error_type, "message": self.message}


def engine_url(settings: Settings) -> str:
    """``KB_ENGINE_URL``, else this deployment's own service: the ``kb`` server mounts the engine beside its
    MCP routes (``mcp_service.kb``), so it is reached on ``KB_MCP_PORT`` (loopback when bound to all)."""
    if settings.kb.engine_url:
        return settings.kb.engine_url.rstrip("/")
    host = "127.0.0.1" if settings.service.host in ("0.0.0.0", "", "::") else settings.service.host
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{settings.service.kb_mcp_port}"


def engine_key(settings: Settings) -> str | None:
    """``KB_API_KEY``; with no ``KB_ENGINE_URL`` the engine is this service, whose key is ``MCP_API_KEY``."""
    key = settings.kb.engine_api_key or (None if settings.kb.engine_url else settings.auth.api_key)
    raw = key.get_secret_value() if key is not None else ""
    return raw or None


class KbEngineClient:
    """Every engine call the ``kb`` tools make; each returns the engine's JSON body."""

    def __init__(self, base_url: str, api_key: str | None, *, timeout: httpx.Timeout = TIMEOUT) -> None:
        self.base_url = base_url.rstrip("/")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.AsyncClient(base_url=self.base_url + API_PREFIX, headers=headers, timeout=timeout)

    @classmethod
    def from_settings(cls, settings: Settings) -> KbEngineClient:
        return cls(engine_url(settings), engine_key(settings))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def search(self, query: str, top: int, tags: list[str], fts_only: bool) -> dict[str, Any]:
        return await self._call(
            "POST", "/search", json={"query": query, "top": top, "tags": tags, "fts_only": fts_only}
        )

    async def submit_note(
        self, text: str, tags: list[str], *, title: str | None = None, source_path: str | None = None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"text": text, "tags": tags}
        body |= {k: v for k, v in (("title", title), ("source_path", source_path)) if v is not None}
        return await self._call("POST", "/jobs", json=body)

    async def submit_file(
        self, filename: str, content: IO[bytes], content_type: str, tags: list[str], *, source_path: str | None = None
    ) -> dict[str, Any]:
        """The file as a multipart upload; ``tags`` as repeated form fields."""
        data: dict[str, Any] = {"tags": tags}
        if source_path is not None:
            data["source_path"] = source_path
        return await self._call("POST", "/jobs", files={"file": (filename, content, content_type)}, data=data)

    async def jobs(self, status: str | None) -> dict[str, Any]:
        return await self._call("GET", "/jobs", params={"status": status} if status else None)

    async def job(self, job_id: str) -> dict[str, Any]:
        return await self._call("GET", f"/jobs/{job_id}")

    async def document(self, document_id: int) -> dict[str, Any]:
        return await self._call("GET", f"/documents/{document_id}")

    async def documents_by_source_path(self, source_path: str) -> dict[str, Any]:
        return await self._call("GET", "/documents", params={"source_path": source_path})

    async def add_tags(self, document_id: int, tags: list[str]) -> dict[str, Any]:
        return await self._call("POST", f"/documents/{document_id}/tags", json={"tags": tags})

    async def remove_tag(self, document_id: int, tag: str) -> dict[str, Any]:
        return await self._call("DELETE", f"/documents/{document_id}/tags/{quote(tag, safe='')}")

    async def update_note(self, document_id: int, text: str) -> dict[str, Any]:
        return await self._call("PATCH", f"/notes/{document_id}", json={"text": text})

    async def status(self) -> dict[str, Any]:
        return await self._call("GET", "/status")

    async def _call(self, method: str, path: str, **request: Any) -> dict[str, Any]:
        try:
            response = await self._http.request(method, path, **request)
        except httpx.TransportError as exc:  # refused, reset, DNS, every timeout
            logger.warning("kb_engine.unreachable url=%s error=%s", self.base_url, type(exc).__name__)
            raise EngineUnavailableError(
                f"The kb engine at {self.base_url} is unreachable ({type(exc).__name__}); try again later"
            ) from exc
        return self._body(response)

    def _body(self, response: httpx.Response) -> dict[str, Any]:
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.is_success and isinstance(body, dict):
            return body
        error = body.get("error") if isinstance(body, dict) else None
        if not isinstance(error, Mapping) or not isinstance(error.get("code"), str):
            raise EngineUnavailableError(
                f"The kb engine at {self.base_url} answered {response.status_code} without the API's error body"
            )
        code = str(error["code"])
        message = str(error.get("message") or code)
        if response.status_code in (401, 403):
            logger.error("kb_engine.refused_key url=%s status=%d", self.base_url, response.status_code)
            raise EngineUnavailableError(f"The kb engine at {self.base_url} refused this server's key (KB_API_KEY)")
        known = _error_types().get(code)
        if code == "validation_error":
            raise InvalidArgumentError(message, **dict(error.get("details") or {}))
        if known is not None and known is not KBError:
            raise known(message)
        raise EngineError(code, message)
