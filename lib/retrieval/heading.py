"""What the lexical leg indexes for a chunk: its heading context, then its text.

Why: a chunk of a long section or abstract rarely repeats the words that name it. The splitter cuts a
SciFact abstract at its blank line, so the title sits alone in a ~130-character first chunk and no other
chunk of the abstract carries it; an NPPF paragraph's continuation chunks do not start with ``116.``. BM25
then cannot match a chunk on what it is about. Each store names, from its own chunk metadata, the context
that applies to every chunk (a policy chunk: its citation ``section_ref`` and its ``chapter``; an
application document's chunk: its file's name), and that context is indexed before the chunk's text. The
dense leg embeds the text alone, as stored.

On BEIR SciFact (``benchmarks/retrieval.py``, the title as the section's chapter, BM25 ``b`` 0.4, chosen on
the train split only) this lifts nDCG@10 on the test split, lexical from 0.6607 to 0.6725 and hybrid from
0.7221 to 0.7318 (int8 encoder; torch 0.7238 to 0.7335). On the real NPPF it costs one lexical paraphrase
of ten (a chapter's words now on every chunk of it) and no hybrid answer (``benchmarks/nppf_questions.json``).

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
