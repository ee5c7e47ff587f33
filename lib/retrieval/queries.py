"""The one check of a search's question, shared by every store's search (policies, application documents,
notes, governance): a non-empty string of at most ``MAX_QUERY_CHARS`` characters."""

from __future__ import annotations

from lib.errors import InvalidArgumentError

MAX_QUERY_CHARS = 2000


def check_query(query: object, field: str = "query") -> str:
    """``query`` itself when usable, else ``InvalidArgumentError`` naming ``field`` (the tool's argument)."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidArgumentError(f"{field} must be a non-empty string")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidArgumentError(f"{field} is longer than {MAX_QUERY_CHARS} characters")
    return query
