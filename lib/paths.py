"""``file_path`` arguments: read only inside ``ALLOWED_FILE_ROOTS``.

Paths are resolved (symlinks and ``..`` followed) before the containment check, so a link inside a
root that points outside it is refused too. Error messages never echo the resolved path.
"""

from __future__ import annotations

from pathlib import Path

from lib.errors import FileNotFoundInStoreError, PathNotAllowedError


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
