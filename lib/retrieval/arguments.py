"""A search's arguments as every store's search checks them (policies, application documents, notes,
governance), so every tool refuses alike: the question, how many results, and the mode that ranks them."""

from __future__ import annotations

from enum import StrEnum

from lib.errors import InvalidArgumentError

MAX_QUERY_CHARS = 2000


class SearchMode(StrEnum):
    """How a search ranks: by meaning (``dense``), by the words and codes it names (``lexical``), or both fused."""

    HYBRID = "hybrid"
    DENSE = "dense"
    LEXICAL = "lexical"


def check_mode(value: str) -> SearchMode:
    """``value`` as a ``SearchMode``; anything else is ``invalid_argument`` naming the accepted values."""
    try:
        return SearchMode(value)
    except ValueError:
        accepted = ", ".join(m.value for m in SearchMode)
        raise InvalidArgumentError(f"mode must be one of {accepted}, got {value!r}") from None


def check_query(query: object, field: str = "query") -> str:
    """``query`` itself when a non-empty string of at most ``MAX_QUERY_CHARS`` characters, else
    ``InvalidArgumentError`` naming ``field`` (the tool's argument)."""
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
