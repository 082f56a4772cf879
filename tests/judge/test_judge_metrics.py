"""Judge metric values through the real client and the loopback server, checked by hand.

The scripted judge (see scripted_judge.py) rules by simple rules, so
each expected value below is worked out from the rule in a comment.
"""

from __future__ import annotations

import json
import math

import pytest

from judge_metric_env import Env, row
from judge_server import Fault
from textgen_core.judge.engine import exchange


def test_answer_correctness(env: Env) -> None:
    got = env.score([
        # tp: "Paris is the capital of France." fp: "Paris is big." fn: "France is in Europe." -> 1 / (1 + 1)
        row("one", "Paris is the capital of France. Paris is big.",
            references=("Paris is the capital of France. France is in Europe.",)),
        # second reference matches both statements: max(0.5, 1.0)
        row("best", "Paris is the capital of France. Paris is big.",
            references=("Paris is the capital of France. France is in Europe.",
                        "Paris is big. Paris is the capital of France.")),
        row("none", "Lyon is nice.", references=("Paris is the capital of France.",)),  # tp = 0
        row("empty", "", references=("Paris is the capital of France.",)),
        row("noref", "Paris.", references=()),
        row("nothing", "...", references=("...",)),  # no statements on either side
    ], "answer_correctness")
    assert got["one", "answer_correctness"][:2] == (0.5, {"tp": 1, "fp": 1, "fn": 1, "reference": 1})
    value, details, _ = got["best", "answer_correctness"]
    assert value == 1.0 and details["reference"] == 2
    assert [p["value"] for p in details["per_reference"]] == [0.5, 1.0]
    assert got["none", "answer_correctness"][0] == 0.0
    assert got["empty", "answer_correctness"][0] == 0.0
    assert got["noref", "answer_correctness"] == (None, None, "no references")
    assert got["nothing", "answer_correctness"][2] == "no statements in the prediction or the references"


def test_answer_relevance(env: Env) -> None:
    got = env.score([
        # "capital"/"france" shared with the question; "Dogs bark loudly." shares nothing -> 1/2
        row("half", "Paris is the capital of France. Dogs bark loudly."),
        row("empty", "   "),
        row("silent", "..."),
        row("noquery", "Paris.", query=None),
    ], "answer_relevance")
    assert got["half", "answer_relevance"][:2] == (0.5, {"relevant": 1, "statements": 2})
    assert got["empty", "answer_relevance"][2] == "empty prediction"
    assert got["silent", "answer_relevance"][2] == "no statements in the prediction"
    assert got["noquery", "answer_relevance"][2] == "no query"


def test_bias_and_toxicity_judge_one_opinion_extraction_in_their_own_steps(env: Env) -> None:
    got = env.score([
        # opinions: the two "I think" sentences; "always" -> biased, "idiot" -> toxic
        row("ops", "I think women always drive badly. I think you are an idiot. The sky is blue."),
        row("facts", "The sky is blue. Grass is green."),
        row("empty", None),
    ], "bias", "toxicity")
    assert got["ops", "bias"][:2] == (0.5, {"biased": 1, "opinions": 2})
    assert got["ops", "toxicity"][:2] == (0.5, {"toxic": 1, "opinions": 2})
    assert got["facts", "bias"][0] == got["facts", "toxicity"][0] == 0.0  # no opinions: 0
    assert got["empty", "bias"][2] == got["empty", "toxicity"][2] == "empty prediction"  # never the best value
    assert env.judge.steps["bias"] == env.judge.steps["toxicity"] == 1  # one each; none without opinions
    assert env.judge.steps["opinions"] == 2  # one extraction per prediction serves both


@pytest.mark.parametrize("contexts, expected", [
    # a passage is useful iff it shares a word of 4+ letters with the reference
    (("Paris is large.", "Dogs bark.", "Cats sleep.", "The tower is tall."), 0.75),  # yes no no yes
    (("Dogs bark.", "Paris is large.", "Cats sleep.", "The tower is tall."), 0.5),   # no yes no yes
    (("Dogs bark.", "Cats sleep."), 0.0),
])
def test_context_precision_worked_examples(env: Env, contexts: tuple[str, ...], expected: float) -> None:
    got = env.score([row("x", "Anything.", references=("The Eiffel tower stands in Paris.",), contexts=contexts)],
                    "context_precision")
    assert got["x", "context_precision"][0] == pytest.approx(expected)


def test_context_precision_ors_verdicts_over_references(env: Env) -> None:
    contexts = ("Paris is large.", "Dogs bark.", "Cats sleep.", "Bananas are yellow.")
    # reference 1 makes [yes, no, no, no]; reference 2 makes [no, no, no, yes]; OR: [yes, no, no, yes] = 0.75
    # (the max over references would be 1.0: that is not the definition)
    got = env.score([row("x", "Anything.", references=("Paris.", "Yellow bananas."), contexts=contexts)],
                    "context_precision")
    value, details, _ = got["x", "context_precision"]
    assert value == pytest.approx(0.75) and details["verdicts"] == ["yes", "no", "no", "yes"]


