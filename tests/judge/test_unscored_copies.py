"""A failure travelling up the judge client gains its cost, time and sent messages in a copy
(``Unscored.but``): the exception raised below is never changed after its construction."""

from __future__ import annotations

from textgen_core.judge.replies import Unscored


def test_but_copies_every_field_and_changes_only_the_named_ones() -> None:
    first = Unscored("endpoint said 500", kind="server", status=500, attempts=3, fatal=False, text="oops",
                     messages=[{"role": "user", "content": "q"}], prompt_tokens=7)
    later = first.but(prompt_tokens=12, completion_tokens=4, latency_s=0.5)
    assert (first.prompt_tokens, first.completion_tokens, first.latency_s) == (7, 0, None)
    assert (later.prompt_tokens, later.completion_tokens, later.latency_s) == (12, 4, 0.5)
    assert (later.reason, later.kind, later.status, later.attempts, later.text, later.messages) == (
        "endpoint said 500", "server", 500, 3, "oops", [{"role": "user", "content": "q"}])
    assert str(later) == "endpoint said 500" and first.but(reason="other").reason == "other"
