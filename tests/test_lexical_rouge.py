"""ROUGE against rouge-score's RougeScorer.score_multi: values equal to 1e-12 (in practice bit-equal)."""

from __future__ import annotations

import random

import pytest
from rouge_score import rouge_scorer

from lexical_cases import EDGE_CASES, generated_cases, long_pair, rows
from textgen_core.errors import ParameterError
from textgen_core.metrics import get_metric
from textgen_core.metrics.lexical import score_lexical
from textgen_core.model import Datum

TYPES = ("rouge1", "rouge2", "rouge3", "rougeL", "rougeLsum")
TOL = 1e-12


def _ours(cases, types=TYPES, stem=False):
    return score_lexical(rows(cases), {"rouge": {"rouge_types": types, "use_stemmer": stem}})["rouge"]


def _assert_matches(cases, types=TYPES, stem=False):
    scorer = rouge_scorer.RougeScorer(list(types), use_stemmer=stem)
    for (case_id, refs, prediction), cells in zip(cases, _ours(cases, types, stem)):
        expected = scorer.score_multi(list(refs), prediction)
        for rouge_type in types:
            cell, want = cells[rouge_type], expected[rouge_type]
            got = (cell.value, cell.details["precision"], cell.details["recall"])
            assert got == pytest.approx((want.fmeasure, want.precision, want.recall), abs=TOL, rel=0), (
                case_id, rouge_type, got, want)


@pytest.mark.parametrize("stem", [False, True], ids=["plain", "stemmed"])
def test_generated_pairs_match_rouge_score(stem):
    _assert_matches(generated_cases(600, seed=11), stem=stem)


@pytest.mark.parametrize("case", EDGE_CASES, ids=[c[0] for c in EDGE_CASES])
@pytest.mark.parametrize("stem", [False, True], ids=["plain", "stemmed"])
def test_edge_cases_match_rouge_score(case, stem):
    _assert_matches([case], stem=stem)


def test_empty_texts_score_zero_like_rouge_score():
    cells = _ours([("e", ("",), "")])[0]
    assert {t: cells[t].value for t in TYPES} == {t: 0.0 for t in TYPES}


def test_multiline_ties_match_rouge_score():
    # Small vocabularies and many lines: many equally long LCS, so the backtracking path matters.
    rng = random.Random(5)
    cases = []
    for i in range(400):
        vocab = "abcdef"[: rng.randint(1, 6)]

        def text():
            return "\n".join(
                " ".join(rng.choice(vocab) for _ in range(rng.randint(0, rng.choice((3, 9, 20)))))
                for _ in range(rng.randint(1, 5))
            )

        cases.append((f"ties-{i}", (text(),), text()))
    _assert_matches(cases, types=("rougeL", "rougeLsum"))


def test_several_references_pick_first_best_per_type():
    refs = ("a b c d", "a b c d", "x y")
    cells = _ours([("multi", refs, "a b c d")], types=("rouge1", "rougeL"))[0]
    assert cells["rouge1"].value == 1.0
    assert cells["rouge1"].details["reference"] == 0  # np.argmax: the first of equal maxima
    cells = _ours([("multi", ("x y", "c d", "a b c"), "a b c d")], types=("rouge1",))[0]
    assert cells["rouge1"].details["reference"] == 2
    assert cells["rouge1"].value == pytest.approx(2 * 0.75 * 1.0 / 1.75, abs=TOL)


def test_long_text_5000_words():
    reference, prediction, lcs = long_pair(5000)
    cells = _ours([("long", (reference,), prediction)], types=("rouge1", "rouge2", "rougeL", "rougeLsum"))[0]
    expected = rouge_scorer.RougeScorer(["rouge1", "rouge2"]).score(reference, prediction)
    for rouge_type in ("rouge1", "rouge2"):
        assert cells[rouge_type].value == pytest.approx(expected[rouge_type].fmeasure, abs=TOL)
    # rouge-score's LCS table would take minutes here; the LCS length is known by construction.
    precision, recall = lcs / len(prediction.split()), lcs / len(reference.split())
    assert cells["rougeL"].details["precision"] == pytest.approx(precision, abs=TOL)
    assert cells["rougeL"].details["recall"] == pytest.approx(recall, abs=TOL)
    assert cells["rougeL"].value == pytest.approx(2 * precision * recall / (precision + recall), abs=TOL)
    assert cells["rougeLsum"].value == cells["rougeL"].value  # one line each: summary level equals rougeL


def test_long_multiline_text_matches_rouge_score():
    reference, prediction, _ = long_pair(1000, seed=9)
    ref_words, pred_words = reference.split(), prediction.split()
    reference = "\n".join(" ".join(ref_words[i : i + 50]) for i in range(0, len(ref_words), 50))
    prediction = "\n".join(" ".join(pred_words[i : i + 45]) for i in range(0, len(pred_words), 45))
    _assert_matches([("long-lines", (reference,), prediction)], types=("rougeLsum",))


def test_seed_example_mean_of_score_multi():
    # The evaluate-style example of seed 003: its printed aggregate is the mean of rouge-score's
    # per-row score_multi F-measures.
    predictions = [
        "Transformers Transformers are fast plus efficient",
        "Good Morning",
        "I am waiting for new Transformers",
    ]
    references = [
        ("HuggingFace Transformers are fast efficient plus awesome",
         "Transformers are awesome because they are fast to execute"),
        ("Good Morning Transformers", "Morning Transformers"),
        ("People are eagerly waiting for new Transformer models", "People are very excited about new Transformers"),
    ]
    cases = [(str(i), refs, p) for i, (refs, p) in enumerate(zip(references, predictions))]
    types = ("rouge1", "rouge2", "rougeL", "rougeLsum")
    cells = _ours(cases, types)
    scorer = rouge_scorer.RougeScorer(list(types))
    printed = {"rouge1": 0.6659340659340659, "rouge2": 0.45454545454545453,
               "rougeL": 0.6146520146520146, "rougeLsum": 0.6146520146520146}
    for rouge_type in types:
        ours = sum(c[rouge_type].value for c in cells) / 3
        direct = sum(scorer.score_multi(list(r), p)[rouge_type].fmeasure for r, p in zip(references, predictions)) / 3
        assert ours == pytest.approx(direct, abs=TOL)
        assert ours == pytest.approx(printed[rouge_type], abs=TOL)


def test_outputs_follow_rouge_types():
    spec = get_metric("rouge")
    params = spec.resolve({"rouge_types": "rougeLsum,rouge4"})
    assert spec.outputs(params) == ("rougeLsum", "rouge4")
    cells = score_lexical(rows([("x", ("a b c d e",), "a b c d e")]), {"rouge": params})["rouge"][0]
    assert set(cells) == {"rougeLsum", "rouge4"} and cells["rouge4"].value == 1.0


@pytest.mark.parametrize("raw", ["rouge0", "rougeS", "rouge10", ""])
def test_unknown_rouge_type_is_a_parameter_error(raw):
    with pytest.raises(ParameterError, match="rouge.rouge_types"):
        get_metric("rouge").resolve({"rouge_types": raw})


@pytest.mark.parametrize(
    "row, reason",
    [
        (Datum("1", "m", prediction="a b", references=()), "no references"),
        (Datum("2", "m", prediction=None, references=("a b",)), "no prediction"),
    ],
    ids=["no-references", "no-prediction"],
)
def test_rows_without_inputs_are_unscored(row, reason):
    cells = score_lexical([row], {"rouge": {}})["rouge"][0]
    assert set(cells) == {"rouge1", "rouge2", "rougeL", "rougeLsum"}
    assert all(c.value is None and c.reason == reason for c in cells.values())
