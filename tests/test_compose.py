"""``docker-compose.yml``, checked by reading it (no Docker engine runs here, and nothing claims it ran):
every variable our services read is a setting of ``lib/config/``, every variable a third-party image
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
    "prom/prometheus": {"METRICS_API_KEY"},  # read by its entrypoint script only, into the key file it scrapes with
    "grafana/grafana": {"GF_SECURITY_ADMIN_PASSWORD"},
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
    assert set(ours) == {
        "prefect-deploy",
        "prefect-worker",
        "policy-init",
        "mcp",
        "kb",
        "governance-init",
        "governance",
    }
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
2 GB; the worker and the seeders run the same model (and OCR) in their flow runs, the governance server the same
model for its queries, so they get the same budget."""
LOADS_THE_MODEL = {"mcp", "prefect-worker", "policy-init", "governance-init", "governance"}
SMALL_MEMORY = "512M"
"""The kb MCP server in front of its engine loads no model (285 MB resident, measured); nor do Prometheus, Grafana."""
SMALL = {"kb", "prometheus", "grafana"}


def memory_limit(service: dict[str, Any]) -> str | None:
    return (((service.get("deploy") or {}).get("resources") or {}).get("limits") or {}).get("memory")


def test_every_container_that_loads_the_model_is_limited_to_the_specs_memory(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        limit = memory_limit(service)
        expected = MODEL_MEMORY if name in LOADS_THE_MODEL else SMALL_MEMORY if name in SMALL else None
        assert limit == expected, f"{name}: memory limit {limit}"


def test_every_long_running_service_restarts_alone_and_dependants_wait_for_its_health(compose: dict[str, Any]) -> None:
    """The supervision policy of ``policy-kb stack`` (decision 0027): a crashed service is restarted alone
    (``restart: unless-stopped``), one-shot jobs are not, and nothing starts before what it needs is healthy
    (or, a one-shot job, completed successfully)."""
    services = compose["services"]
    one_shot = {name for name, s in services.items() if s.get("restart") == "no"}
    assert one_shot == {"minio-init", "prefect-deploy", "policy-init", "governance-init"}
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
    shared = {
        "REDIS_URL",
        "CHROMA_HOST",
        "CHROMA_PORT",
        "OBJECT_STORE_URL",
        "S3_ENDPOINT_URL",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_DEFAULT_REGION",
        "PREFECT_API_URL",
        "POLICY_KB_DATA_DIR",
    }
    assert shared <= set(stack) & set(ours)
    assert stack["OBJECT_STORE_URL"] == ours["OBJECT_STORE_URL"]
    assert stack["AWS_ACCESS_KEY_ID"] == ours["AWS_ACCESS_KEY_ID"]
    for name, value in stack.items():
        monkeypatch.setenv(name, value)
    settings = load_settings()
    assert settings.redis.url == stack["REDIS_URL"]
    assert settings.chroma.host == stack["CHROMA_HOST"]
    assert settings.objects.url == stack["OBJECT_STORE_URL"]


SERVERS = {"mcp": {"policy-kb": 3003, "document-store": 3002}, "kb": {"kb": 3004}, "governance": {"governance": 3005}}
"""The container of each MCP server and its port (``mcp_service.__main__.SERVERS``)."""
PORT_VARIABLES = {
    "policy-kb": "POLICY_KB_PORT",
    "document-store": "DOCUMENT_STORE_PORT",
    "kb": "KB_MCP_PORT",
    "governance": "GOVERNANCE_PORT",
}


def test_all_four_servers_run_in_containers_on_every_interface_with_their_ports_published_and_checked(
    compose: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp_service.__main__ import SERVERS as SERVED

    services = compose["services"]
    assert {server for servers in SERVERS.values() for server in servers} == set(SERVED)
    exposed = {
        int(p)
        for line in (ROOT / "deployments/Dockerfile").read_text().splitlines()
        if line.startswith("EXPOSE")
        for p in line.split()[1:]
    }
    for name, ports in SERVERS.items():
        service = services[name]
        env = environment(service)
        assert service["command"] == ["policy-kb", "serve", "--servers", ",".join(ports)]
        assert env["POLICY_KB_HOST"] == "0.0.0.0" and env["METRICS_API_KEY"]
        with monkeypatch.context() as patched:
            for variable, value in env.items():
                patched.setenv(variable, value)
            settings = load_settings()
        for server, port in ports.items():
            assert env[PORT_VARIABLES[server]] == str(port) and SERVED[server].port(settings) == port
            assert f"{port}:{port}" in service["ports"] and port in exposed
            probe = " ".join(service["healthcheck"]["test"])
            assert "localhost" in probe and "/health" in probe and str(port) in probe, name


def test_kb_is_the_mcp_server_in_front_of_the_engine_the_mcp_container_serves(compose: dict[str, Any]) -> None:
    """Spec 002 draws the kb MCP server as its own container calling the engine's URL with the engine's key."""
    services = compose["services"]
    kb, mcp = environment(services["kb"]), environment(services["mcp"])
    engine = urlsplit(kb["KB_ENGINE_URL"])
    assert engine.hostname == "mcp" and engine.port == int(mcp["POLICY_KB_PORT"])
    assert kb["KB_API_KEY"] == mcp["MCP_API_KEY"] and kb["KB_MCP_API_KEY"] not in {"", kb["KB_API_KEY"]}
    assert services["kb"]["depends_on"]["mcp"]["condition"] == "service_healthy"


def test_governance_starts_once_its_corpus_is_ingested_from_the_mounted_folder(compose: dict[str, Any]) -> None:
    services = compose["services"]
    init = services["governance-init"]
    source, target, mode = init["volumes"][0].rsplit(":", 2)
    assert resolved(source) == "./docs/decisions" and (ROOT / resolved(source)).is_dir() and mode == "ro"
    assert init["command"] == ["policy-kb", "governance", "ingest", target]
    assert services["governance"]["depends_on"]["governance-init"]["condition"] == "service_completed_successfully"
    shared = ("REDIS_URL", "CHROMA_HOST", "OBJECT_STORE_URL")
    assert {k: environment(init)[k] for k in shared} == {k: environment(services["governance"])[k] for k in shared}


def test_the_observability_profile_scrapes_every_server_with_the_metrics_key(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert {n for n, s in services.items() if "observability" in (s.get("profiles") or [])} == {"prometheus", "grafana"}
    assert all(not s.get("profiles") for n, s in services.items() if n not in {"prometheus", "grafana"})
    for service in ("prometheus", "grafana"):
        for volume in services[service]["volumes"]:
            source = volume.split(":")[0]
            assert not source.startswith("./") or (ROOT / source).exists(), source
    scrape = yaml.safe_load((ROOT / "deployments/observability/prometheus.yml").read_text())
    targets = {t for job in scrape["scrape_configs"] for group in job["static_configs"] for t in group["targets"]}
    assert targets == {f"{name}:{port}" for name, ports in SERVERS.items() for port in ports.values()}
    key_file = " ".join(services["prometheus"]["entrypoint"])
    for job in scrape["scrape_configs"]:
        assert job["metrics_path"] == "/metrics" and job["authorization"]["credentials_file"] in key_file
    key = environment(services["prometheus"])["METRICS_API_KEY"]
    assert all(environment(services[name])["METRICS_API_KEY"] == key for name in SERVERS)
    assert "alerts.yml" in scrape["rule_files"][0]
