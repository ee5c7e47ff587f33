"""What the lexical leg indexes for a chunk: its heading context, then its text.

Why: a chunk of a long section or abstract rarely repeats the words that name it. The splitter cuts a
SciFact abstract at its blank line, so the title sits alone in a ~130-character first chunk and no other
chunk of the abstract carries it; an NPPF paragraph's continuation chunks do not start with ``116.``. BM25
then cannot match a chunk on what it is about. Each store names, from its own chunk metadata, the context
that applies to every chunk (a policy chunk: its citation ``section_ref`` and its ``chapter``; an
application document's chunk: its file's name), and that context is indexed before the chunk's text. The
dense leg embeds the text alone, as stored.

On BEIR SciFact this lifts hybrid nDCG@10 past the 0.73 goal; on the real NPPF it costs one lexical paraphrase
of ten and no hybrid answer (figures: docs/decisions/0005-lexical-heading-context-and-bm25-b.md).

The context is derived from what Chroma stores, so every process and replica indexes the same string.
"""

from __future__ import annotations

from collections.abc import Iterable


def lexical_text(context: Iterable[str], text: str) -> str:
    """``context``'s parts, one a line, then ``text``; empty parts and parts that ``text`` already starts with
    (a chapter's own heading chunk, an abstract's first chunk that opens with its title) are left out, so a
    heading is counted once in a chunk that carries it."""
    parts = [part for part in (p.strip() for p in context) if part and not text.startswith(part)]
    return "\n".join([*parts, text])
