"""Reading the page's form values, each mistake answered in plain words beside the form it came from, the
values typed kept (issue 44): a date the calendar does not have is a sentence to the officer, not an error
page that loses what they typed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from pydantic import ValidationError

from lib.dates import parse_date
from lib.errors import InvalidDateError


@dataclass
class Problems:
    """What was wrong with a form, field by field (the id of the input each sentence belongs to)."""

    by_field: dict[str, str] = field(default_factory=dict)

    def add(self, name: str, sentence: str) -> None:
        self.by_field.setdefault(name, sentence)

    def __bool__(self) -> bool:
        return bool(self.by_field)

    def sentences(self) -> list[str]:
        return list(self.by_field.values())


def read_day(value: str | None, name: str, label: str, problems: Problems, *, default: date | None) -> date | None:
    """``value`` as a date (blank: ``default``; ``None`` when blank and no default); a date that is not one
    is a sentence in ``problems`` under ``name``, and ``None``."""
    text = (value or "").strip()
    if not text:
        if default is None:
            problems.add(name, f"{label}: give a date, as YYYY-MM-DD.")
        return default
    try:
        return parse_date(text, field=name)
    except InvalidDateError:
        problems.add(
            name,
            f"{label}: “{text}” is not a date on the calendar. Give the day as YYYY-MM-DD, for "
            f"example {date.today().isoformat()}.",
        )
        return None


LABELS = {
    "version_label": "Version label",
    "effective_from": "In force from",
    "effective_to": "In force until",
    "source": "Short name",
    "title": "Title",
    "category": "Kind of plan",
}


def read_model_errors(exc: ValidationError, problems: Problems, names: Iterable[str] = ()) -> None:
    """A model's validation errors as one sentence per field, in the words of its form label."""
    shown = set(names)
    for error in exc.errors():
        name = str(error["loc"][0]) if error["loc"] else "form"
        if shown and name not in shown:
            name = "form"
        problems.add(name, f"{LABELS.get(name, name.replace('_', ' ').capitalize())}: {_plain(dict(error))}")


def _plain(error: Mapping[str, Any]) -> str:
    kind, message = str(error.get("type", "")), str(error.get("msg", ""))
    if kind == "string_pattern_mismatch":
        return "use capital letters, digits and underscores only, starting with a letter (for example LOCAL_PLAN_2025)."
    if kind in ("string_too_short", "missing"):
        return "this is needed."
    return message.removeprefix("Value error, ").rstrip(".") + "."
