"""Calendar dates as the specs store them: ISO strings at the edges, YYYYMMDD integers in Chroma,
days since the Unix epoch as sorted-set scores in Redis."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Annotated

from pydantic import BeforeValidator, ValidationInfo

from lib.errors import InvalidDateError

IN_FORCE_INT = 99991231
"""The ``effective_to`` stored in chunk metadata for a revision that is still in force."""

_EPOCH = date(1970, 1, 1)
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_date(value: str | date, *, field: str = "date") -> date:
    """Parse a strict ``YYYY-MM-DD`` string. Anything else (numbers, times, slashes, impossible days) is refused."""
    if isinstance(value, date):
        return value
    if not isinstance(value, str) or not _ISO_DATE.match(value.strip()):
        raise InvalidDateError(f"{field} must be an ISO date YYYY-MM-DD, got {_shown(value)}", field=field)
    try:
        return date.fromisoformat(value.strip())
    except ValueError as exc:
        raise InvalidDateError(f"{field} is not a real calendar date: {_shown(value)}", field=field) from exc


def _shown(value: object) -> str:
    """The refused value as an error message quotes it: its repr, cut to a few dozen characters."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


def _strict(value: object, info: ValidationInfo) -> object:
    """A date as pydantic takes it where a value arrives from outside: a ``date`` or a strict ISO string, never a
    number (lax parsing reads ``0`` as 1970-01-01, a Unix timestamp) nor a datetime."""
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    try:
        return parse_date(value, field=info.field_name or "date")  # type: ignore[arg-type]
    except InvalidDateError as exc:
        raise ValueError(exc.message) from exc


IsoDate = Annotated[date, BeforeValidator(_strict)]
"""A pydantic field or flow parameter that takes a date only as ``YYYY-MM-DD`` (or a ``date``)."""


def to_int(day: date | None) -> int:
    """YYYYMMDD integer; ``None`` (open-ended) becomes ``IN_FORCE_INT``."""
    return IN_FORCE_INT if day is None else day.year * 10000 + day.month * 100 + day.day


def epoch_days(day: date) -> int:
    """Score of a revision in ``policy_revisions:{source}`` (spec 000 FR-007)."""
    return (day - _EPOCH).days


def day_before(day: date) -> date:
    return day - timedelta(days=1)


def iso(day: date | None) -> str | None:
    return None if day is None else day.isoformat()
