"""Settings: the environment names operators and compose files rely on, and derived defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from lib.config import Settings


def test_defaults_live_under_the_data_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("POLICY_KB_DATA_DIR", str(tmp_path))
    settings = Settings()
    assert settings.redis_url is None
    assert settings.chroma_persist_dir == tmp_path / "chroma"
    assert settings.object_store_url == (tmp_path / "objects").as_uri()
    assert settings.redis_dir == tmp_path / "redis"
    assert settings.enable_ocr is True and settings.image_ratio_threshold == 0.7
    assert settings.policy_kb_port == 3003 and settings.document_store_port == 3002


def test_every_documented_environment_name_is_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env = {
        "REDIS_URL": "redis://redis:6379/0",
        "CHROMA_HOST": "chroma",
        "CHROMA_PORT": "8001",
        "OBJECT_STORE_URL": "s3://policy-kb/objects",
        "S3_ENDPOINT_URL": "http://minio:9000",
        "AWS_ACCESS_KEY_ID": "minio",
        "AWS_SECRET_ACCESS_KEY": "minio-secret",
        "ENABLE_OCR": "false",
        "IMAGE_RATIO_THRESHOLD": "0.5",
        "ALLOWED_FILE_ROOTS": f"{tmp_path}/a:{tmp_path}/b",
        "MCP_API_KEY": "s3cret-token",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    settings = Settings()
    assert settings.redis_url == "redis://redis:6379/0"
    assert (settings.chroma_host, settings.chroma_port) == ("chroma", 8001)
    assert settings.object_store_url == "s3://policy-kb/objects"
    assert settings.s3_endpoint_url == "http://minio:9000"
    assert settings.enable_ocr is False and settings.image_ratio_threshold == 0.5
    assert settings.allowed_file_roots == [tmp_path / "a", tmp_path / "b"]
    assert settings.mcp_api_key is not None and settings.mcp_api_key.get_secret_value() == "s3cret-token"


def test_secrets_never_appear_in_the_settings_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_API_KEY", "s3cret-token")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "minio-secret")
    text = repr(Settings()) + str(Settings().model_dump())
    assert "s3cret-token" not in text and "minio-secret" not in text


def test_an_out_of_range_threshold_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IMAGE_RATIO_THRESHOLD", "1.5")
    with pytest.raises(ValueError, match="IMAGE_RATIO_THRESHOLD"):
        Settings()
