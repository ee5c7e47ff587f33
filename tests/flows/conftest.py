"""Flows under one Prefect test harness for the whole session, over real Redis, Chroma, object stores
(a folder and S3 on a moto server on loopback) and the real embedding model.

Each test gets its own Chroma collection (``CHROMA_POLICY_COLLECTION``), object store and Redis
database contents, and binds that knowledge base for the flows it runs (``flows.common.bound_stores``).
Flow-run heartbeats are off: they only add a second of thread join to every run.
"""

from __future__ import annotations

import os

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from flows.common import bound_stores
from lib.composition import Stores, open_stores
from lib.config import Settings
from lib.policies.models import PolicyCreate
from tests.flows.policy_pdfs import write_policy_pdf


@pytest.fixture(scope="session", autouse=True)
def _prefect(prefect_api: str) -> str:
    """The session's one Prefect test server (``tests/conftest.py``) for every flow test."""
    return prefect_api


@pytest.fixture(params=["local", "s3"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def flow_settings(settings: Settings, request: pytest.FixtureRequest) -> Settings:
    """The per-test settings of ``tests/conftest.py`` with a Chroma collection of the test's own.

    A test that asks for ``backend`` runs once on the local folder and once on S3 (moto).
    """
    updates: dict[str, object] = {"policy_collection": f"flows_{uuid.uuid4().hex[:16]}"}
    if "backend" in request.fixturenames and request.getfixturevalue("backend") == "s3":
        endpoint = request.getfixturevalue("moto_endpoint")
        updates |= {
            "object_store_url": f"s3://policy-kb-{uuid.uuid4().hex[:12]}/objects/",
            "s3_endpoint_url": endpoint,
            "aws_access_key_id": "testing-key-id",
            "aws_secret_access_key": SecretStr("testing-secret"),
        }
    return settings.replace(**updates)


@pytest.fixture
def flow_stores(flow_settings: Settings, redis_client: object) -> Iterator[Stores]:
    """A knowledge base over the test's stores (Redis flushed), bound for every flow the test runs."""
    inbox = flow_settings.files.allowed_roots[0]
    inbox.mkdir(parents=True, exist_ok=True)
    stores = open_stores(flow_settings)
    with bound_stores(stores):
        yield stores


@pytest.fixture
def inbox(flow_settings: Settings) -> Path:
    return flow_settings.files.allowed_roots[0]


@pytest.fixture
def make_policy(flow_stores: Stores) -> Callable[..., str]:
    def make(source: str = "NPPF", title: str = "National Planning Policy Framework") -> str:
        flow_stores.policies.registry.create_policy(
            PolicyCreate(source=source, title=title, category="national_policy")
        )
        return source

    return make


@pytest.fixture
def policy_pdf(inbox: Path) -> Callable[..., Path]:
    """Write a small real policy PDF into the allowed inbox; see ``tests.flows.policy_pdfs``."""

    def make(name: str, edition: str = "", **kwargs: object) -> Path:
        return write_policy_pdf(inbox / name, edition=edition, **kwargs)

    return make
