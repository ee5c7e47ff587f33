"""Document text quoted in a text rendering: every line of it starts with ``QUOTE_PREFIX`` and no line of the
server's own words does, so a reader (and ``mcp_service.tools.document_content``, which annotates those lines as
document content) can always tell a document's words from the server's (issue 46, item 3; decision 0045).

Shared by every text rendering: the MCP tools' (``mcp_service.tools.renderings``) and the governance answer's
(``lib.integrations.citations``, which the MCP tool and the LangChain tool both print).
"""

from __future__ import annotations

QUOTE_PREFIX = ">"
"""How a rendering quotes document text: each line of it starts with this, and no other line does."""
SNIPPET_CHARS = 240
"""A quoted snippet's length at most, in characters."""
ANSWER_CHARS = 6000
"""How much of a text that is the answer itself (a section, a document) is quoted, as a block of lines."""


def quoted(text: str, limit: int = SNIPPET_CHARS) -> str:
    """Document text as a one-line quoted snippet, cut at a word before ``limit``."""
    flat = " ".join(str(text).split()).replace('"', "'")
    if len(flat) > limit:
        flat = flat[:limit].rsplit(" ", 1)[0] + " ..."
    return f'{QUOTE_PREFIX} "{flat}"'


def quoted_field(name: str, text: str, limit: int = SNIPPET_CHARS) -> str:
    """A short field read from a document (a chapter, heading or title) as a quoted line: ``> chapter: "..."``."""
    return f"{QUOTE_PREFIX} {name}: " + quoted(text, limit).removeprefix(f"{QUOTE_PREFIX} ")


def quoted_block(text: str, limit: int = ANSWER_CHARS) -> list[str]:
    """Document text that is the answer itself, as quoted lines (``> ``), cut at a word before ``limit``."""
    body = str(text).strip()
    cut = len(body) > limit
    if cut:
        body = body[:limit].rsplit(" ", 1)[0]
    lines = [f"{QUOTE_PREFIX} " + line.rstrip() if line.strip() else QUOTE_PREFIX for line in body.splitlines()]
    more = f"{QUOTE_PREFIX} ... ({len(str(text)) - len(body)} more characters in the structured content)"
    return [*lines, more] if cut else lines
