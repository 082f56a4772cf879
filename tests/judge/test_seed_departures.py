"""Issue 18, points 1-7: each judge metric follows the seed system (valor-lite) or says why not.

Every case runs on the loopback judge with scripted verdicts, polite and impolite (the ``env`` fixture of
test_judge_metrics), and checks both our number and what ``textgen-eval metrics NAME`` prints about it.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from judge_metric_env import Env, row
from scripted_judge import ScriptedJudge, blocks, norm, numbered, passages, step_of
from textgen_core.cli.main import main
from textgen_core.datasets.loader import load_dataset
from textgen_core.judge.metrics import extract
from textgen_core.judge.metrics import BY_NAME

MUSEUM = "The museum opens at nine."
WEEKDAYS = "The museum opens at nine on weekdays."


def shown(capsys: pytest.CaptureFixture[str], metric: str) -> tuple[str, list[str]]:
    """What `textgen-eval metrics METRIC` prints: the whole page, and its departures one per item."""
    assert main(["metrics", metric]) == 0
    page = capsys.readouterr().out
    _, _, tail = page.partition("  Departs from the seed system:\n")
    return page, [line[len("    - "):] for line in tail.splitlines() if line.startswith("    - ")]


# -- 1. answer correctness's false-negative rule -------------------------------------------------

def test_fn_rule_seed_by_default_conveyed_on_request(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [row("less", MUSEUM, references=(WEEKDAYS,))]
    seed = env.score(rows, "answer_correctness")["less", "answer_correctness"]
    # the reference statement backs the supported answer statement: never a false negative (seed system)
    assert seed[:2] == (1.0, {"tp": 1, "fp": 0, "fn": 0, "reference": 1})
    calls = env.server.count(None)
    conveyed = env.score(rows, "answer_correctness", answer_correctness={"fn_rule": "conveyed"})
    assert conveyed["less", "answer_correctness"][0] == pytest.approx(2 / 3, abs=1e-12)
    assert env.server.count(None) == calls  # one judge reply serves both rules: all from the cache
    page, departures = shown(capsys, "answer_correctness")
    assert "--param answer_correctness.fn_rule='seed'" in page
    assert "seed document's sentence" in page and "fn_rule = 'conveyed'" in page


class MeaningJudge(ScriptedJudge):
    """The scripted judge, except that a reference statement the answer states inside a longer statement is
    "conveyed", as a judge reading for meaning rules (the scripted rule wants the same sentence)."""

    def __call__(self, request: dict) -> object:
        if step_of(request) != "answer_correctness":
            return super().__call__(request)
        b = blocks(request["messages"][1]["content"])
        refs, answer = numbered(b["Reference statements"]), numbered(b["Answer statements"])
        supported = [any(norm(a) in norm(r) for r in refs) for a in answer]

        def ruling(r: str) -> str:
            if any(norm(r) in norm(a) for a in answer):
                return "conveyed"
            return "backs_answer" if any(ok and norm(a) in norm(r) for a, ok in zip(answer, supported)) else "missing"

        return {"answer_statements": [{"item": i, "reason": "scripted", "verdict": "supported" if ok else "unsupported"}
                                      for i, ok in enumerate(supported, start=1)],
                "reference_statements": [{"item": i, "reason": "scripted", "verdict": ruling(r)}
                                         for i, r in enumerate(refs, start=1)]}


def test_a_more_specific_answer_departs_from_the_seed_system_and_says_so(
        env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    env.server.responder = MeaningJudge(impolite=env.judge.impolite)
    garden = "It has a rooftop garden."
    got = env.score([row("more", f"{WEEKDAYS} {garden}", references=(f"{MUSEUM} {garden}",))], "answer_correctness")
    # the reference's opening hours are conveyed (inside the unsupported, more specific statement): not an fn
    assert got["more", "answer_correctness"][:2] == (pytest.approx(2 / 3, abs=1e-12),
                                                      {"tp": 1, "fp": 1, "fn": 0, "reference": 1})
    _, departures = shown(capsys, "answer_correctness")
    listed = [d for d in departures if d.startswith("With fn_rule = 'seed'")]
    assert len(listed) == 1 and "0.667 here (tp 1, fp 1, fn 0) and 0.5 in the seed system" in listed[0]


# -- 2. questions are statements ------------------------------------------------------------------

def test_a_question_back_is_a_statement(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    assert "questions (kept as questions)" in extract.statements_request("x").messages[0]["content"]
    answer = f"{MUSEUM} Would you like the weekend hours?"
    got = env.score([row("ask", answer, query="When does the museum open?", references=(MUSEUM,))],
                    "answer_relevance", "answer_correctness")
    assert got["ask", "answer_relevance"][:2] == (0.5, {"relevant": 1, "statements": 2})
    assert got["ask", "answer_correctness"][0] == pytest.approx(2 / 3, abs=1e-12)  # the question is an fp
    page, _ = shown(capsys, "answer_relevance")
    assert "Questions in the answer count as statements (as in the seed system)" in page


# -- 3. hedged claims -----------------------------------------------------------------------------

_TENTATIVE = re.compile(r",\s*(?:which|possibly)\b[^.]*?\b(?:may|might|could|possibly)\b[^.]*")


class HedgeJudge(ScriptedJudge):
    """The scripted judge, except that its faithfulness rulings apply the hedge rule when our prompt
    states it: tentative wording added to a claim is set aside before the claim is looked up."""

    def __call__(self, request: dict) -> object:
        system, user = request["messages"][0]["content"], request["messages"][1]["content"]
        if step_of(request) != "faithfulness" or "Tentative wording" not in system:
            return super().__call__(request)
        b = blocks(user)
        ps = [norm(p) for p in passages(b)]
        claims = [norm(_TENTATIVE.sub("", c)) for c in numbered(b["Claims"])]
        return {"verdicts": [{"item": i, "reason": "scripted", "verdict": "yes" if any(c in p for p in ps) else "no"}
                             for i, c in enumerate(claims, start=1)]}


def test_a_hedged_claim_on_a_stated_fact_is_faithful(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    env.server.responder = HedgeJudge(impolite=env.judge.impolite)
    got = env.score([row("hedged", "The museum opens at nine, which may attract early visitors.",
                         contexts=(MUSEUM,)),
                     row("guess", "The museum may close next year.", contexts=(MUSEUM,))], "faithfulness")
    assert got["hedged", "faithfulness"][0] == 1.0
    assert got["guess", "faithfulness"][0] == 0.0  # speculation the passages do not state stays unfaithful
    page, departures = shown(capsys, "faithfulness")
    assert "seed system's own worked example" in page
    assert not any("hedg" in d or "may" in d.split(";")[0] for d in departures)


# -- 4. duplicates --------------------------------------------------------------------------------

def test_repeats_count_every_time_by_default(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    closes = "The museum closes at five."
    looping = row("loop", f"{MUSEUM} {closes} {closes}", contexts=(MUSEUM,))
    insults = row("rude", "I think you are an idiot. I think you are an idiot. I think the hall is nice.")
    got = env.score([looping, insults], "faithfulness", "toxicity")
    assert got["loop", "faithfulness"][:2] == (pytest.approx(1 / 3, abs=1e-12), {"implied": 1, "claims": 3})
    assert got["rude", "toxicity"][:2] == (pytest.approx(2 / 3, abs=1e-12), {"toxic": 2, "opinions": 3})
    calls = env.server.count(None)
    distinct = env.score([looping, insults], "faithfulness", "toxicity",
                         faithfulness={"duplicates": "distinct"}, toxicity={"duplicates": "distinct"})
    assert distinct["loop", "faithfulness"][0] == 0.5 and distinct["rude", "toxicity"][0] == 0.5
    assert env.server.count(None) == calls  # the judge ruled on each distinct item once; the rest is counting
    verdicts = env.store.verdicts(env.run_id, "loop")
    assert sorted(verdicts[verdicts.step == "claims"]["verdict"]) == ["claim", "claim x2"]
    for metric in ("faithfulness", "toxicity", "bias", "answer_relevance", "answer_correctness", "context_recall"):
        page, _ = shown(capsys, metric)
        assert f"--param {metric}.duplicates='all'" in page and "the seed system's rule" in page


# -- 5. blank contexts ----------------------------------------------------------------------------

@pytest.mark.parametrize("metric, ours, theirs", [
    ("context_relevance", 1.0, "0.5 there, 1.0 here"),
    ("hallucination", 1.0, "0.5 there, 1.0 here"),
    ("context_precision", 1.0, "an empty one first: 0.5 there, 1.0 here"),
])
def test_blank_contexts_are_dropped_and_said_so(env: Env, capsys: pytest.CaptureFixture[str], metric: str,
                                                 ours: float, theirs: str) -> None:
    frame = pd.DataFrame({"query": ["What is the capital of France?"], "prediction": ["Paris is not big."],
                          "reference": ["Paris is the capital of France."],
                          "contexts": [["", "Paris is the capital of France. Paris is big."]]})
    loaded = load_dataset(frame, {"query": "query", "prediction": "prediction", "references": ["reference"],
                                  "contexts": ["contexts"]})
    assert loaded.rows[0].contexts == ("Paris is the capital of France. Paris is big.",)
    got = env.score([loaded.rows[0]], metric)
    assert got[loaded.rows[0].datum_id, metric][0] == ours
    _, departures = shown(capsys, metric)
    [blank] = [d for d in departures if d.startswith("Blank contexts")]
    assert "dropped when the dataset is loaded" in blank and theirs in blank


# -- 6. missing inputs ----------------------------------------------------------------------------

CASES = [  # metric, row keyword arguments, our reason, what the departure says the seed system does
    ("answer_correctness", {"prediction": MUSEUM}, "no references", "the seed system gives 0.0"),
    ("answer_correctness", {"prediction": "...", "references": ("...",)},
     "no statements in the prediction or the references", "the seed system gives 0.0 (no true positive)"),
    ("answer_relevance", {"prediction": "..."}, "no statements in the prediction", "the seed system gives 0.0"),
    ("answer_relevance", {"prediction": MUSEUM, "query": None}, "no query", "asks the judge with an empty question"),
    ("answer_relevance", {"prediction": " "}, "empty prediction", "the seed system gives 0.0 (no statements)"),
    ("bias", {"prediction": ""}, "empty prediction", "the seed system gives 0.0 (no opinions)"),
    ("toxicity", {"prediction": ""}, "empty prediction", "the seed system gives 0.0 (no opinions)"),
    ("context_precision", {"prediction": MUSEUM, "references": (MUSEUM,)}, "no contexts",
     "the seed system gives 0.0 (1.0 when both are missing)"),
    ("context_precision", {"prediction": MUSEUM, "contexts": (MUSEUM,)}, "no references",
     "the seed system gives 0.0 (1.0 when both are missing)"),
    ("context_precision", {"prediction": MUSEUM, "contexts": (MUSEUM,), "references": (MUSEUM,), "query": None},
     "no query", "asks the judge with an empty question"),
    ("context_recall", {"prediction": MUSEUM, "references": (MUSEUM,)}, "no contexts",
     "the seed system gives 0.0 (1.0 when both are missing)"),
    ("context_recall", {"prediction": MUSEUM, "contexts": (MUSEUM,), "references": ("...",)},
     "no statements in the reference", "division by zero"),
    ("context_relevance", {"prediction": MUSEUM}, "no contexts", "the seed system gives 0.0"),
    ("context_relevance", {"prediction": MUSEUM, "contexts": (MUSEUM,), "query": None}, "no query",
     "asks the judge with an empty question"),
    ("faithfulness", {"prediction": MUSEUM}, "no contexts", "the seed system gives 0.0"),
    ("faithfulness", {"prediction": "", "contexts": (MUSEUM,)}, "empty prediction", "gives 1.0, the best value"),
    ("hallucination", {"prediction": MUSEUM}, "no contexts", "stops with an error"),
    ("hallucination", {"prediction": "", "contexts": (MUSEUM,)}, "empty prediction", "0.0, the best value"),
    ("summary_coherence", {"prediction": MUSEUM, "query": None},
     "no source text (the query column holds the text that was summarized)", "asks the judge with an empty source"),
    ("summary_coherence", {"prediction": "", "query": MUSEUM}, "empty prediction", "rate the empty summary"),
]


@pytest.mark.parametrize("metric, fields, reason, seed", CASES)
def test_every_missing_input_rule_is_a_listed_departure(env: Env, capsys: pytest.CaptureFixture[str], metric: str,
                                                         fields: dict, reason: str, seed: str) -> None:
    fields = {"query": "When does the museum open?", **fields}
    prediction = fields.pop("prediction")
    got = env.score([row("gap", prediction, **fields)], metric)
    assert got["gap", metric][::2] == (None, reason)
    _, departures = shown(capsys, metric)
    named = [d for d in departures if seed in d]
    assert named, f"{metric}: no departure says {seed!r}: {departures}"


def test_each_departure_gives_its_reason() -> None:
    for spec in BY_NAME.values():
        for departure in spec.plan.departures:
            # a rule, what the seed system does, and a why: at least two sentences or a stated consequence
            assert "seed system" in departure and len(departure) > 80, (spec.name, departure)


# -- 7. faithfulness without claims ---------------------------------------------------------------

def test_no_claims_is_unscored_and_the_seed_rule_is_one_parameter_away(
        env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    reply = row("polite", "Hope this helps.", contexts=(MUSEUM,))
    assert env.score([reply], "faithfulness")["polite", "faithfulness"][::2] == (None, "no claims in the prediction")
    seed = env.score([reply], "faithfulness", faithfulness={"no_claims": "faithful"})
    assert seed["polite", "faithfulness"][0] == 1.0
    page, departures = shown(capsys, "faithfulness")
    assert "leaves the case open" not in page
    [rule] = [d for d in departures if d.startswith("A prediction with no claims")]
    assert "the seed system returns 1.0" in rule and "no_claims = 'faithful'" in rule
