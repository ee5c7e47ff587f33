"""The governance server under test (spec 004), for real: a handful of real governance documents
ingested by ``lib.governance`` into a collection of their own and served by uvicorn on a free port.

- ``governance_service``: once per session, the fixture corpus (``tests/fixtures/governance``: PEPs 513 →
  600 and 722 → 723, a MADR record, PRD-0010), no API key (spec 004 NF2: read-only queries need none).
- ``empty_governance_service``: once per session, a collection nothing was ingested into.

Imported by ``tests/mcp_service/conftest.py`` so every test file shares one of each.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from lib.composition import open_stores
from lib.config import Settings
from lib.governance.ingest import ingest_governance_corpus_files
from mcp_service.governance import create_app
from tests.mcp_service.conftest import Service, running, service_settings

GOVERNANCE_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "governance"
GOVERNANCE_DB = 9
"""A database of its own: the NPPF service flushes its database (7) when it starts, whichever test starts it."""


def governance_settings(base: Path, redis_url: str, chroma_dir: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "governance_collection": f"gov_{uuid.uuid4().hex[:16]}",
        "mcp_api_key": None,
        "mcp_read_api_key": None,
    }
    values.update(overrides)
    return service_settings(base, redis_url, chroma_dir, GOVERNANCE_DB, **values)


@pytest.fixture(scope="session")
def governance_service(service_base: Path, redis_url: str, chroma_dir: Path) -> Iterator[Service]:
    settings = governance_settings(service_base, redis_url, chroma_dir)
    stores = open_stores(settings)
    report = ingest_governance_corpus_files(stores.governance, GOVERNANCE_FIXTURES)
    assert not report.failed and len(report.added) == len(list(GOVERNANCE_FIXTURES.rglob("*.*"))), report
    with running(create_app(settings, stores=stores, warm=False)) as url:
        yield Service(url, stores, settings)


@pytest.fixture(scope="session")
def empty_governance_service(service_base: Path, redis_url: str, chroma_dir: Path) -> Iterator[Service]:
    settings = governance_settings(service_base, redis_url, chroma_dir)
    stores = open_stores(settings)
    with running(create_app(settings, stores=stores, warm=False)) as url:
        yield Service(url, stores, settings)
