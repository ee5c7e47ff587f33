"""REST bodies with document text marked as the MCP tools' structured content marks it (issue 46, item 3; decision
0045): every object holding text read from a document gets ``content_origin: "document"`` and ``document_fields``,
and the body a ``document_content`` ``{origin, paths, notice}`` (``tools.document_content.mark_json``). Fields
are only added, never renamed, so the spec's shapes hold.

The default response class of the REST apps (``rest.app``, ``rest.governance``): a route's return value is marked
after its response model has shaped it. Answers a route builds itself (errors, health) are the server's own words.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from mcp_service.tools.document_content import mark_json


class DocumentMarkedJSONResponse(JSONResponse):
    """A JSON response whose document text is marked as document content."""

    def render(self, content: Any) -> bytes:
        return super().render(mark_json(content))
