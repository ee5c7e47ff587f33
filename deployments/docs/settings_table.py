"""Every environment name the typed settings read (``lib.config``): the field it fills, its type with its bounds,
its default and the description the code gives it. Read from the pydantic models, never from the environment."""

from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Any

from annotated_types import Ge, Gt, Le, Lt, MaxLen, MinLen
from pydantic import SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from deployments.docs.cells import cell
from lib.config import GROUPS

_LIMITS: tuple[tuple[type, str, str], ...] = (
    (Ge, "≥", "ge"),
    (Gt, ">", "gt"),
    (Le, "≤", "le"),
    (Lt, "<", "lt"),
    (MinLen, "length ≥", "min_length"),
    (MaxLen, "length ≤", "max_length"),
)
"""The pydantic metadata a bound comes as, how the table writes it, and the attribute holding its value."""


def type_name(annotation: Any) -> str:
    """A field's type as an operator reads it: optional types without ``None``, choices listed."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        annotation = next(arg for arg in typing.get_args(annotation) if arg is not type(None))
    if typing.get_origin(annotation) is typing.Literal:
        return " or ".join(f"`{choice}`" for choice in typing.get_args(annotation))
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        return f"list of {type_name(item)}"
    if annotation is SecretStr:
        return "secret"
    if annotation is Path:
        return "path"
    return getattr(annotation, "__name__", str(annotation))


def bounds(info: FieldInfo) -> str:
    """The field's bounds (``≥ 1, ≤ 5000``), from its pydantic metadata."""
    found = []
    for item in info.metadata:
        for kind, sign, attribute in _LIMITS:
            if isinstance(item, kind):
                found.append(f"{sign} {getattr(item, attribute)}")
    return ", ".join(found)


def default(info: FieldInfo) -> str:
    """The default as the table shows it: unset, a literal, empty, or computed at start (a machine's CPU count)."""
    if info.default_factory is not None:
        return "computed at start" if info.default_factory is not list else "empty"
    value = info.default
    if value is None or value is PydanticUndefined:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, Path):
        return f"`{value}`"
    return f"`{value}`"


def settings_table() -> str:
    """The Markdown table of every setting, group by group as ``Settings`` declares them."""
    rows = ["| variable | setting | type | default | what the code says |", "| --- | --- | --- | --- | --- |"]
    for group, model in GROUPS.items():
        for name, info in model.model_fields.items():
            kind = type_name(info.annotation)
            limits = bounds(info)
            rows.append(
                f"| `{info.alias}` | `{group}.{name}` | {kind}{f' ({limits})' if limits else ''} | {default(info)} "
                f"| {cell(info.description or '')} |"
            )
    return "\n".join(rows) + "\n"
