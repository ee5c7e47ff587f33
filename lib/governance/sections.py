"""Cutting a document's body at its headings, so each chunk knows the heading path it sits under.

Markdown is tokenised by ``markdown-it-py`` (CommonMark: a ``#`` inside a code fence is not a heading) and
the source lines between headings become sections; reStructuredText is parsed by docutils and each
``section`` node's own body (its sub-sections excluded) becomes one, rendered as docutils' plain text with
comments and parser messages (unknown Sphinx directives) left out. Heading paths join levels with `` > ``;
a Markdown document's first level-1 heading is its title and is not repeated in the paths under it.
"""

from __future__ import annotations

from dataclasses import dataclass

from docutils import nodes
from docutils.core import publish_doctree
from markdown_it import MarkdownIt
from markdown_it.token import Token

HEADING_JOINER = " > "
_DOCUTILS = {
    "report_level": 5,
    "halt_level": 5,
    "warning_stream": False,
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "doctitle_xform": False,
    "sectsubtitle_xform": False,
}


@dataclass(frozen=True)
class ParsedSection:
    heading: str
    """The heading path, ``Rationale > Alternatives``; empty for text before the first heading."""
    text: str


def markdown_sections(body: str) -> tuple[list[ParsedSection], str | None, dict[str, str]]:
    """The sections of a Markdown body, its first heading, and the ``Key: value`` field block that opens it
    (``**Status:** Draft`` lines right under the first heading; empty when the paragraph is anything else)."""
    tokens = MarkdownIt("commonmark").parse(body)
    lines = body.splitlines()
    headings: list[tuple[int, int, int, str]] = []
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.map is not None:
            headings.append((token.map[0], token.map[1], int(token.tag[1:]), tokens[index + 1].content.strip()))
    title_line = headings[0][0] if headings and headings[0][2] == 1 else None
    sections: list[ParsedSection] = []
    stack: list[tuple[int, str]] = []
    start = 0
    path = ""
    for begin, end, level, text in headings:
        _append(sections, path, lines[start:begin])
        if begin == title_line:
            path, start = text, end
            continue
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, text))
        path, start = HEADING_JOINER.join(name for _, name in stack), end
    _append(sections, path, lines[start:])
    return sections, (headings[0][3] if headings else None), _field_block(tokens)


def _append(sections: list[ParsedSection], heading: str, lines: list[str]) -> None:
    text = "\n".join(lines).strip()
    if text:
        sections.append(ParsedSection(heading, text))


def _field_block(tokens: list[Token]) -> dict[str, str]:
    after_heading = False
    for index, token in enumerate(tokens):
        if token.type == "heading_close":
            after_heading = True
        elif after_heading and token.type == "paragraph_open":
            fields: dict[str, str] = {}
            for line in tokens[index + 1].content.splitlines():
                key, colon, value = line.replace("*", "").replace("__", "").partition(":")
                if not colon or not value.strip() or len(key.split()) > 3:
                    return {}
                fields[key.strip().lower()] = value.strip()
            return fields
        elif after_heading and token.type not in ("heading_open", "inline"):
            return {}
    return {}


def rst_sections(body: str, title: str) -> list[ParsedSection]:
    """The sections of a reStructuredText body; text before the first section is headed ``title``."""
    doctree = publish_doctree(body, settings_overrides=_DOCUTILS)
    sections: list[ParsedSection] = []
    _walk(doctree, [], title, sections)
    return sections


def _walk(node: nodes.Element, path: list[str], title: str, sections: list[ParsedSection]) -> None:
    own: list[str] = []
    children: list[nodes.section] = []
    for child in node.children:
        if isinstance(child, nodes.section):
            children.append(child)
        elif not isinstance(child, nodes.title | nodes.comment | nodes.system_message | nodes.target):
            text = child.astext().strip()
            if text:
                own.append(text)
    if own:
        sections.append(ParsedSection(HEADING_JOINER.join(path) or title, "\n\n".join(own)))
    for section in children:
        heading = section[0].astext().strip() if section.children else ""
        _walk(section, [*path, heading], title, sections)
