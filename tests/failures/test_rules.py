"""Which verdicts are failures: each built-in metric's bad verdict, ratings at the bottom, named labels."""

from __future__ import annotations

import pytest

from textgen_core.errors import ParameterError
from textgen_core.failures import FailureRule


@pytest.mark.parametrize("metric, verdict, fails", [
    ("faithfulness", "no", True), ("faithfulness", "yes", False), ("answer_relevance", "No", True),
    ("context_recall", "no", True), ("context_precision", "yes", False),
    ("answer_correctness", "unsupported", True), ("answer_correctness", "missing", True),
    ("answer_correctness", "conveyed", False), ("answer_correctness", "backs_answer", False),
    ("hallucination", "contradicted", True), ("hallucination", "not_contradicted", False),
    ("qa_grade", "INCORRECT", True), ("qa_grade", "CORRECT", False),
    ("bias", "yes", True), ("bias", "no", False), ("toxicity", "yes", True), ("toxicity", "no", False),
    ("coherence", "1", True), ("coherence", "2", False), ("coherence", "5", False),
    ("pairwise_preference", "no", False), ("faithfulness", None, False), ("my_criterion", "off_topic", False),
])
def test_default_rule(metric: str, verdict: str | None, fails: bool) -> None:
    assert FailureRule().fails(metric, verdict) is fails


def test_bottom_two_ratings_and_named_labels() -> None:
    rule = FailureRule(bottom=2, labels=("Off_Topic", " rambling "))
    assert rule.fails("coherence", "2") and not rule.fails("coherence", "3")
    assert rule.fails("my_criterion", "off_topic") and rule.fails("my_criterion", "RAMBLING")
    assert rule.as_params() == {"bottom": 2, "labels": ["off_topic", "rambling"], "lowest": 0.1}


@pytest.mark.parametrize("kwargs, word", [({"bottom": 0}, "bottom"), ({"lowest": 0}, "lowest"),
                                          ({"lowest": 0.9}, "lowest")])
def test_bad_rule_names_the_parameter(kwargs: dict, word: str) -> None:
    with pytest.raises(ParameterError, match=word):
        FailureRule(**kwargs)
