"""Tokens: references and codes stay whole, words are stemmed, stop words go, the same in every process."""

from __future__ import annotations

import subprocess
import sys

import pytest

from lib.retrieval.tokens import tokenize


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Para 116.", ["paragraph", "116"]),
        ("paragraphs 156-157", ["paragraph", "156-157"]),
        ("Table 5-2", ["tabl", "5-2"]),
        ("Table 5\u20132", ["tabl", "5-2"]),
        ("Policy TR6:", ["polici", "tr6"]),
        ("LTN 1/20", ["ltn", "1/20"]),
        ("section 5.2.1, then", ["section", "5.2.1"]),
        ("Application 2024/0123/FUL refused", ["applic", "2024/0123/ful", "refus"]),
        ("PEP 8", ["pep", "8"]),
        ("zone A1", ["zone", "a1"]),
        ("footnote 7", ["footnot", "7"]),
    ],
)
def test_codes_and_references_are_kept_as_single_tokens(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_words_are_lower_cased_stemmed_and_stop_words_dropped() -> None:
    assert tokenize("The Developments should be REFUSED on highways grounds") == [
        "develop",
        "should",
        "refus",
        "highway",
        "ground",
    ]


def test_words_joined_without_a_digit_are_split_and_single_letters_dropped() -> None:
    assert tokenize("walking/cycling and self-build, e.g. the developer's") == [
        "walk",
        "cycl",
        "self",
        "build",
        "develop",
    ]


def test_repeats_are_kept_as_term_frequencies_and_nothing_is_an_empty_list() -> None:
    assert tokenize("green belt, Green Belt") == ["green", "belt", "green", "belt"]
    assert tokenize("") == [] and tokenize("the of and . , ;") == []


def test_tokens_are_the_same_in_another_process() -> None:
    text = "Para 116: development in 2024/0123/FUL should be refused (Table 5-2, LTN 1/20, footnote 7)."
    code = f"from lib.retrieval.tokens import tokenize; print(tokenize({text!r}))"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert other.strip() == str(tokenize(text))
