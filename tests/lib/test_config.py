"""Settings: the environment names operators and compose files rely on, their groups, and derived defaults."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import types
import typing
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import SecretStr
from pydantic.fields import FieldInfo

from lib.config import GROUPS, OVERRIDES, Settings, load_settings

ROOT = Path(__file__).resolve().parents[2]
OPERATIONS = ROOT / "docs" / "operations.md"

# Every group field: (group, field name, environment name).
FIELDS = [(group, name, info.alias or "") for group, cls in GROUPS.items() for name, info in cls.model_fields.items()]


def _sample(info: FieldInfo, env_name: str, tmp_path: Path) -> tuple[str, object]:
    """A value for the field other than its default: the environment text and what the field must then hold."""
    annotation = info.annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        annotation = next(arg for arg in typing.get_args(annotation) if arg is not type(None))
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    default = info.default
    if annotation is bool:
        return str(not default).lower(), not default
    if annotation is int:
        value = default + 1 if isinstance(default, int) else 3
        return str(value), value
    if annotation is float:
        return "0.5", 0.5
    if annotation is Path:
        return str(tmp_path / env_name.lower()), tmp_path / env_name.lower()
    if annotation is SecretStr:
        return f"secret-{env_name.lower()}", f"secret-{env_name.lower()}"
    if typing.get_origin(annotation) is Literal:
        other = next(choice for choice in typing.get_args(annotation) if choice != default)
        return other, other
    if typing.get_origin(annotation) is list and typing.get_args(annotation) == (str,):
        return "sentinel-a:26379,sentinel-b:26380", ["sentinel-a:26379", "sentinel-b:26380"]
    if typing.get_origin(annotation) is list:
        return f"{tmp_path}/a:{tmp_path}/b", [tmp_path / "a", tmp_path / "b"]
    assert annotation is str, f"{env_name}: no sample for {annotation}"
    return f"set-{env_name.lower()}", f"set-{env_name.lower()}"


def _held(settings: Settings, group: str, name: str) -> Any:
    value = getattr(getattr(settings, group), name)
    return value.get_secret_value() if isinstance(value, SecretStr) else value


def test_defaults_live_under_the_data_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("POLICY_KB_DATA_DIR", str(tmp_path))
    settings = Settings()
    assert settings.redis.url is None
    assert settings.chroma.persist_dir == tmp_path / "chroma"
    assert settings.objects.url == (tmp_path / "objects").as_uri()
    assert settings.paths.redis_dir == tmp_path / "redis"
    assert settings.files.allowed_roots == [tmp_path / "inbox"]
    assert settings.extraction.enable_ocr is True and settings.extraction.image_ratio_threshold == 0.7
    assert settings.service.policy_kb_port == 3003 and settings.service.document_store_port == 3002


def test_every_field_has_an_environment_name_and_one_override_name() -> None:
    assert all(env_name for _, _, env_name in FIELDS)
    assert len({env_name for _, _, env_name in FIELDS}) == len(FIELDS)
    assert sorted(OVERRIDES.values()) == sorted(f"{group}.{name}" for group, name, _ in FIELDS)


def test_every_environment_name_lands_in_its_field(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    expected = {}
    for group, name, env_name in FIELDS:
        text, value = _sample(GROUPS[group].model_fields[name], env_name, tmp_path)
        monkeypatch.setenv(env_name, text)
        expected[group, name] = value
    settings = load_settings()
    assert {key: _held(settings, *key) for key in expected} == expected


def test_every_environment_name_is_documented_for_operators() -> None:
    section = OPERATIONS.read_text().split("\n## Settings\n", 1)[1].split("\n## ", 1)[0]
    documented = {
        name
        for row in section.splitlines()
        if row.startswith("| `")
        for name in re.findall(r"`([A-Z0-9_]+)`", row.split(" | ")[0])
    }
    names = {env_name for _, _, env_name in FIELDS}
    assert documented <= names
    assert all(f"`{name}`" in section for name in names)


def test_field_names_are_not_environment_names(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    baseline = load_settings().model_dump()
    env_names = {env_name for _, _, env_name in FIELDS}
    for _, name, _ in FIELDS:
        if name.upper() not in env_names:
            monkeypatch.setenv(name.upper(), "not-a-setting")
    assert load_settings().model_dump() == baseline


def test_keyword_overrides_take_the_flat_names_and_win_over_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("REDIS_URL", "redis://redis:6379/0")
    monkeypatch.setenv("CHROMA_HOST", "chroma")
    for flat, path in OVERRIDES.items():
        group, name = path.split(".")
        env_name = GROUPS[group].model_fields[name].alias or ""
        _, value = _sample(GROUPS[group].model_fields[name], env_name, tmp_path)
        assert _held(load_settings(**{flat: value}), group, name) == value, flat
    settings = load_settings(redis_url=None, data_dir=tmp_path)
    assert (settings.redis.url, settings.chroma.host) == (None, "chroma")
    assert settings.chroma.persist_dir == tmp_path / "chroma"
    with pytest.raises(TypeError, match="redis_uri"):
        load_settings(redis_uri="redis://typo")


def test_replace_returns_an_independent_copy(tmp_path: Path) -> None:
    settings = load_settings(data_dir=tmp_path)
    copy = settings.replace(kb_collection="kb_other", mcp_api_key=SecretStr("key"))
    assert (copy.chroma.kb_collection, settings.chroma.kb_collection) == ("kb_other", "kb_docs")
    assert copy.auth.api_key is not None and settings.auth.api_key is None
    copy.extraction.enable_ocr = not settings.extraction.enable_ocr
    assert copy.extraction.enable_ocr != settings.extraction.enable_ocr
    with pytest.raises(TypeError):
        settings.replace(no_such_setting=1)


def test_secrets_never_appear_in_the_settings_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_API_KEY", "s3cret-token")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "minio-secret")
    monkeypatch.setenv("KB_API_KEY", "kb-secret")
    text = repr(Settings()) + str(Settings().model_dump())
    assert "s3cret-token" not in text and "minio-secret" not in text and "kb-secret" not in text


def test_an_out_of_range_threshold_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IMAGE_RATIO_THRESHOLD", "1.5")
    with pytest.raises(ValueError, match="IMAGE_RATIO_THRESHOLD"):
        Settings()


def test_sentinels_are_host_port_pairs_and_ask_for_one_replica_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().redis.replicas_to_acknowledge == 0
    monkeypatch.setenv("REDIS_SENTINELS", " 10.0.0.1:26379, sentinel-b:26380 ")
    redis = Settings().redis
    assert redis.sentinel_addresses == [("10.0.0.1", 26379), ("sentinel-b", 26380)]
    assert (redis.sentinel_master, redis.replicas_to_acknowledge) == ("policy-kb", 1)
    monkeypatch.setenv("REDIS_MIN_REPLICAS_ACKED", "0")
    assert Settings().redis.replicas_to_acknowledge == 0
    monkeypatch.setenv("REDIS_SENTINELS", "10.0.0.1")
    with pytest.raises(ValueError, match="REDIS_SENTINELS"):
        Settings()


def test_chroma_collection_from_spec_004_names_the_governance_collection(monkeypatch: pytest.MonkeyPatch) -> None:
    """PRD-0010's configuration sets ``CHROMA_COLLECTION: governance_docs``; our own name wins when both are set."""
    monkeypatch.setenv("CHROMA_COLLECTION", "spec_governance")
    assert load_settings().chroma.governance_collection == "spec_governance"
    monkeypatch.setenv("CHROMA_GOVERNANCE_COLLECTION", "our_governance")
    assert load_settings().chroma.governance_collection == "our_governance"


def test_search_threads_default_to_the_cpus_the_process_may_run_on(tmp_path: Path) -> None:
    """A server pinned to one core (as ``taskset`` pins it: the process's affinity, set here before the settings
    load) runs one search at a time, not one per core of the machine:
    two threads on one core starved the event loop under overload (decision 0051)."""
    env = {k: v for k, v in os.environ.items() if k not in ("SEARCH_THREADS", "SEARCH_LEG_HELPERS")}
    env["POLICY_KB_DATA_DIR"] = str(tmp_path)
    script = "from lib.config import load_settings; s = load_settings().search; print(s.threads, s.leg_helpers)"
    pin = "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
    pinned = subprocess.run(
        [sys.executable, "-c", pin + script],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert pinned.stdout.split() == ["1", "0"]
    unpinned = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    )
    cpus = len(os.sched_getaffinity(0))
    assert unpinned.stdout.split() == [str(min(cpus, 64)), str(min(cpus - 1, 64))]