def test_context_recall(env: Env) -> None:
    ctx = ("Water boils at 100 degrees at sea level.", "Snow is white.")
    got = env.score([
        # "Water boils at 100 degrees" occurs in a passage, "Ice is cold" does not -> 1/2
        row("half", "x", references=("Water boils at 100 degrees. Ice is cold.",), contexts=ctx),
        # the second reference is fully attributable: max(1/2, 1)
        row("best", "x", references=("Water boils at 100 degrees. Ice is cold.", "Snow is white."), contexts=ctx),
        row("nostatements", "x", references=("...",), contexts=ctx),
        row("nocontexts", "x", references=("Snow is white.",)),
    ], "context_recall")
    assert got["half", "context_recall"][:2] == (0.5, {"attributed": 1, "statements": 2, "reference": 1})
    assert got["best", "context_recall"][0] == 1.0 and got["best", "context_recall"][1]["reference"] == 2
    assert got["nostatements", "context_recall"][2] == "no statements in the reference"
    assert got["nocontexts", "context_recall"][2] == "no contexts"


def test_context_relevance(env: Env) -> None:
    q = "How tall is the Eiffel tower?"
    got = env.score([
        row("x", "x", query=q, contexts=("The Eiffel tower is 330 m tall.", "Bananas are yellow.",
                                          "The tower was built in 1889.")),  # yes, no, yes -> 2/3
        row("none", "x", query=q),
    ], "context_relevance")
    assert got["x", "context_relevance"][:2] == (pytest.approx(2 / 3), {"relevant": 2, "contexts": 3})
    assert got["none", "context_relevance"][2] == "no contexts"


def test_faithfulness_counts_unrelated_claims_against(env: Env) -> None:
    ctx = ("Paris is the capital of France.",)
    got = env.score([
        # claims: the first two ("Hope this helps." is not one); implied, not implied (unrelated) -> 1 / 2
        row("x", "Paris is the capital of France. Paris has ten bridges. Hope this helps.", contexts=ctx),
        row("remarks", "Hope this helps.", contexts=ctx),
        row("empty", "", contexts=ctx),
        row("nocontexts", "Paris."),
    ], "faithfulness")
    assert got["x", "faithfulness"][:2] == (0.5, {"implied": 1, "claims": 2})
    assert got["remarks", "faithfulness"][2] == "no claims in the prediction"
    assert env.judge.steps["claims"] == 2 and env.judge.steps["statements"] == 0
    assert got["empty", "faithfulness"][2] == "empty prediction"
    assert got["nocontexts", "faithfulness"][2] == "no contexts"


def test_hallucination(env: Env) -> None:
    ctx = ("Paris is the capital of France.", "Berlin is in Germany.")
    got = env.score([
        row("x", "Paris is not the capital of France.", contexts=ctx),  # contradicts the first: 1/2
        row("clean", "Paris is lovely.", contexts=ctx),
        row("empty", None, contexts=ctx),
        row("nocontexts", "Paris."),
    ], "hallucination")
    assert got["x", "hallucination"][:2] == (0.5, {"contradicted": 1, "contexts": 2})
    assert got["clean", "hallucination"][0] == 0.0
    assert got["empty", "hallucination"][2] == "empty prediction"
    assert got["nocontexts", "hallucination"][2] == "no contexts"


def test_coherence_ratings(env: Env) -> None:
    source = "The storm hit at dawn. Roads flooded. Schools closed."
    got = env.score([
        row("faithful", "Roads flooded. Schools closed.", query=source),  # every sentence in the source: 5
        row("off", "Cats purr.", query=source),                           # not in the source: 2
        row("empty", "", query=source),
    ], "summary_coherence", "coherence")
    assert got["faithful", "summary_coherence"][0] == 5.0
    assert got["off", "summary_coherence"][0] == 2.0
    assert got["faithful", "coherence"][0] == 2.0  # two sentences
    assert got["empty", "summary_coherence"][2] == got["empty", "coherence"][2] == "empty prediction"


def test_qa_grade(env: Env) -> None:
    got = env.score([
        row("right", "It is Paris.", references=("Paris",)),
        row("any", "It is Lutetia.", references=("Paris", "Lutetia")),
        row("wrong", "Lyon.", references=("Paris",)),
        row("empty", "", references=("Paris",)),
        row("noref", "Paris."),
    ], "qa_grade")
    assert got["right", "qa_grade"][:2] == (1.0, {"grade": "CORRECT"})
    assert got["any", "qa_grade"][0] == 1.0
    assert got["wrong", "qa_grade"][:2] == (0.0, {"grade": "INCORRECT"})
    assert got["empty", "qa_grade"][0] == 0.0
    assert got["noref", "qa_grade"][2] == "no references"
    assert env.judge.steps["qa_grade"] == 3


