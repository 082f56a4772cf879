"""Exact match and token F1 against the SQuAD v1.1 evaluation logic; WER against jiwer; lengths."""

from __future__ import annotations

import random
import re
import string
from collections import Counter

import jiwer
import pytest

from lexical_cases import EDGE_CASES, generated_cases, long_pair, rows
from textgen_core.registry import get_metric
from textgen_core.metrics.lexical import score_lexical
from textgen_core.model import Datum

TOL = 1e-12
CASES = generated_cases(600, seed=41)


# --- The SQuAD v1.1 evaluation logic, restated here as the reference -------------------------
def squad_normalize(text):
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def squad_f1(prediction, truth):
    pred_tokens = squad_normalize(prediction).split()
    truth_tokens = squad_normalize(truth).split()
    common = Counter(pred_tokens) & Counter(truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(pred_tokens)
    recall = 1.0 * num_same / len(truth_tokens)
    return (2 * precision * recall) / (precision + recall)


def squad_em(prediction, truth):
    return squad_normalize(prediction) == squad_normalize(truth)


def best_over(metric, prediction, truths):
    return max(metric(prediction, truth) for truth in truths)


def _answer_cases():
    """Short SQuAD-like answers: articles, punctuation, case and spacing variants."""
    rng = random.Random(4)
    words = ["the", "a", "an", "The", "Eiffel", "tower", "Paris", "1889", "an", "apple", "U.S.", "state's",
             "an-other", "théâtre", "東京", "(1)", "Mr.", "anthem", "then"]
    cases = []
    for i in range(300):
        truth = " ".join(rng.choice(words) for _ in range(rng.randint(0, 6)))
        mutated = [w.upper() if rng.random() < 0.2 else w for w in truth.split() if rng.random() < 0.8]
        if rng.random() < 0.5:
            mutated.insert(rng.randint(0, len(mutated)), rng.choice(words))
        prediction = (rng.choice(["", " ", "  "])).join(mutated) if mutated else ""
        prediction += rng.choice(["", ".", "!", " ,"])
        refs = (truth,) if rng.random() < 0.7 else (truth, " ".join(rng.choice(words) for _ in range(3)))
        cases.append((f"answer-{i}", refs, prediction))
    return cases


ANSWERS = _answer_cases()
EXTRA = [
    ("articles-only", ("The",), "a an the"),
    ("article-inside-word", ("another theory",), "other theory"),
    ("punctuation-joins", ("U.S.A.",), "USA"),
    ("unicode-punctuation-kept", ("«quote»",), "quote"),
]


@pytest.mark.parametrize("group", ["generated", "answers", "edges"])
def test_exact_match_and_f1_match_squad(group):
    cases = {"generated": CASES, "answers": ANSWERS, "edges": EDGE_CASES + EXTRA}[group]
    out = score_lexical(rows(cases), {"exact_match": {}, "token_f1": {}})
    for (case_id, refs, prediction), em, f1 in zip(cases, out["exact_match"], out["token_f1"]):
        assert em["exact_match"].value == float(best_over(squad_em, prediction, refs)), case_id
        assert f1["f1"].value == pytest.approx(best_over(squad_f1, prediction, refs), abs=TOL, rel=0), case_id


def test_f1_details_and_best_reference():
    out = score_lexical([Datum("1", "m", prediction="the big red apple", references=("apple", "big red apple pie"))],
                        {"token_f1": {}, "exact_match": {}})
    f1 = out["token_f1"][0]["f1"]
    assert f1.details == {"precision": 1.0, "recall": 0.75, "reference": 1}
    assert f1.value == pytest.approx(2 * 0.75 / 1.75, abs=TOL)
    assert out["exact_match"][0]["exact_match"].value == 0.0


@pytest.mark.parametrize("group", ["generated", "edges"])
def test_wer_matches_jiwer(group):
    cases = {"generated": CASES, "edges": EDGE_CASES + [("long", (long_pair(5000)[0],), long_pair(5000)[1])]}[group]
    cells = score_lexical(rows(cases), {"wer": {}})["wer"]
    for (case_id, refs, prediction), cell in zip(cases, cells):
        usable = [r for r in refs if r.split()]
        if not usable:
            assert cell["wer"].value is None and cell["wer"].reason == "the reference has no words", case_id
            continue
        want = min(jiwer.wer(r, prediction) for r in usable)
        assert cell["wer"].value == pytest.approx(want, abs=TOL, rel=0), case_id


def test_wer_corpus_equals_jiwer_on_chosen_references():
    spec = get_metric("wer")
    cells = score_lexical(rows(CASES), {"wer": {}})["wer"]
    chosen_refs, hyps = [], []
    for (_, refs, prediction), cell in zip(CASES, cells):
        if cell["wer"].value is None:
            continue
        chosen_refs.append(refs[cell["wer"].details.get("reference", 0)])
        hyps.append(prediction)
    assert spec.corpus(rows(CASES), cells, spec.resolve())["wer"] == pytest.approx(
        jiwer.wer(chosen_refs, hyps), abs=TOL, rel=0)


def test_wer_declares_lower_is_better():
    spec = get_metric("wer")
    assert spec.direction == "lower" and spec.value_range == (0.0, None)
    cell = score_lexical([Datum("1", "m", prediction="", references=("a b c",))], {"wer": {}})["wer"][0]["wer"]
    assert cell.value == 1.0 and cell.details["deletions"] == 3


@pytest.mark.parametrize(
    "row, expected",
    [
        (Datum("1", "m", prediction="one two  three", references=("a b", "c d e f"), contexts=("x y", "z")),
         {"answer_length": 3.0, "reference_length": 3.0, "context_length": 3.0}),
        (Datum("2", "m", prediction="", references=("",), contexts=("",)),
         {"answer_length": 0.0, "reference_length": 0.0, "context_length": 0.0}),
        (Datum("3", "m", prediction="東京 🍕\nnew\tline", references=("word",)),
         {"answer_length": 4.0, "reference_length": 1.0, "context_length": "no contexts"}),
        (Datum("4", "m", prediction=None), {"answer_length": "no prediction", "reference_length": "no references",
                                            "context_length": "no contexts"}),
    ],
    ids=["counts", "empty-texts", "unicode-no-contexts", "absent"],
)
def test_lengths(row, expected):
    cells = score_lexical([row], {"lengths": {}})["lengths"][0]
    for name, want in expected.items():
        if isinstance(want, str):
            assert cells[name].value is None and cells[name].reason == want
        else:
            assert cells[name].value == want


def test_lengths_of_long_text():
    reference, prediction, _ = long_pair(5000)
    cells = score_lexical([Datum("1", "m", prediction=prediction, references=(reference,))], {"lengths": {}})
    assert cells["lengths"][0]["reference_length"].value == 5000.0
    assert cells["lengths"][0]["answer_length"].value == float(len(prediction.split()))
