"""The word diff and passage cutting of ``lib.policies.compare`` (pure functions, no stores)."""

from __future__ import annotations

from lib.policies.compare import passages, word_diff


def test_word_diff_marks_removed_and_added_words_inline_and_counts_them() -> None:
    diff = word_diff("the cat sat on the mat", "the cat lay on the red mat")
    assert diff.rendered == "the cat [-sat-] {+lay+} on the {+red+} mat"
    assert (diff.words_from, diff.words_to, diff.words_removed, diff.words_added) == (6, 7, 1, 2)
    assert 0.5 < diff.similarity < 1


def test_long_unchanged_runs_are_cut_to_their_ends() -> None:
    same = " ".join(f"w{i}" for i in range(40))
    diff = word_diff(f"start {same} old end", f"start {same} new end")
    assert diff.rendered == "… w34 w35 w36 w37 w38 w39 [-old-] {+new+} end"
    assert word_diff(same, same).similarity == 1.0


def test_passages_are_the_paragraphs_and_points_of_a_section() -> None:
    text = "TR6: Assessing transport impacts\n\n1. Development proposals should be supported by:\n\na. A plan.\n\n"
    assert passages(text) == ["1. Development proposals should be supported by:"], "titles and stubs are too short"
    assert passages("Too short.") == ["Too short."]
