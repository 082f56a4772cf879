"""The scripted judge's rules (tests/scripted_judge.py) read the prompts our metrics really send."""

from __future__ import annotations

from scripted_judge import rule_reply


def test_rules_read_our_prompts() -> None:
    from textgen_core.judge.metrics import answer_correctness

    request = {"messages": list(answer_correctness.request(["Paris is big.", "It rains."], ["Paris is big."]).messages)}
    reply = rule_reply(request)
    assert [v["verdict"] for v in reply["answer_statements"]] == ["supported", "unsupported"]
    assert [v["verdict"] for v in reply["reference_statements"]] == ["conveyed"]


def test_rules_read_passages() -> None:
    from textgen_core.judge.metrics import hallucination

    request = {"messages": list(hallucination.request("Water is not wet.", ["Water is wet.", "Fire is hot."]).messages)}
    assert [v["verdict"] for v in rule_reply(request)["verdicts"]] == ["contradicted", "not_contradicted"]
