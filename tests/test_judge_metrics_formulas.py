"""Judge metric formulas, declarations and prompt schemas: no server needed."""

from __future__ import annotations

import math

import pytest

from textgen_core.judge import prompts, scoring
from textgen_core.judge.cells_endpoint import parse_logprobs
from textgen_core.judge.metrics import SPECS, prompt_signature
from textgen_core.judge.schema_check import check_schema, is_strict_compatible, validate
from textgen_core.metrics.registry import all_metrics


@pytest.mark.parametrize("verdicts, expected", [
    (["yes", "no", "no", "yes"], 0.75),       # worked example of the definition
    (["no", "yes", "no", "yes"], 0.5),        # the same with the first two swapped
    (["no", "no", "no"], 0.0),                # nothing useful
    (["yes"], 1.0),
    (["yes", "yes", "no"], 1.0),
    (["no", "no", "yes"], 1 / 3),
    ([], 0.0),
])
def test_average_precision(verdicts: list[str], expected: float) -> None:
    assert scoring.average_precision([v == "yes" for v in verdicts]) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("tp, fp, fn, expected", [
    (0, 0, 3, 0.0), (0, 2, 0, 0.0), (2, 0, 0, 1.0), (1, 1, 1, 0.5), (3, 1, 0, 3 / 3.5), (2, 1, 2, 2 / 3.5),
])
def test_f1_statements(tp: int, fp: int, fn: int, expected: float) -> None:
    assert scoring.f1_statements(tp, fp, fn) == pytest.approx(expected, abs=1e-12)


def test_any_over_references() -> None:
    assert scoring.any_over([[True, False, False], [False, False, True]]) == [True, False, True]
    assert scoring.any_over([]) == []
    with pytest.raises(ValueError):
        scoring.any_over([[True], [True, False]])


@pytest.mark.parametrize("a, b, expected", [
    ([1, 0], [1, 0], 1.0), ([1, 0], [0, 1], 0.0), ([1, 0], [-1, 0], -1.0), ([1, 1], [1, 0], math.sqrt(0.5)),
    ([0, 0], [1, 0], None), ([], [], None), ([1], [1, 0], None),
])
def test_cosine(a: list[float], b: list[float], expected: float | None) -> None:
    got = scoring.cosine(a, b)
    assert got == (None if expected is None else pytest.approx(expected, abs=1e-12))


def test_perplexity() -> None:
    assert scoring.perplexity([math.log(0.5)] * 4) == pytest.approx(2.0)
    assert scoring.perplexity([0.0, 0.0]) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        scoring.perplexity([])


@pytest.mark.parametrize("raw, expected", [
    ([-0.5, -1.5], [-0.5, -1.5]), ("[-0.5, -1.5]", [-0.5, -1.5]), ("-0.5, -1.5", [-0.5, -1.5]),
    ("-0.5 -1.5", [-0.5, -1.5]), ([None, -1.0], [-1.0]), (None, []), ("", []), ("[]", []),
])
def test_parse_logprobs(raw: object, expected: list[float]) -> None:
    assert parse_logprobs(raw) == expected


@pytest.mark.parametrize("raw", [[0.5], "abc", [True], 3.0, ["x"], [float("nan")]])
def test_parse_logprobs_rejects(raw: object) -> None:
    with pytest.raises((ValueError, TypeError)):
        parse_logprobs(raw)


def test_every_judge_metric_is_declared_once_and_documented() -> None:
    registry = all_metrics()
    names = [s.name for s in SPECS]
    assert len(names) == len(set(names)) == 14
    for spec in SPECS:
        assert registry[spec.name] is spec
        assert spec.group in ("llm", "endpoint")
        assert spec.outputs(spec.resolve()) == (spec.name,)
        assert spec.needs and spec.notes and spec.description and spec.plan is not None
        assert "unscored" in spec.notes
    lower = {s.name for s in SPECS if s.direction == "lower"}
    assert lower == {"bias", "toxicity", "hallucination", "perplexity"}
    assert registry["summary_coherence"].value_range == (1.0, 5.0)
    assert registry["perplexity"].value_range == (1.0, None)
    assert "answer_correctness/1" in prompt_signature("answer_correctness")


def test_perplexity_column_parameter_is_checked_against_the_dataset() -> None:
    spec = all_metrics()["perplexity"]
    params = spec.resolve({"logprobs_column": "lp"})
    assert spec.missing({"prediction"}, params) == ["needs a 'lp' column (parameter logprobs_column)"]
    assert spec.missing({"prediction", "lp"}, params) == []
    assert spec.missing({"prediction"}, spec.resolve()) == []


ALL_REQUESTS = [
    prompts.prediction_units("One. Two."), prompts.statements("One."),
    prompts.answer_correctness("a", ["a1", "a2"], "r", ["r1"]), prompts.answer_relevance("q", ["s1", "s2"]),
    prompts.qa_grade("q", ["r1", "r2"], "a"), prompts.opinion_verdicts(["o1"]),
    prompts.context_precision("q", "r", ["c1", "c2", "c3"]), prompts.context_recall(["c1"], ["s1", "s2"]),
    prompts.context_relevance("q", ["c1", "c2"]), prompts.faithfulness(["c1"], ["s1"]),
    prompts.hallucination("p", ["c1", "c2"]), prompts.coherence("p"), prompts.summary_coherence("src", "p"),
]


@pytest.mark.parametrize("request_", ALL_REQUESTS, ids=lambda r: r.step)
def test_prompt_schemas_are_strict_and_versioned(request_: prompts.Request) -> None:
    check_schema(request_.schema)
    assert is_strict_compatible(request_.schema)
    validate(request_.placeholder, request_.schema)
    assert prompts.PROMPT_VERSIONS[request_.step] == request_.version
    assert [m["role"] for m in request_.messages] == ["system", "user"]


def test_known_items_fix_the_array_length() -> None:
    schema = prompts.context_precision("q", "r", ["c1", "c2", "c3"]).schema["properties"]["verdicts"]
    assert schema["minItems"] == schema["maxItems"] == 3
    both = prompts.answer_correctness("a", ["a1", "a2"], "r", ["r1"]).schema["properties"]
    assert both["answer_statements"]["minItems"] == both["answer_statements"]["maxItems"] == 2
    assert both["reference_statements"]["minItems"] == both["reference_statements"]["maxItems"] == 1
    item = prompts.faithfulness(["c"], ["s"]).schema["properties"]["verdicts"]["items"]["properties"]
    assert {"statement", "reason", "verdict"} <= set(item)


def test_request_key_follows_content() -> None:
    assert prompts.statements("A.").key == prompts.statements("A.").key
    assert prompts.statements("A.").key != prompts.statements("B.").key
