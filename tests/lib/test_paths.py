"""file_path arguments are read only inside ALLOWED_FILE_ROOTS, after resolving links and '..', and only up to
MAX_UPLOAD_BYTES."""

from __future__ import annotations

from pathlib import Path

import pytest

from lib.config import load_settings
from lib.errors import FileNotFoundInStoreError, FileTooLargeError, PathNotAllowedError
from lib.paths import ensure_file_roots, read_allowed_file, resolve_allowed


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "app").mkdir(parents=True)
    outside.mkdir()
    (root / "app" / "plan.pdf").write_bytes(b"%PDF-1.4")
    (outside / "secret.pdf").write_bytes(b"%PDF-1.4 secret")
    (root / "app" / "link.pdf").symlink_to(outside / "secret.pdf")
    (root / "dirlink").symlink_to(outside)
    return root, outside


def test_a_file_inside_the_root_resolves(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    assert resolve_allowed(root / "app" / "plan.pdf", [root]) == (root / "app" / "plan.pdf").resolve()


@pytest.mark.parametrize(
    "relative",
    ["app/../../outside/secret.pdf", "app/link.pdf", "dirlink/secret.pdf"],
    ids=["dot-dot", "file-symlink-out", "dir-symlink-out"],
)
def test_escapes_from_the_root_are_refused_without_naming_the_target(layout: tuple[Path, Path], relative: str) -> None:
    root, outside = layout
    with pytest.raises(PathNotAllowedError) as err:
        resolve_allowed(f"{root}/{relative}", [root])
    assert str(outside) not in err.value.message and "secret" not in err.value.message


def test_absolute_paths_elsewhere_are_refused_naming_the_roots_to_use(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    with pytest.raises(PathNotAllowedError) as err:
        resolve_allowed("/etc/passwd", [root])
    assert str(root) in err.value.message and "passwd" not in err.value.message


def test_an_empty_root_list_means_no_file_reads(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    with pytest.raises(PathNotAllowedError, match="ALLOWED_FILE_ROOTS"):
        resolve_allowed(root / "app" / "plan.pdf", [])
    with pytest.raises(PathNotAllowedError, match="ALLOWED_FILE_ROOTS"):
        read_allowed_file(load_settings(allowed_file_roots=[]), root / "app" / "plan.pdf")


def test_unset_roots_default_to_the_data_directory_inbox_created_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ALLOWED_FILE_ROOTS", raising=False)
    settings = load_settings(data_dir=tmp_path / "data")
    inbox = (tmp_path / "data" / "inbox").resolve()
    assert settings.files.allowed_roots == [inbox] and not inbox.exists()
    ensure_file_roots(settings)
    (inbox / "plan.pdf").write_bytes(b"%PDF-1.4")
    assert read_allowed_file(settings, inbox / "plan.pdf") == b"%PDF-1.4"
    with pytest.raises(PathNotAllowedError) as err:
        read_allowed_file(settings, tmp_path / "elsewhere.pdf")
    assert str(inbox) in err.value.message and "inbox/" in err.value.message


def test_configured_roots_replace_the_default_inbox_and_are_not_created(tmp_path: Path) -> None:
    settings = load_settings(data_dir=tmp_path / "data", allowed_file_roots=[tmp_path / "raw"])
    ensure_file_roots(settings)
    assert settings.files.allowed_roots == [(tmp_path / "raw").resolve()]
    assert not (tmp_path / "data" / "inbox").exists() and not (tmp_path / "raw").exists()


def test_a_missing_file_inside_the_root_is_file_not_found(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    with pytest.raises(FileNotFoundInStoreError):
        resolve_allowed(root / "app" / "missing.pdf", [root])
    with pytest.raises(FileNotFoundInStoreError):
        resolve_allowed(root / "app", [root])


def test_nul_bytes_are_refused(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    with pytest.raises(PathNotAllowedError):
        resolve_allowed(f"{root}/app/plan.pdf\x00.txt", [root])


def test_a_file_inside_the_root_is_read_up_to_the_upload_limit(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    plan = root / "app" / "plan.pdf"
    exact = load_settings(allowed_file_roots=[root], max_upload_bytes=plan.stat().st_size)
    assert read_allowed_file(exact, plan) == b"%PDF-1.4"
    with pytest.raises(FileTooLargeError):
        read_allowed_file(load_settings(allowed_file_roots=[root], max_upload_bytes=plan.stat().st_size - 1), plan)


def test_reading_applies_the_path_rule_before_the_size_limit(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    with pytest.raises(PathNotAllowedError):
        read_allowed_file(load_settings(allowed_file_roots=[root], max_upload_bytes=1), outside / "secret.pdf")
