"""``file_path`` arguments: read only inside ``ALLOWED_FILE_ROOTS``, and only up to ``MAX_UPLOAD_BYTES``.

Paths are resolved (symlinks and ``..`` followed) before the containment check, so a link inside a
root that points outside it is refused too. Error messages never echo the resolved path.
"""

from __future__ import annotations

from pathlib import Path

from lib.config import Settings
from lib.errors import FileNotFoundInStoreError, FileTooLargeError, PathNotAllowedError


def resolve_allowed(path: str | Path, roots: list[Path]) -> Path:
    """The real path of an existing regular file inside one of ``roots``."""
    if not roots:
        raise PathNotAllowedError("Reading files from disk is disabled: set ALLOWED_FILE_ROOTS")
    raw = str(path)
    if not raw or "\x00" in raw:
        raise PathNotAllowedError("file_path is empty or malformed")
    candidate = Path(raw).expanduser()
    try:
        real = candidate.resolve(strict=False)
    except (OSError, RuntimeError) as exc:
        raise PathNotAllowedError("file_path cannot be resolved") from exc
    if not any(real == root or real.is_relative_to(root) for root in roots):
        raise PathNotAllowedError("file_path is outside the allowed file roots")
    if not real.is_file():
        raise FileNotFoundInStoreError(f"No file at {raw!r} inside the allowed roots")
    return real


def read_allowed_file(settings: Settings, file_path: str | Path) -> bytes:
    """The bytes of a file named by a caller, only from inside ``ALLOWED_FILE_ROOTS`` and within the size limit."""
    path = resolve_allowed(file_path, settings.allowed_file_roots)
    if path.stat().st_size > settings.max_upload_bytes:
        raise FileTooLargeError(f"File is larger than the {settings.max_upload_bytes} byte limit")
    return path.read_bytes()
