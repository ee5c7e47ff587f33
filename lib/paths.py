"""``file_path`` arguments: read only inside ``ALLOWED_FILE_ROOTS``, and only up to ``MAX_UPLOAD_BYTES``.

With ``ALLOWED_FILE_ROOTS`` unset the one root is the data directory's ``inbox/`` (``settings.paths.inbox_dir``),
which ``ensure_file_roots`` creates when the stores are opened; set it empty to refuse every file read.
A refusal names the configured roots (where a caller should put the file), never the path it resolved.

Paths are resolved (symlinks and ``..`` followed) before the containment check, so a link inside a
root that points outside it is refused too. Error messages never echo the resolved path.
"""

from __future__ import annotations

from pathlib import Path

from lib.config import Settings
from lib.errors import FileNotFoundInStoreError, FileTooLargeError, PathNotAllowedError


def ensure_file_roots(settings: Settings) -> None:
    """Create the default inbox if it is a root; roots an operator configured are theirs to provide."""
    if settings.paths.inbox_dir.resolve() in settings.files.allowed_roots:
        settings.paths.inbox_dir.mkdir(parents=True, exist_ok=True)


def resolve_allowed(path: str | Path, roots: list[Path]) -> Path:
    """The real path of an existing regular file inside one of ``roots``."""
    if not roots:
        raise PathNotAllowedError(
            "Reading files from disk is disabled (ALLOWED_FILE_ROOTS is empty): set it to the folders to read, "
            "or unset it to read from the data directory's inbox/"
        )
    raw = str(path)
    if not raw or "\x00" in raw:
        raise PathNotAllowedError("file_path is empty or malformed")
    candidate = Path(raw).expanduser()
    try:
        real = candidate.resolve(strict=False)
    except (OSError, RuntimeError) as exc:
        raise PathNotAllowedError("file_path cannot be resolved") from exc
    if not any(real == root or real.is_relative_to(root) for root in roots):
        raise PathNotAllowedError(
            f"file_path is outside the allowed file roots ({', '.join(str(root) for root in roots)}): "
            "put the file in one of them (ALLOWED_FILE_ROOTS; unset, the data directory's inbox/)"
        )
    if not real.is_file():
        raise FileNotFoundInStoreError(f"No file at {raw!r} inside the allowed roots")
    return real


def read_allowed_file(settings: Settings, file_path: str | Path) -> bytes:
    """The bytes of a file named by a caller, only from inside ``ALLOWED_FILE_ROOTS`` and within the size limit."""
    path = resolve_allowed(file_path, settings.files.allowed_roots)
    if path.stat().st_size > settings.files.max_upload_bytes:
        raise FileTooLargeError(f"File is larger than the {settings.files.max_upload_bytes} byte limit")
    return path.read_bytes()
