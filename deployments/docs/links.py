"""The links of the project's Markdown (README.md, docs/**/*.md) and the anchors GitHub gives their headings.

A link is ``[text](target)``; its target is a relative file, ``file#anchor`` or ``#anchor`` (external and
``mailto:`` links are left alone). An anchor is the heading's GitHub slug: lower case, punctuation but ``-`` and
``_`` dropped, spaces as ``-``, a repeated slug numbered ``-1``, ``-2``. Fenced code and inline code are not
read, so a shell comment is no heading and ``[x](y)`` in code is no link.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
_LINK = re.compile(r"(?<!\!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)


@dataclass(frozen=True)
class Link:
    """One link as written: the file it is in, its line (1-based) and its target."""

    source: Path
    line: int
    target: str


def markdown_files(root: Path = ROOT) -> list[Path]:
    """The README and every Markdown file under docs/."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def _prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """Each line outside fenced code, numbered from 1."""
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text (before numbering repeats)."""
    text = re.sub(r"<[^>]+>", "", heading)  # inline HTML
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link keeps its text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor a Markdown text's headings give, repeats numbered as GitHub numbers them."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for _, line in _prose_lines(text):
        match = _HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[Link]:
    """The relative links of one Markdown file, outside code."""
    found = []
    for number, line in _prose_lines(path.read_text()):
        prose = _INLINE_CODE.sub("", line)
        for match in _LINK.finditer(prose):
            target = match.group(1)
            if not _EXTERNAL.match(target):
                found.append(Link(path, number, target))
    return found


def broken(link: Link) -> str | None:
    """Why a link does not resolve, or None when it does."""
    file_part, _, anchor = link.target.partition("#")
    target = (link.source.parent / file_part).resolve() if file_part else link.source
    if not target.exists():
        return f"no file {file_part}"
    if not anchor:
        return None
    if target.is_dir() or target.suffix != ".md":
        return f"an anchor into {file_part}, which is not Markdown"
    if anchor not in anchors(target.read_text()):
        return f"no heading #{anchor} in {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}"
    return None
