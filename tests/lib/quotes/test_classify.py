"""The quote classifier on hand-made passages: each class with many cases, the word difference verbatim and
whole-word, and each change of meaning named with its words."""

from __future__ import annotations

import pytest

from lib.quotes.classify import Quote, QuoteMatch, Verdict, find_close, find_exact
from lib.quotes.normalise import normalise
from lib.quotes.passages import Passages

TEXT = (
    "Development should only be permitted where at least 10% of the homes are affordable. Proposals for "
    "major development will not be supported unless the applicant demonstrates that the benefits clearly "
    "outweigh the harm. The Council must approve a design code before 1 April 2026, and it may refuse schemes "
    "within the Green Belt that are unacceptable in scale. Applications should increase the minimum tree cover "
    "to 20 per cent of the site, except where the Govern\u00adment\u2019s guid-\nance sets a higher standard. "
    "Car parking in the town centre should be kept to a maximum of 1,000 spaces, and no new\u00a0retail units "
    "should be permitted outside the primary shopping area. Off-site contributions \u2014 where agreed \u2014 are "
    "secured by a legal agreement."
)
FOLDED = normalise(TEXT)


def classify(quote: str) -> QuoteMatch | None:
    read = Quote.read(quote)
    passage = Passages.read([TEXT], [{"page_number": 3}], key=lambda m: "p", order=lambda m: (0,)).passages[0]
    return find_exact(read, TEXT, FOLDED) or find_close(read, passage.normalised, passage.tokens)


@pytest.mark.parametrize(
    "quote",
    [
        "Development should only be permitted where at least 10% of the homes are affordable.",
        "will not be supported unless the applicant demonstrates",
        "The Council must approve a design code before 1 April 2026",
        "Car parking in the town centre should be kept to a maximum of 1,000 spaces",
        "it may refuse schemes within the Green Belt",
    ],
)
def test_words_as_the_text_has_them_are_exact(quote: str) -> None:
    found = classify(quote)
    assert found is not None and found.verdict == Verdict.EXACT
    assert TEXT[found.start : found.end] == quote and found.changes == [] and found.similarity == 1.0


@pytest.mark.parametrize(
    "quote",
    [
        "except where the Government's guidance sets a higher standard",  # soft hyphen, curly quote, line-end hyphen
        "Development  should only be\npermitted where at least 10% of the homes are affordable.",  # whitespace
        "and no new retail units should be permitted outside the primary shopping area",  # no-break space
        "The Council must approve a design code \u2026 within the Green Belt that are unacceptable in scale.",
        "Proposals for major development ... clearly outweigh the harm.",
        "Development should only be permitted [...] of the homes are affordable.",
        "Development should only be permitted . . . of the homes are affordable.",
        "\u2026 the applicant demonstrates that the bene\ufb01ts clearly outweigh the harm \u2026",  # ligature
        "Off\u2011site contributions - where agreed - are secured by a legal agreement.",  # hyphens for dashes
    ],
)
def test_typography_whitespace_hyphens_and_marked_omissions_are_normalised(quote: str) -> None:
    found = classify(quote)
    assert found is not None and found.verdict == Verdict.NORMALISED, found
    assert found.changes == [] and found.meaning == []


@pytest.mark.parametrize(
    ("quote", "quoted", "source"),
    [
        (
            "Development should only be permited where at least 10% of the homes are affordable.",
            "permited",
            "permitted",
        ),
        ("Development should only be permitted where at least 10% of homes are affordable.", "", "the"),
        (
            "development should only be permitted where at least 10% of the homes are affordable.",
            "development",
            "Development",
        ),
        ("The Council must approve a design code before 1 April 2026 and it may refuse schemes", "", ","),
        (
            "Proposals for major developments will not be supported unless the applicant demonstrates",
            "developments",
            "development",
        ),
        ("Applications should increase the minimum tree-cover to 20 per cent of the site", "tree-cover", "tree cover"),
        ("Car parking in a town centre should be kept to a maximum of 1,000 spaces", "a", "the"),
        ("the applicant demonstrates that the benefits claerly outweigh the harm", "claerly", "clearly"),
        ("Car parking in the town centre should be kept to a maximum of 1000 spaces", "1000", "1,000"),
        ("should increase the minimum tree cover to 20% of the site, except where", "20%", "20 per cent"),
    ],
)
def test_slips_that_keep_the_meaning_are_close_with_the_words_verbatim(quote: str, quoted: str, source: str) -> None:
    found = classify(quote)
    assert found is not None and found.verdict == Verdict.CLOSE, found
    assert [(c.quoted, c.source) for c in found.changes] == [(quoted, source)]
    assert found.meaning == [] and 0.8 <= found.similarity < 1.0


