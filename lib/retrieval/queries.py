"""The checks of a search's arguments shared by every store's search (policies, application documents, notes,
governance): the question, a non-empty string of at most ``MAX_QUERY_CHARS`` characters, and how many
results it asks for."""

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


def check_result_count(value: object, maximum: int, field: str) -> int:
    """``value`` itself when an integer from 1 to ``maximum`` (``True`` is not a count), else
    ``InvalidArgumentError`` naming ``field`` (``n_results``, ``top``, ``top_k``, ...)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise InvalidArgumentError(f"{field} must be an integer from 1 to {maximum}, got {value!r}")
    return value