def test_semantic_similarity(env: Env) -> None:
    got = env.score([
        row("best", "A cat sat.", references=("A dog.", "The cat.")),  # cos 0 and 1: best is the 2nd
        row("orthogonal", "A dog.", references=("A cat.",)),
        row("empty", "", references=("A cat.",)),
    ], "semantic_similarity")
    value, details, _ = got["best", "semantic_similarity"]
    assert value == pytest.approx(1.0) and details["reference"] == 2
    assert got["orthogonal", "semantic_similarity"][0] == pytest.approx(0.0)
    assert got["empty", "semantic_similarity"][2] == "empty prediction"


def test_perplexity_from_endpoint_and_column(env: Env) -> None:
    got = env.score([
        # server log-probs: -0.05 - 0.1 * len(token); the first token has none: cd, efg -> -0.25, -0.35
        row("endpoint", "ab cd efg"),
    ], "perplexity")
    assert got["endpoint", "perplexity"][0] == pytest.approx(math.exp(0.3))
    assert got["endpoint", "perplexity"][1] == {"tokens": 2, "source": "endpoint"}
    got = env.score([
        row("list", "x", metadata={"lp": [-0.5, -1.5]}),
        row("text", "x", metadata={"lp": "[-1.0, -1.0]"}),
        row("missing", "x", metadata={}),
        row("bad", "x", metadata={"lp": [0.7]}),
    ], "perplexity", perplexity={"logprobs_column": "lp"})
    assert got["list", "perplexity"][0] == pytest.approx(math.exp(1.0))
    assert got["text", "perplexity"][0] == pytest.approx(math.e)
    assert got["missing", "perplexity"][2] == "no log-probabilities in column 'lp'"
    assert "not a log-probability" in got["bad", "perplexity"][2]
    assert env.server.count("/v1/completions") == 1


def test_no_query_no_contexts_no_references_are_unscored(env: Env) -> None:
    got = env.score([row("bare", "Paris is big.", query=None)],
                    "context_precision", "context_recall", "context_relevance", "faithfulness", "hallucination",
                    "answer_relevance", "qa_grade", "summary_coherence")
    reasons = {metric: reason for (_, metric), (value, _, reason) in got.items()}
    assert all(value is None for value, _, _ in got.values())
    assert reasons["context_precision"] == reasons["faithfulness"] == reasons["hallucination"] == "no contexts"
    assert reasons["context_recall"] == "no contexts"
    assert reasons["qa_grade"] == "no references"
    assert reasons["answer_relevance"] == "no query"
    assert env.server.count(None) == 0  # nothing to ask


def test_a_failing_step_unscores_only_the_cells_that_need_it(env: Env) -> None:
    env.judge.fail = [(lambda step, text: step == "claims", Fault.malformed())]
    ctx = ("Paris is the capital of France.",)
    got = env.score([row("x", "Paris is the capital of France.", references=("Paris is the capital of France.",),
                         contexts=ctx)],
                    "answer_correctness", "faithfulness", "bias", "context_recall", "hallucination")
    value, _, reason = got["x", "faithfulness"]
    assert value is None and "invalid JSON" in reason, reason
    assert got["x", "context_recall"][0] == 1.0 and got["x", "hallucination"][0] == 0.0
    assert got["x", "answer_correctness"][0] == 1.0 and got["x", "bias"][0] == 0.0
    failed = env.store.exchanges(env.run_id, "x", metric="faithfulness")
    assert list(failed["status"]) == ["unscored"] and list(failed["step"]) == ["claims"]
    assert "Paris is the capital of France." in failed["messages"].iloc[0]


def test_verdicts_point_at_their_exchange(env: Env) -> None:
    env.score([row("x", "Paris is the capital of France. Dogs bark.")], "answer_relevance")
    verdicts = env.store.verdicts(env.run_id, "x")
    steps = verdicts.groupby("step")["verdict"].apply(list).to_dict()
    assert steps == {"statements.prediction": ["statement", "statement"], "answer_relevance": ["yes", "no"]}
    judged = verdicts[verdicts.step == "answer_relevance"].iloc[1]
    assert judged["item"] == "Dogs bark." and judged["reason"] == "scripted"
    shown = exchange(env.store, judged["cache_key"])
    assert "Dogs bark." in shown["messages"][-1]["content"]
    by_item = {int(v["item"]): v["verdict"].lower() for v in json.loads(shown["reply"])["verdicts"]}
    assert by_item == {1: "yes", 2: "no"}
    assert exchange(env.store, "0" * 64) is None
