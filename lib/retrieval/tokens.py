"""The lexical leg's tokens: words stemmed, stop words dropped, references and codes kept whole.

Planning text is cited by codes as much as by words: ``Para 116``, ``Table 5-2``, ``Policy TR6``,
``LTN 1/20``, ``5.2.1``, ``2024/0123/FUL``. A run of letters and digits joined by ``-``, ``.`` or ``/``
stays one token when it holds a digit (``5-2``, ``1/20``, ``5.2.1``, ``2024/0123/ful``); without a digit
it is ordinary words joined (``walking/cycling``, ``self-build``) and is split into them. Trailing
punctuation never joins (``116.`` is ``116``). Dashes of every width count as ``-``.

``para`` and ``paras`` are read as ``paragraph`` (citations say ``Para 116``, people "paragraph 116").
Words are lower-cased, Lucene's English stop words dropped (``bm25s.stopwords.STOPWORDS_EN``, the list
Elasticsearch and bm25s use) and Snowball-stemmed (``PyStemmer``, the C Snowball stemmer). Tokens with a
digit are never stemmed, and single letters (``e.g.``'s ``e``) carry nothing and are dropped. The result is a
pure function of the text, the same in every process.
"""

from __future__ import annotations

import re
import threading

import Stemmer
from bm25s.stopwords import STOPWORDS_EN

STOP_WORDS = frozenset(STOPWORDS_EN)
_DASHES = str.maketrans({c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2212"})
_TOKEN = re.compile(r"\w+(?:[-./]\w+)*")
_PARTS = re.compile(r"[-./_]+")
_DIGIT = re.compile(r"\d")
_ALIASES = {"para": "paragraph", "paras": "paragraph"}
_local = threading.local()
"""One stemmer per thread: a ``Stemmer.Stemmer`` keeps a cache and is not safe to share."""


def _stemmer() -> Stemmer.Stemmer:
    stemmer: Stemmer.Stemmer | None = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    return stemmer


def tokenize(text: str) -> list[str]:
    """The tokens of ``text`` in order, repeats kept (they are the term frequencies)."""
    tokens: list[str] = []
    words: list[int] = []
    for match in _TOKEN.findall(text.lower().translate(_DASHES)):
        if _DIGIT.search(match):
            tokens.append(match)
            continue
        for part in _PARTS.split(match):
            if len(part) > 1 and part not in STOP_WORDS:
                words.append(len(tokens))
                tokens.append(_ALIASES.get(part, part))
    if words:
        stemmed = _stemmer().stemWords([tokens[i] for i in words])
        for i, stem in zip(words, stemmed, strict=True):
            tokens[i] = stem
    return tokens
