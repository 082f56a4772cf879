"""Unscored cells group by the kind of their reason: a looping reply's quoted text does not make a kind."""

from __future__ import annotations

import pytest

from textgen_core.summary import reason_kind


@pytest.mark.parametrize("reason, kind", [
    ("the reply repeated 'no no no ' over and over until max_tokens=384",
     "the reply repeated '…' over and over until max_tokens=384"),
    ('the reply repeated "it\'s it\'s " over and over until max_tokens=384',
     "the reply repeated '…' over and over until max_tokens=384"),
    ("the reply repeated 'a \\' b' over and over until max_tokens=64",
     "the reply repeated '…' over and over until max_tokens=64"),
    ("no verdict for passage(s) 1, 2 of 2", "no verdict for passage(s) 1, 2 of 2"),
    ("did not answer within 60 s (gave up after 5 attempts)", "did not answer within 60 s (gave up after 5 attempts)"),
])
def test_reason_kind_drops_quoted_reply_text_only(reason: str, kind: str) -> None:
    assert reason_kind(reason) == kind


def test_two_loops_are_one_kind() -> None:
    a = reason_kind(f"the reply repeated {'yes yes '!r} over and over until max_tokens=384")
    b = reason_kind(f"the reply repeated {'The answer is: '!r} over and over until max_tokens=384")
    assert a == b
