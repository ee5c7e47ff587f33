"""Policy codes as plans print them: ``Policy LP4 – Housing``, ``RES5 New Housing Development``, ``CS 1``,
``GEN 01:``, ``EC04``, ``H1: Affordable Housing``, ``HO3.3``, ``MM74``, the NPPF draft's ``TR6: ...``.

A code is one to five capitals, an optional space or slash (``H/9``, ``NH/2``, as South Cambridgeshire
numbers its policies), one to three digits, an optional letter or ``.n`` (after the word ``Policy`` the
capitals may be missing: ``Policy 12``); it is never followed by a word character, a bracket or a slash
(``HO1)`` numbers a consultation question, ``SP04 (1)`` cites a policy's clause). The word may be set in
capitals, as may the words before it (``STRATEGIC POLICY SP1``). Whether a line is a heading is the parser's
call (emphasis, position).
"""

from __future__ import annotations

import re

POLICY_HEADING_RE = re.compile(
    r"^(?P<word>(?:[A-Z][a-z]+\s+){0,3}Policy\s+|(?:[A-Z]{2,}\s+){0,3}POLICY\s+)?"
    r"(?P<code>(?(word)(?:[A-Z]{1,5}[ /]?)?|[A-Z]{1,5}[ /]?)\d{1,3}[A-Za-z]?(?:\.\d{1,2})?)(?![\w)(/\]\[])"
    r"\s*(?:[:.|–—-]\s*)?(?P<name>.*)$"
)
"""``word``: ``Policy`` and up to three words before it (``Strategic Policy SP1``); after ``Policy`` a bare
number is a code too (``Policy 12: Design``, as neighbourhood plans number them)."""
_SPACES_RE = re.compile(r"\s+")


def policy_ref(code: str) -> str:
    """The section ref of a policy: the code as printed, whitespace collapsed (``Policy CS 1``)."""
    return f"Policy {_SPACES_RE.sub(' ', code).strip()}"


def code_key(code_or_ref: str) -> str:
    """What two spellings of one code share (``CS 1`` = ``CS1`` = ``Policy cs1``, ``H/9`` = ``H9``): no spaces
    or slashes, upper case."""
    text = code_or_ref.strip()
    if text.lower().startswith("policy "):
        text = text[7:]
    return _SPACES_RE.sub("", text).replace("/", "").upper()