ALTERED = [
    ("Development should be permitted where at least 10% of the homes are affordable.", "qualifier", "", "only"),
    ("Development should only be permitted where at least 20% of the homes are affordable.", "number", "20%", "10%"),
    ("Development must only be permitted where at least 10% of the homes are affordable.", "modal", "must", "should"),
    (
        "Development should only be refused where at least 10% of the homes are affordable.",
        "antonym",
        "refused",
        "permitted",
    ),
    ("Proposals for major development will be supported unless the applicant demonstrates", "negation", "", "not"),
    (
        "Proposals for major development will not be supported if the applicant demonstrates",
        "qualifier",
        "if",
        "unless",
    ),
    (
        "Proposals for minor development will not be supported unless the applicant demonstrates",
        "antonym",
        "minor",
        "major",
    ),
    (
        "Proposals for major development should not be supported unless the applicant demonstrates",
        "modal",
        "should",
        "will",
    ),
    ("The Council must approve a design code after 1 April 2026", "antonym", "after", "before"),
    ("The Council must approve a design code before 1 May 2026", "date", "May", "April"),
    ("The Council must approve a design code before 1 April 2027", "number", "2027", "2026"),
    ("The Council must not approve a design code before 1 April 2026", "negation", "not", ""),
    ("it may refuse schemes outside the Green Belt that are unacceptable in scale", "antonym", "outside", "within"),
    (
        "it may refuse schemes within the Green Belt that are acceptable in scale",
        "antonym",
        "acceptable",
        "unacceptable",
    ),
    ("it can refuse schemes within the Green Belt that are unacceptable in scale", "modal", "can", "may"),
    (
        "Applications should decrease the minimum tree cover to 20 per cent of the site",
        "antonym",
        "decrease",
        "increase",
    ),
    ("Applications should increase the maximum tree cover to 20 per cent of the site", "antonym", "maximum", "minimum"),
    ("Applications should increase the minimum tree cover to 25 per cent of the site", "number", "25", "20"),
    ("to 20 per cent of the site, where the Government's guidance sets a higher standard", "qualifier", "", "except"),
    ("Car parking in the town centre should be kept to a maximum of 2,000 spaces", "number", "2,000", "1,000"),
    ("and new retail units should be permitted outside the primary shopping area", "negation", "", "no"),
    ("and no new retail units should be permitted within the primary shopping area", "antonym", "within", "outside"),
    ("and no new retail units shall be permitted outside the primary shopping area", "modal", "shall", "should"),
    (
        "it may refuse schemes within the town centre that are unacceptable in scale",
        "wording",
        "town centre",
        "Green Belt",
    ),
    ("Development should only be permitted where at least 10% of the new homes are affordable.", "wording", "new", ""),
    ("Development should only be permitted where at least ten per cent of the homes are affordable.", None, "", ""),
]


@pytest.mark.parametrize(("quote", "kind", "quoted", "source"), ALTERED)
def test_a_change_of_meaning_is_altered_and_each_is_named(
    quote: str, kind: str | None, quoted: str, source: str
) -> None:
    """The last case is the same number in words: a slip, not a change (close)."""
    found = classify(quote)
    assert found is not None
    if kind is None:
        assert found.verdict == Verdict.CLOSE and found.meaning == [], found
        return
    assert found.verdict == Verdict.ALTERED, found
    assert (kind, quoted, source) in [(m.kind, m.quoted, m.source) for m in found.meaning], found.meaning
    assert [(c.quoted, c.source) for c in found.changes] == [(quoted, source)]


def test_the_difference_is_whole_words_in_order_never_parts_of_words() -> None:
    found = classify("Proposals for major Development will not be backed unless the applicant shows that")
    assert found is not None
    assert [(c.op, c.quoted, c.source) for c in found.changes] == [
        ("replaced", "Development", "development"),
        ("replaced", "backed", "supported"),
        ("replaced", "shows", "demonstrates"),
    ]


def test_a_quote_cut_inside_a_word_of_the_text_at_either_end_is_not_a_change() -> None:
    """``1,00`` ends inside ``1,000`` and ``ment's`` starts inside ``Government's``: only the typo is a change."""
    found = classify(
        "ment's guidance sets a higer standard. Car parking in the town centre should be kept to a maximum of 1,00"
    )
    assert found is not None and found.verdict == Verdict.CLOSE, found
    assert [(c.quoted, c.source) for c in found.changes] == [("higer", "higher")]
    typo_at_the_cut = classify("Car parking in the town centre should be kept to a maximun of 1,00")
    assert typo_at_the_cut is not None and typo_at_the_cut.verdict == Verdict.CLOSE, typo_at_the_cut
    assert [(c.quoted, c.source) for c in typo_at_the_cut.changes] == [("maximun", "maximum")]
    full_stop_after_the_cut = classify("Car parking in the town centre should be kept to a maximun of 1.")
    assert full_stop_after_the_cut is not None and full_stop_after_the_cut.verdict == Verdict.CLOSE
    assert [(c.quoted, c.source) for c in full_stop_after_the_cut.changes] == [("maximun", "maximum")]
    typo_beside_the_cut = classify("Car parking in the town centre should be kept to a maximum fo 1,00")
    assert typo_beside_the_cut is not None and typo_beside_the_cut.verdict == Verdict.CLOSE, typo_beside_the_cut
    assert [(c.quoted, c.source) for c in typo_beside_the_cut.changes] == [("fo", "of")]


def test_an_ellipsis_leaves_out_words_whose_omission_is_not_a_change() -> None:
    """The omitted words hold 'not' and 'unless'; the parts quoted have a typo: close, not altered."""
    found = classify("Proposals for major developmnet ... clearly outweigh the harm.")
    assert found is not None and found.verdict == Verdict.CLOSE, found
    assert [(c.quoted, c.source) for c in found.changes] == [("developmnet", "development")]


@pytest.mark.parametrize(
    "quote",
    [
        "The ... should ... the ... harm ... standard",
        "Every town shall build a monorail to the moon before the next election.",
        "Proposals for something else entirely that nobody wrote down in any plan.",
        "the harm outweigh clearly benefits the that demonstrates applicant",
    ],
)
def test_words_not_in_the_passage_are_not_found(quote: str) -> None:
    assert classify(quote) is None
