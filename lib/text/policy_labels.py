"""Policy headings that the rows split or join wrongly, put right before parsing:

- a heading set as a label over the code: ``Policy`` alone on one line, ``CS 1`` (often with the policy's first
  words) on the next, as many older core strategies print them in a side column. Read line by line, neither
  row is a heading: the label carries no code, and the code's row follows the label without the gap that starts
  a block. Joined into one row (``Policy CS 1 Development ...``) they read as the heading they are;
- a heading set level with another bold line across the page (a diagram's caption on the facing page:
  ``... Cycle Network Diagram TRAN4 Creating Coherent Networks ...``), read as one row: where the row ends with
  a heading exactly as the contents page lists it, it is split into the two lines it was.

Either way the row is then read by the same rules as any other (``lib.text.section_parser``).
"""

from __future__ import annotations

import re
from dataclasses import replace

from lib.text.contents import ListedPolicy
from lib.text.layout_rows import HEADING_SCALE, Row
from lib.text.policy_codes import POLICY_HEADING_RE

_LABEL_RE = re.compile(r"^(?:(?:[A-Z][a-z]+\s+){0,3}Policy|(?:[A-Z]{2,}\s+){0,3}POLICY)\s*:?$")


def join_policy_labels(rows: list[Row]) -> list[Row]:
    """``rows`` with each emphasised ``Policy`` label joined to the code leading the row right under it."""
    joined: list[Row] = []
    index = 0
    while index < len(rows):
        row = rows[index]
        following = rows[index + 1] if index + 1 < len(rows) else None
        if following is not None and _is_label(row, following) and _leads_with_code(following, row):
            joined.append(_join(row, following))
            index += 2
            continue
        joined.append(row)
        index += 1
    return joined


def _is_label(row: Row, following: Row) -> bool:
    if row.contents or not _LABEL_RE.match(row.text):
        return False
    return row.bold_lead == row.text or _larger(row, following)


def _leads_with_code(row: Row, label: Row) -> bool:
    """The next row, on the same page and not after a paragraph's gap, starts with a policy code in bold (or
    under a label in heading type)."""
    if row.contents or row.page != label.page or row.half != label.half or row.page_start:
        return False
    match = POLICY_HEADING_RE.match(row.text)
    if match is None or match["word"]:
        return False
    code = row.text[: match.end("code")]
    return row.bold_lead.startswith(code) or _larger(label, row)


def _larger(label: Row, row: Row) -> bool:
    """The label is set in heading type against the row under it."""
    return label.size is not None and row.size is not None and label.size >= HEADING_SCALE * row.size


def _join(label: Row, row: Row) -> Row:
    bold = f"{label.text} {row.bold_lead}".strip() if row.bold_lead else label.text
    return replace(
        row,
        text=f"{label.text.rstrip(':')} {row.text}",
        bold_lead=bold,
        top=label.top,
        gap_before=label.gap_before,
        page_start=label.page_start,
        jumped=label.jumped,
    )


def split_listed_headings(rows: list[Row], listed: list[ListedPolicy]) -> list[Row]:
    """``rows`` with a wholly bold row that ends with a listed policy's heading (code and title, as the contents
    page prints them) split in two before that heading."""
    headings = [f"{policy.ref.removeprefix('Policy ')} {policy.title}" for policy in listed if policy.title]
    if not headings:
        return rows
    split: list[Row] = []
    for row in rows:
        heading = _ending_heading(row, headings)
        if heading is None:
            split.append(row)
            continue
        before = row.text[: -len(heading)].rstrip()
        split += [
            replace(row, text=before, bold_lead=before),
            replace(row, text=heading, bold_lead=heading, gap_before=True, page_start=False),
        ]
    return split


def _ending_heading(row: Row, headings: list[str]) -> str | None:
    if row.contents or not row.bold_lead or row.bold_lead != row.text:
        return None
    for heading in headings:
        if row.text.endswith(heading) and row.text[: -len(heading)].endswith(" ") and row.text != heading:
            return heading
    return None
