"""The revision upload's multipart body, parsed by hand so its size is checked while it streams in
(FastAPI's ``UploadFile`` parameter would spool the whole body first); its schema is declared for the
OpenAPI document in ``UPLOAD_SCHEMA``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ValidationError
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.types import Message, Receive

from lib.dates import parse_date
from lib.errors import FileTooLargeError
from lib.observability.metrics import upload_bytes
from lib.policies.models import RevisionCreate
from lib.text.filetypes import FileKind, detect_file_type
from mcp_service.rest.errors import ApiError, validation_details

FORM_OVERHEAD = 64 * 1024
"""Bytes of multipart framing and text fields allowed on top of ``MAX_UPLOAD_BYTES``."""

UPLOAD_SCHEMA: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file", "version_label", "effective_from"],
                    "properties": {
                        "file": {"type": "string", "format": "binary", "description": "The PDF (checked by content)"},
                        "version_label": {"type": "string", "example": "December 2024"},
                        "effective_from": {"type": "string", "format": "date"},
                        "effective_to": {"type": "string", "format": "date", "description": "Omit: in force"},
                        "notes": {"type": "string"},
                        "revision_id": {"type": "string", "description": "Default rev_{SOURCE}_{YYYY}_{MM}"},
                    },
                }
            }
        },
    }
}


def _bounded(receive: Receive, limit: int) -> Callable[[], Awaitable[Message]]:
    """``receive`` that refuses a body longer than ``limit`` as it streams, never holding more."""
    seen = 0

    async def bounded() -> Message:
        nonlocal seen
        message = await receive()
        seen += len(message.get("body", b""))
        if seen > limit:
            raise FileTooLargeError(f"The upload is larger than the {limit - FORM_OVERHEAD} byte limit")
        return message

    return bounded


async def read_upload(request: Request, limit: int) -> tuple[bytes, RevisionCreate]:
    """The PDF (at most ``limit`` bytes) and the revision fields of an upload; ``FileTooLargeError`` as soon
    as the body is known to be too large, ``ApiError`` 422 for a missing file or invalid fields."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit + FORM_OVERHEAD:
        raise FileTooLargeError(f"The upload is larger than the {limit} byte limit")
    bounded = Request(request.scope, _bounded(request.receive, limit + FORM_OVERHEAD))
    async with bounded.form(max_files=1, max_fields=16, max_part_size=FORM_OVERHEAD) as form:
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise ApiError(422, "validation_error", "Send the PDF as the multipart field 'file'")
        if upload.size is not None and upload.size > limit:
            raise FileTooLargeError(f"The upload is larger than the {limit} byte limit")
        content = await upload.read()
        upload_bytes.labels("policy_revision").inc(len(content))
        detect_file_type(content, {FileKind.PDF}, file_name=upload.filename or "")
        fields = {k: v for k, v in form.items() if k != "file" and isinstance(v, str) and v.strip()}
    for name in ("effective_from", "effective_to"):
        if name in fields:
            parse_date(fields[name], field=name)
    try:
        return content, RevisionCreate.model_validate(fields)
    except ValidationError as exc:
        errors = validation_details(exc.errors())
        raise ApiError(422, "validation_error", "The revision fields are invalid", errors=errors) from exc
