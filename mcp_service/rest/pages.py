"""The REST route of page images (issue 26): ``GET .../revisions/{id}/pages/{n}.png``, the same
``lib.policies.page_images.page_image`` call as the MCP tool ``get_page_image``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response

from lib.policies.page_images import DEFAULT_DPI, page_image
from mcp_service.rest.errors import error_responses
from mcp_service.rest.routes import Policies

router = APIRouter()


@router.get(
    "/policies/{source}/revisions/{revision_id}/pages/{page_number}.png",
    response_class=Response,
    tags=["revisions"],
    responses={200: {"content": {"image/png": {}}}, **error_responses(400, 404)},
)
def get_page(
    source: str,
    revision_id: str,
    page_number: int,
    stores: Policies,
    highlight: Annotated[str | None, Query(max_length=4000, description="Text to highlight")] = None,
    chunk_id: Annotated[str | None, Query(description="A chunk of this revision to highlight")] = None,
    dpi: Annotated[int, Query(ge=50, le=200)] = DEFAULT_DPI,
) -> Response:
    """One page of the revision's original as PNG, the text or chunk asked for highlighted in yellow; the page
    as the document prints it in ``X-Printed-Page`` (left out where the page prints no number)."""
    image = page_image(
        stores, source, page_number, revision_id=revision_id, highlight=highlight, chunk_id=chunk_id, dpi=dpi
    )
    headers = {"Cache-Control": "private, max-age=3600", "X-Highlighted": str(image.render.highlighted)}
    if image.printed_page:  # the page as printed ("57", "iv", "A-3", "62-63"); absent where none is printed
        headers["X-Printed-Page"] = image.printed_page
    return Response(image.render.png, media_type="image/png", headers=headers)
