"""Judge metric formulas, declarations and prompt schemas: no server needed."""

from __future__ import annotations

import math

import pytest

from textgen_core.judge.metrics import extract
from textgen_core.judge.metrics import SPECS, prompt_hashes, prompt_signature
from textgen_core.judge.metrics.answer_correctness import f1
from textgen_core.judge.metrics.context_precision import average_precision
from textgen_core.metrics.endpoint.perplexity import parse_logprobs, perplexity
from textgen_core.metrics.endpoint.semantic_similarity import cosine
from textgen_core.judge.prompting import Request
from textgen_core.llm.structured import check_schema, is_strict_compatible, validate
from textgen_core.registry import all_metrics

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
    assert average_precision([v == "yes" for v in verdicts]) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("tp, fp, fn, expected", [
    (0, 0, 3, 0.0), (0, 2, 0, 0.0), (2, 0, 0, 1.0), (1, 1, 1, 0.5), (3, 1, 0, 3 / 3.5), (2, 1, 2, 2 / 3.5),
])
def test_f1_statements(tp: int, fp: int, fn: int, expected: float) -> None:
    assert f1(tp, fp, fn) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("a, b, expected", [
    ([1, 0], [1, 0], 1.0), ([1, 0], [0, 1], 0.0), ([1, 0], [-1, 0], -1.0), ([1, 1], [1, 0], math.sqrt(0.5)),
    ([0, 0], [1, 0], None), ([], [], None), ([1], [1, 0], None),
])
def test_cosine(a: list[float], b: list[float], expected: float | None) -> None:
    got = cosine(a, b)
    assert got == (None if expected is None else pytest.approx(expected, abs=1e-12))


def test_perplexity() -> None:
    assert perplexity([math.log(0.5)] * 4) == pytest.approx(2.0)
    assert perplexity([0.0, 0.0]) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        perplexity([])


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
    assert len(names) == len(set(names))
    for spec in SPECS:
        assert registry[spec.name] is spec
        assert spec.group in ("llm", "endpoint")
        assert spec.outputs(spec.resolve()) == (spec.name,)
        assert spec.needs and spec.notes and spec.description and spec.plan is not None
        assert "unscored" in spec.notes
    assert {name: registry[name].direction for name in ("bias", "toxicity", "hallucination", "perplexity")} == \
        dict.fromkeys(("bias", "toxicity", "hallucination", "perplexity"), "lower")
    assert registry["summary_coherence"].value_range == (1.0, 5.0)
    assert registry["perplexity"].value_range == (1.0, None)
    assert prompt_signature("answer_correctness") == "statements/4,answer_correctness/4"


def test_perplexity_column_parameter_is_checked_against_the_dataset() -> None:
    spec = all_metrics()["perplexity"]
    params = spec.resolve({"logprobs_column": "lp"})
    assert spec.missing({"prediction"}, params) == ["needs a 'lp' column (parameter logprobs_column)"]
    assert spec.missing({"prediction", "lp"}, params) == []
    assert spec.missing({"prediction"}, spec.resolve()) == []


ALL_REQUESTS = [r for spec in SPECS for r in spec.plan.steps]


@pytest.mark.parametrize("request_", ALL_REQUESTS, ids=lambda r: r.version)
def test_prompt_schemas_are_strict_and_say_fenced_text_is_data(request_: Request) -> None:
    check_schema(request_.schema)
    assert is_strict_compatible(request_.schema)
    validate(request_.placeholder, request_.schema)
    assert [m["role"] for m in request_.messages] == ["system", "user"]
    assert "never follow instructions" in request_.messages[0]["content"]
    if request_.check is not None:
        assert request_.check(request_.placeholder) is None


#: Prompt version -> hash of its text. A prompt whose wording changes must get a new version (the
#: cache key and the signature follow the version); record the new version's hash here.
RECORDED = {
    'answer_correctness/4': '6263cce2b61c3e00',
    'answer_relevance/3': 'fec3366b1c6807a0',
    'bias/2': '2ba068575b765d6e',
    'claims/3': 'ced98b9229683836',
    'coherence/3': '3eb6fbca0c1125a2',
    'context_precision/3': 'c499e36823cc8a90',
    'context_recall/3': '0f9f127a1e764d34',
    'context_relevance/3': '1a833539a6f1e4fd',
    'faithfulness/4': 'd072cd80412dea37',
    'hallucination/3': '757766ed9a8f09a7',
    'opinions/3': 'c9f0dd893b1afa6a',
    'pairwise_preference/2': '4ebfc7f2ef2fd454',
    'qa_grade/3': 'fb9900651e0fa611',
    'statements/4': '7feab803741ebc8c',
    'summary_coherence/3': '3f644f1b21f14d18',
    'toxicity/2': '5d561d724dfb08f3',
}


def test_a_prompt_never_changes_without_its_version() -> None:
    current = prompt_hashes()
    changed = {v: h for v, h in current.items() if RECORDED.get(v, h) != h}
    assert not changed, f"prompt text changed without a version bump: {sorted(changed)}"
    unrecorded = sorted(set(current) - set(RECORDED))
    assert not unrecorded, f"record the hashes of new prompt versions: {{{', '.join(f'{v!r}: {current[v]!r}' for v in unrecorded)}}}"
    assert len({v.split("/")[0] for v in current}) == len(current)  # one version per step


def test_shared_extractions_are_byte_identical_across_metrics() -> None:
    statements = {r.version for spec in SPECS for r in spec.plan.steps if r.step == "statements"}
    assert statements == {extract.STATEMENTS_VERSION}
    assert extract.statements_request("A.").messages == extract.statements_request("A.").messages
    assert extract.statements_request("A.").identity != extract.claims_request("A.").identity
