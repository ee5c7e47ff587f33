"""Quotes checked against a text: one implementation of folding typography (``normalise``), cutting into word
tokens (``words``), the word-by-word difference (``diff``), what a difference does to the meaning
(``meaning``), the classification of one quote in one passage (``classify``), the passages of a revision or a
document (``passages``) and the sentence that reports a match (``report``). Policies and application documents
look quotes up in their own stores (``lib.policies.quotes``, ``lib.documents.quotes``) and classify with these.
"""
