"""How a search ranks: by meaning (``dense``), by the words and codes it names (``lexical``), or both fused."""

from __future__ import annotations

from enum import StrEnum

from lib.errors import InvalidArgumentError


class SearchMode(StrEnum):
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
