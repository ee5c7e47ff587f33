"""Every error type the domain raises (``lib.errors``: one ``KBError`` subclass each): the ``error_type`` an agent
reads in the envelope, the HTTP status REST answers with, the class, and what its docstring says."""

from __future__ import annotations

import inspect

from deployments.docs.cells import first_paragraph
from lib import errors
from lib.errors import KBError


def error_classes() -> list[type[KBError]]:
    """``KBError`` and its subclasses in ``lib.errors``, in the order the module defines them."""
    found = [
        value
        for value in vars(errors).values()
        if inspect.isclass(value) and issubclass(value, KBError) and value.__module__ == errors.__name__
    ]
    return sorted(found, key=lambda cls: inspect.getsourcelines(cls)[1])


def error_table() -> str:
    """The Markdown table of the error types."""
    rows = ["| `error_type` | HTTP | class | meaning |", "| --- | --- | --- | --- |"]
    for cls in error_classes():
        meaning = first_paragraph(inspect.getdoc(cls) or "") if "__doc__" in vars(cls) and cls.__doc__ else ""
        status = getattr(cls, "http_status", "")
        rows.append(f"| `{cls.error_type}` | {status} | `{cls.__name__}` | {meaning} |")
    return "\n".join(rows) + "\n"
