"""``docker-compose.yml``, checked by reading it (no Docker engine runs here, and nothing claims it ran):
every variable our services read is a setting of ``lib/config.py``, every variable a third-party image
reads is one that image documents, and every service a service names (``depends_on``, a URL's host)
exists."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from lib.config import GROUPS, load_settings

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "docker-compose.yml"
OUR_IMAGE = "policy-kb:local"

THIRD_PARTY_FOR_OUR_IMAGE = {
    # Prefect's own settings, read by the Prefect client inside our processes.
    "PREFECT_API_URL": "https://docs.prefect.io/v3/develop/settings-ref#api-url",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "https://docs.prefect.io/v3/develop/settings-ref",
}
THIRD_PARTY_IMAGES = {
    "redis": set(),
    "minio/minio": {"MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD"},
    "minio/mc": {"MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD"},  # read by its entrypoint script only
    "chromadb/chroma": {"ANONYMIZED_TELEMETRY"},
    "prefecthq/prefect": {"PREFECT_SERVER_ANALYTICS_ENABLED", "PREFECT_UI_API_URL", "PREFECT_HOME"},
}
_DEFAULTED = re.compile(r"\$\{(?P<name>[A-Z0-9_]+)(?::?-(?P<default>[^}]*))?\}")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


def settings_aliases() -> set[str]:
    """Every environment name a settings group reads."""
    return {field.alias for group in GROUPS.values() for field in group.model_fields.values() if field.alias}


def resolved(value: object) -> str:
    """A value as compose would see it with no overrides: ``${VAR:-default}`` → ``default``."""
    return _DEFAULTED.sub(lambda m: m.group("default") or "", str(value))


def environment(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {name: resolved(value) for name, value in env.items()}


def image_family(service: dict[str, Any]) -> str:
    return str(service.get("image", "")).split(":")[0]


def test_our_services_set_only_known_settings(compose: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    known = settings_aliases() | set(THIRD_PARTY_FOR_OUR_IMAGE)
    ours = {name: s for name, s in compose["services"].items() if s.get("image") == OUR_IMAGE}
    assert set(ours) == {"prefect-deploy", "prefect-worker", "policy-init", "mcp"}
    for name, service in ours.items():
        unknown = set(environment(service)) - known
        assert not unknown, f"{name} sets variables no setting reads: {sorted(unknown)}"
        with monkeypatch.context() as env:
            for variable, value in environment(service).items():
                env.setenv(variable, value)
            load_settings()  # every value is one its setting accepts


def test_third_party_services_set_only_variables_their_image_documents(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        if service.get("image") == OUR_IMAGE:
            continue
        family = image_family(service)
        assert family in THIRD_PARTY_IMAGES, f"{name}: unreviewed image {service.get('image')}"
        unknown = set(environment(service)) - THIRD_PARTY_IMAGES[family]
        assert not unknown, f"{name} sets {sorted(unknown)}, which {family} does not read"


def test_every_referenced_service_exists(compose: dict[str, Any]) -> None:
    services = set(compose["services"])
    local = {"localhost", "127.0.0.1", "0.0.0.0"}
    for name, service in compose["services"].items():
        depends = service.get("depends_on") or []
        assert set(depends) <= services, f"{name} depends on unknown {set(depends) - services}"
        for key, value in environment(service).items():
            if "://" in value and not value.startswith(("file://", "s3://")):
                host = urlsplit(value).hostname
                assert host in services | local, f"{name}.{key} points at {host}, which is not a service"
        if name == "minio-init":
            assert "http://minio:9000" in " ".join(service["entrypoint"])
        if service.get("environment", {}).get("CHROMA_HOST"):
            assert service["environment"]["CHROMA_HOST"] in services


def test_the_stack_has_what_the_design_names_wired_as_the_settings_expect(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert {"redis", "minio", "minio-init", "chroma", "prefect-server", "prefect-worker", "mcp"} <= set(services)
    assert "--appendonly" in services["redis"]["command"] and "yes" in services["redis"]["command"]
    mcp = services["mcp"]
    assert mcp["command"] == ["policy-kb", "serve", "--servers", "policy-kb,document-store"]
    assert {"3003:3003", "3002:3002"} <= set(mcp["ports"])
    assert environment(mcp)["POLICY_KB_PORT"] == "3003" and environment(mcp)["DOCUMENT_STORE_PORT"] == "3002"
    assert environment(mcp)["POLICY_KB_HOST"] == "0.0.0.0"
    bucket = urlsplit(environment(mcp)["OBJECT_STORE_URL"]).hostname
    assert f"local/{bucket}" in " ".join(services["minio-init"]["entrypoint"])
    assert environment(mcp)["AWS_ACCESS_KEY_ID"] == environment(services["minio"])["MINIO_ROOT_USER"]
    worker = services["prefect-worker"]["command"]
    pools = {d["work_pool"]["name"] for d in yaml.safe_load((ROOT / "prefect.yaml").read_text())["deployments"]}
    assert worker[worker.index("--pool") + 1] in pools and "process" in worker


def test_the_image_builds_from_files_that_exist(compose: dict[str, Any]) -> None:
    build = compose["x-policy-kb-image"]["build"]
    dockerfile = ROOT / build["context"] / build["dockerfile"]
    for line in dockerfile.read_text().splitlines():
        if line.startswith("COPY ") and not line.startswith("COPY . "):
            for source in line.split()[1:-1]:
                assert (ROOT / source).is_file(), source


MODEL_MEMORY = "2G"
"""Spec 000 NFR-002 (the policy-kb MCP container) and spec 003 NFR-003 (the document store it also serves):
2 GB; the worker and the seeder run the same model (and OCR) in their flow runs, so they get the same budget."""
LOADS_THE_MODEL = {"mcp", "prefect-worker", "policy-init"}


def test_every_container_that_loads_the_model_is_limited_to_the_specs_memory(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        limit = (((service.get("deploy") or {}).get("resources") or {}).get("limits") or {}).get("memory")
        assert limit == (MODEL_MEMORY if name in LOADS_THE_MODEL else None), f"{name}: memory limit {limit}"


def test_every_long_running_service_restarts_alone_and_dependants_wait_for_its_health(compose: dict[str, Any]) -> None:
    """The supervision policy of ``policy-kb stack`` (decision 0027): a crashed service is restarted alone
    (``restart: unless-stopped``), one-shot jobs are not, and nothing starts before what it needs is healthy
    (or, a one-shot job, completed successfully)."""
    services = compose["services"]
    one_shot = {name for name, s in services.items() if s.get("restart") == "no"}
    assert one_shot == {"minio-init", "prefect-deploy", "policy-init"}
    for name, service in services.items():
        if name not in one_shot:
            assert service.get("healthcheck", {}).get("test"), f"{name} has no health check"
            assert service.get("restart") == "unless-stopped", f"{name}: restart {service.get('restart')}"
        assert isinstance(service.get("depends_on") or {}, dict), f"{name}: depends_on without conditions"
        for dependency, condition in (service.get("depends_on") or {}).items():
            expected = "service_completed_successfully" if dependency in one_shot else "service_healthy"
            assert condition["condition"] == expected, f"{name} -> {dependency}"
    needs = {"prefect-worker": {"prefect-server", "redis", "chroma"}, "mcp": {"prefect-server", "redis", "chroma"}}
    for name, dependencies in needs.items():
        assert dependencies <= set(services[name]["depends_on"]), f"{name} starts before {dependencies}"


def test_the_local_stack_sets_the_same_settings_names_as_compose(
    compose: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``policy-kb stack up`` gives its replicas and worker the stores under the names compose uses."""
    from deployments.stack.layout import StackLayout

    stack = StackLayout.with_free_ports(tmp_path).settings_env()
    ours = environment(compose["services"]["mcp"])
    assert set(stack) <= settings_aliases() | set(THIRD_PARTY_FOR_OUR_IMAGE)
    shared = {"REDIS_URL", "CHROMA_HOST", "CHROMA_PORT", "OBJECT_STORE_URL", "S3_ENDPOINT_URL", "AWS_ACCESS_KEY_ID",
              "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION", "PREFECT_API_URL", "POLICY_KB_DATA_DIR"}  # fmt: skip
    assert shared <= set(stack) & set(ours)
    assert stack["OBJECT_STORE_URL"] == ours["OBJECT_STORE_URL"]
    assert stack["AWS_ACCESS_KEY_ID"] == ours["AWS_ACCESS_KEY_ID"]
    for name, value in stack.items():
        monkeypatch.setenv(name, value)
    settings = load_settings()
    assert settings.redis.url == stack["REDIS_URL"]
    assert settings.chroma.host == stack["CHROMA_HOST"]
    assert settings.objects.url == stack["OBJECT_STORE_URL"]
