"""Two ``kb`` service processes over one set of stores, for the spec 002 tests.

- ``A`` (``policy-kb serve --servers kb``): the whole deployment, its engine mounted at ``/api/v1`` under
  ``MCP_API_KEY`` and its MCP routes under ``KB_MCP_API_KEY``.
- ``B``: only the MCP server, in front of A's engine (``KB_ENGINE_URL`` + ``KB_API_KEY``, as spec 002's
  separate container), with ``KB_MCP_API_KEY`` unset (open); it shares A's Redis and object store, so an
  upload may move between them.
"""

from __future__ import annotations

import base64
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import ClientSession

from lib.config import Settings
from tests.conftest import free_port
from tests.mcp_service.conftest import FULL_KEY, mcp_session, service_env, service_settings, wait_healthy
from tests.polling import eventually_async

ROOT = Path(__file__).resolve().parents[2]
KB_KEY = "kb-mcp-key-" + "k" * 32


@dataclass
class KbProcess:
    url: str
    env: dict[str, str]
    proc: subprocess.Popen[bytes]
    key: str | None

    def session(self) -> Any:
        return mcp_session(self.url, key=self.key)

    def stop(self, sig: int = signal.SIGINT) -> None:
        self.proc.send_signal(sig)
        self.proc.communicate(timeout=30)

    def restart(self) -> KbProcess:
        self.stop(signal.SIGKILL)
        return start_kb(self.env, self.url, self.key)


def kb_env(settings: Settings, port: int, **extra: str) -> dict[str, str]:
    env = service_env(
        settings,
        free_port(),
        KB_MCP_PORT=str(port),
        CHROMA_KB_COLLECTION=settings.chroma.kb_collection,
        ENABLE_OCR="false",
        KB_MAX_UPLOAD_BYTES=str(settings.kb.max_upload_bytes),
        **extra,
    )
    env.pop("KB_MCP_API_KEY", None)
    env.pop("KB_ENGINE_URL", None)
    env.pop("KB_API_KEY", None)
    return env | extra


def start_kb(env: dict[str, str], url: str, key: str | None) -> KbProcess:
    proc = subprocess.Popen(
        [sys.executable, "-m", "deployments.cli", "serve", "--servers", "kb"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_healthy(url, proc)
    return KbProcess(url, env, proc, key)


@dataclass
class KbStack:
    a: KbProcess
    b: KbProcess
    settings: Settings


@contextmanager
def kb_stack(base: Path, redis_url: str, chroma_dir: Path, db: int) -> Iterator[KbStack]:
    settings = service_settings(
        base,
        redis_url,
        chroma_dir,
        db,
        kb_collection=f"kb_{uuid.uuid4().hex[:16]}",
        kb_max_upload_bytes=8 * 1024 * 1024,
    )
    port_a, port_b = free_port(), free_port()
    url_a, url_b = f"http://127.0.0.1:{port_a}", f"http://127.0.0.1:{port_b}"
    a = start_kb(kb_env(settings, port_a, KB_MCP_API_KEY=KB_KEY), url_a, KB_KEY)
    try:
        b = start_kb(kb_env(settings, port_b, KB_ENGINE_URL=url_a, KB_API_KEY=FULL_KEY), url_b, None)
        stack = KbStack(a, b, settings)
        try:
            yield stack
        finally:
            stack.b.stop()
    finally:
        a.stop()


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    """A tool's structured result (success or the error envelope)."""
    result = await session.call_tool(tool, arguments)
    assert result.structured_content is not None, result
    return dict(result.structured_content)


async def ok(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    found = await call(session, tool, **arguments)
    assert found["status"] == "success", found
    return found


async def until(check: Callable[[], Any], within: float = 60.0, every: float = 0.2) -> Any:
    """Await ``check()`` until it returns something truthy; fail after ``within`` seconds."""
    return await eventually_async(check, within=within, every=every)


async def completed_job(session: ClientSession, job_id: str, within: float = 90.0) -> dict[str, Any]:
    """The job once it has finished (completed or failed)."""

    async def finished() -> dict[str, Any] | None:
        jobs = (await ok(session, "kb_jobs"))["jobs"]
        job = next((j for j in jobs if j["job_id"] == job_id), None)
        return job if job is not None and job["status"] in ("completed", "failed") else None

    return dict(await until(finished, within))


async def add_note(session: ClientSession, text: str, **arguments: Any) -> int:
    job = await ok(session, "kb_addnote", text=text, **arguments)
    done = await completed_job(session, job["job_id"])
    assert done["status"] == "completed", done
    return int(done["document_id"])


async def upload(sessions: list[ClientSession], filename: str, data: bytes, chunk: int, **start: Any) -> str:
    """Upload ``data`` in ``chunk``-byte pieces: start on the first session, chunks round-robin, finish on the
    last; returns the job id."""
    upload_id = (await ok(sessions[0], "kb_upload_start", filename=filename, total_size=len(data), **start))[
        "upload_id"
    ]
    for index in range(0, (len(data) + chunk - 1) // chunk):
        piece = base64.b64encode(data[index * chunk : (index + 1) * chunk]).decode()
        await ok(sessions[index % len(sessions)], "kb_upload_chunk", upload_id=upload_id, data=piece, chunk_index=index)
    return str((await ok(sessions[-1], "kb_upload_finish", upload_id=upload_id))["job_id"])


@asynccontextmanager
async def both(stack: KbStack) -> AsyncIterator[tuple[ClientSession, ClientSession]]:
    async with stack.a.session() as a, stack.b.session() as b:
        yield a, b
