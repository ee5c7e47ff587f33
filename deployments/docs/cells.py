"""Text made fit for one cell of a Markdown table: one line, pipes escaped."""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<!e\.g\.)(?<!i\.e\.)(?<=[.!?])\s+(?=[A-Z`(])")
"""Where a sentence ends: after its full stop (not an e.g. or i.e.), before a capital, a code span or a bracket."""


def cell(text: str) -> str:
    """``text`` on one line (whitespace runs collapsed) with ``|`` escaped, so it stays in its column."""
    return " ".join(text.split()).replace("|", "\\|")


def first_paragraph(text: str) -> str:
    """A docstring's first paragraph, on one line: what a reference table shows of it."""
    return cell(text.strip().split("\n\n", 1)[0]) if text else ""


def first_sentence(text: str) -> str:
    """A description's first sentence, on one line: the one-line summary a reference table shows."""
    return _SENTENCE_END.split(first_paragraph(text), maxsplit=1)[0]
