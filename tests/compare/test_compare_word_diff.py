"""Word-level diff of two answers: segments, git word-diff notation, and the share of matching words."""

from __future__ import annotations

import difflib

import pytest

from textgen_core.compare.word_diff import similarity, word_diff, word_diff_text


@pytest.mark.parametrize(("first", "second", "expected"), [
    ("the cat sat on the mat", "the dog sat on a mat today",
     "the [-cat-] {+dog+} sat on [-the-] {+a+} mat {+today+}"),
    ("same words", "same   words\n", "same words"),
    ("", "new answer", "{+new answer+}"),
    ("old answer", None, "[-old answer-]"),
    ("<b>bold</b> [-x-]", "<b>bold</b>", "<b>bold</b> [-[-x-]-]"),  # data stays data: no HTML, no escaping games
])
def test_word_diff_text(first: str, second: str, expected: str) -> None:
    assert word_diff_text(first, second) == expected


def test_segments_rebuild_both_answers() -> None:
    first = "Paris is the capital of France and its largest city"
    second = "The capital of France is Paris, its largest city"
    segments = word_diff(first, second)
    assert " ".join(t for op, t in segments if op != "added") == first
    assert " ".join(t for op, t in segments if op != "removed") == second


def test_similarity_is_difflib_ratio_over_words() -> None:
    a, b = "a b c d", "a x c d e"
    assert similarity(a, b) == pytest.approx(difflib.SequenceMatcher(a=a.split(), b=b.split()).ratio())
    assert similarity("", "  ") == 1.0 and similarity("a", "") == 0.0
