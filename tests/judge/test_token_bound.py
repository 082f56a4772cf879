"""One quick token bound (``prompting.prompt_bound``) for the spending cap's hold and the tokens-per-minute limiter;
it stays above the closer estimate (``estimate_tokens``) for every built-in judge prompt, so a hold is an upper
estimate, and above the loopback judge's own count."""

from __future__ import annotations

import pytest

from judge_scripting import count_tokens
from textgen_core.judge.metrics import BUILT_IN
from textgen_core.judge.prompting import TOKENS_PER_MESSAGE, estimate_tokens, prompt_bound

STEPS = [(name, step) for name, spec in BUILT_IN.items() for step in spec.plan.steps]


@pytest.mark.parametrize("name, step", STEPS, ids=[f"{n}-{s.version}" for n, s in STEPS])
def test_the_bound_is_above_the_estimate_of_every_prompt(name, step) -> None:  # noqa: ANN001
    payload = {"messages": step.messages}
    estimate = sum(estimate_tokens(m["content"]) + TOKENS_PER_MESSAGE for m in step.messages) + TOKENS_PER_MESSAGE
    assert prompt_bound(payload) >= estimate, name
    assert prompt_bound(payload) >= sum(count_tokens(m["content"]) for m in step.messages)


def test_embedding_input_and_completion_prompt_are_bounded_too() -> None:
    assert prompt_bound({"input": ["a b c", "d"]}) >= 4 and prompt_bound({"prompt": "one two three"}) >= 3
    assert prompt_bound({}) == 1
