"""Blocks of a Markdown file that a generator owns, between ``<!-- BEGIN GENERATED: name -->`` and
``<!-- END GENERATED: name -->``: read one, or replace its body and keep the rest of the file as it is."""

from __future__ import annotations

import re


def _block(name: str) -> re.Pattern[str]:
    return re.compile(
        rf"(<!-- BEGIN GENERATED: {re.escape(name)} -->\n)(.*?)(<!-- END GENERATED: {re.escape(name)} -->)", re.DOTALL
    )


def read_block(text: str, name: str) -> str:
    """The body of block ``name``; a missing or repeated block is a ``ValueError``."""
    found = _block(name).findall(text)
    if len(found) != 1:
        raise ValueError(f"expected one generated block {name!r}, found {len(found)}")
    return str(found[0][1])


def replace_block(text: str, name: str, body: str) -> str:
    """``text`` with block ``name``'s body replaced by ``body`` (which ends with a newline)."""
    read_block(text, name)
    return _block(name).sub(lambda match: match.group(1) + body + match.group(3), text)
