"""What the fault tests share: a few stack processes on free ports, a service in this process over them,
a policy PDF large enough that its ingestion is still embedding when a store is broken, and uploads."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from pydantic import SecretStr

from deployments.stack.layout import StackLayout
from deployments.stack.process import StackProcess, start_process
from lib.composition import open_stores
from lib.config import Settings, load_settings
from lib.policies.audit import AuditReport
from lib.policies.audit_repair import RepairAction, audit_and_repair
from lib.policies.models import Revision
from mcp_service.policy_kb import create_app
from tests.flows.policy_pdfs import policy_pdf_bytes
from tests.mcp_service.conftest import FULL_KEY, READ_KEY, Service, running
from tests.polling import eventually

SOURCE = "FAULT_POLICY"
_PLACES = (
    "the market town",
    "a village",
    "the river valley",
    "the urban fringe",
    "the conservation area",
    "an employment site",
    "the countryside",
)
_CONCERNS = (
    "local character",
    "movement",
    "landscape",
    "drainage",
    "heritage",
    "biodiversity",
    "noise",
    "daylight",
    "parking",
    "flood risk",
    "open space",
)
BIG_CHAPTERS = tuple(
    (
        f"Chapter on topic {n}",
        tuple(
            f"Topic {n} paragraph {p}: development proposals in {_PLACES[(12 * n + p) % 7]} should demonstrate "
            f"how the scheme responds to {_CONCERNS[(12 * n + p) % 11]}, {_CONCERNS[(5 * n + p) % 11]} and the "
            f"amenity of neighbouring occupiers, with evidence proportionate to the scale of the proposal."
            for p in range(12)
        ),
    )
    for n in range(14)
)
"""About 170 paragraphs: a few seconds of embedding on two cores, the window in which a store is broken. Their
wording varies, as real paragraphs do (identical lines in the page margins would read as running headers)."""


@contextmanager
def stack_processes(directory: Path, *names: str) -> Iterator[tuple[StackLayout, dict[str, StackProcess]]]:
    """Start the named Procfile processes on free ports in ``directory``; stop them all at the end."""
    layout = StackLayout.with_free_ports(directory)
    with ExitStack() as stack:
        processes: dict[str, StackProcess] = {}
        for name in names:
            processes[name] = start_process(layout, name)
            stack.callback(processes[name].close)
        yield layout, processes


def fault_settings(layout: StackLayout, base: Path, *, s3: bool = False, **overrides: object) -> Settings:
    """Settings of a service over the stack's Redis and Chroma (and S3 with ``s3``; else a local folder).

    ``SEARCH_CACHE_MB=0``: every search asks Chroma, so a stopped Chroma shows instead of the block cache.
    ``INGEST_RETRY_DELAY_SECONDS=0.5``: the same three retries as in production, 0.5, 1 and 2 s apart."""
    env = layout.settings_env()
    values: dict[str, object] = {
        "redis_url": env["REDIS_URL"],
        "chroma_host": env["CHROMA_HOST"],
        "chroma_port": int(env["CHROMA_PORT"]),
        "data_dir": base / "data",
        "policy_collection": f"faults_{uuid.uuid4().hex[:12]}",
        "document_collection": f"faults_docs_{uuid.uuid4().hex[:12]}",
        "object_store_url": (base / "objects").as_uri(),
        "allowed_file_roots": [base / "inbox"],
        "mcp_api_key": SecretStr(FULL_KEY),
        "mcp_read_api_key": SecretStr(READ_KEY),
        "enable_ocr": False,
        "search_cache_mb": 0,
        "processing_timeout_seconds": 0,
        "ingest_retry_delay_seconds": 0.5,
    }
    if s3:
        values |= {
            "object_store_url": f"s3://faults-{uuid.uuid4().hex[:8]}/objects/",
            "s3_endpoint_url": env["S3_ENDPOINT_URL"],
            "aws_access_key_id": env["AWS_ACCESS_KEY_ID"],
            "aws_secret_access_key": SecretStr(env["AWS_SECRET_ACCESS_KEY"]),
        }
    values.update(overrides)
    (base / "inbox").mkdir(parents=True, exist_ok=True)
    return load_settings(**values)


@contextmanager
def service(settings: Settings) -> Iterator[Service]:
    """The policy-kb service in this process (uvicorn in a thread) over ``settings``' stores."""
    stores = open_stores(settings)
    with running(create_app(settings, stores=stores, warm=False)) as url:
        yield Service(url, stores, settings)


def create_policy(svc: Service, source: str = SOURCE) -> None:
    with svc.rest() as rest:
        body = {"source": source, "title": f"{source} title", "category": "national_policy"}
        response = rest.post("/policies", json=body)
        assert response.status_code == 201, response.text


def upload(svc: Service, revision_id: str, effective_from: str, pdf: bytes, source: str = SOURCE) -> httpx.Response:
    fields = {"version_label": revision_id, "effective_from": effective_from, "revision_id": revision_id}
    with svc.rest() as rest:
        return rest.post(
            f"/policies/{source}/revisions", data=fields, files={"file": (f"{revision_id}.pdf", pdf, "application/pdf")}
        )


def note(name: str, value: object) -> None:
    """What a fault test saw, printed for the record (``pytest -rA`` shows it): the fault table of
    docs/operations.md (Under faults) quotes these lines."""
    print(f"fault-evidence {name}: {value}")


def big_pdf(edition: str) -> bytes:
    return policy_pdf_bytes(edition, chapters=BIG_CHAPTERS)


def small_pdf(edition: str) -> bytes:
    return policy_pdf_bytes(edition)


def revision(svc: Service, revision_id: str, source: str = SOURCE) -> Revision:
    return svc.stores.policies.registry.get_revision(source, revision_id)


def wait_for_phase(svc: Service, revision_id: str, phase: str, source: str = SOURCE, within: float = 60) -> None:
    """Until the ingestion of ``revision_id`` reports ``phase`` (read from Redis, as any status reader does)."""
    eventually(lambda: revision(svc, revision_id, source).progress_phase == phase, within=within, every=0.005)


def wait_settled(svc: Service, revision_id: str, source: str = SOURCE, within: float = 90) -> Revision:
    eventually(lambda: revision(svc, revision_id, source).status.value != "processing", within=within, every=0.1)
    return revision(svc, revision_id, source)


@dataclass
class AuditOutcome:
    before: AuditReport
    repairs: list[RepairAction]
    after: AuditReport

    def describe(self) -> str:
        found = ", ".join(f"{f.kind.value}({f.revision_id or f.key}: {f.detail})" for f in self.before.findings)
        done = ", ".join(f"{a.kind.value}: {a.outcome}" for a in self.repairs)
        return f"found [{found or 'nothing'}]; repaired [{done or 'nothing'}]; left {len(self.after.findings)}"


def audit(svc: Service) -> AuditOutcome:
    """The consistency audit with repair, as the ``consistency_audit`` flow runs it."""
    before, repairs, after = audit_and_repair(svc.stores.policies)
    return AuditOutcome(before, repairs, after)
