"""The text an agent reads for a governance answer: each hit headed by its citation
``[id] (file_path) score`` as PRD-0010's MCP server prints it, then where it stands (type, status, the
documents that replace it or that it replaces), then what the document itself says, quoted (``lib.quoting``:
its title, the heading and the passage on ``> `` lines), so a passage that reads like an instruction never
reads as the server's words (issue 46, item 3).

Rendered from the answer's JSON form, so the MCP tool (from its structured content) and the LangChain
tool (from the model) print the same text.
"""

from __future__ import annotations

from typing import Any

from lib.quoting import quoted_block, quoted_field

SEPARATOR = "\n\n---\n\n"


def citation(hit: dict[str, Any]) -> str:
    meta = hit["metadata"]
    return f"[{meta['id']}] ({meta['file_path']}) {hit['score']:.3f}"


def _standing(meta: dict[str, Any]) -> str:
    parts = [str(meta.get("type") or ""), f"status {meta.get('status') or 'unknown'}"]
    if meta.get("created"):
        parts.append(f"created {meta['created']}")
    if meta.get("superseded_by"):
        parts.append("superseded by " + ", ".join(meta["superseded_by"]))
    if meta.get("replaces"):
        parts.append("replaces " + ", ".join(meta["replaces"]))
    return " · ".join(p for p in parts if p)


def render_hit(hit: dict[str, Any]) -> str:
    meta = hit["metadata"]
    lines = [citation(hit), _standing(meta)]
    lines += [quoted_field(name, str(meta[name])) for name in ("title", "heading") if meta.get(name)]
    lines += quoted_block(str(hit["text"]))
    return "\n".join(lines)


def render_answer(answer: dict[str, Any]) -> str:
    """Every hit, best first; a line saying so when nothing matched."""
    results = answer.get("results") or []
    if not results:
        when = f" (as of {answer['as_of']})" if answer.get("as_of") else ""
        return f"No governance document matches{when}: {answer.get('question', '')!r}"
    return SEPARATOR.join(render_hit(hit) for hit in results)
