"""Reciprocal rank (MRR) and pass@k."""

from __future__ import annotations

import random
from fractions import Fraction
from math import comb

import numpy as np
import pytest

from textgen_core.errors import ParameterError
from textgen_core.registry import get_metric
from textgen_core.metrics.lexical import pass_at_k, score_lexical
from textgen_core.model import Datum

CONTEXTS = ("Paris is in France.", "Berlin is in Germany.", "  Rome is in Italy. ", "Madrid is in Spain.")


def _rr(label, contexts=CONTEXTS, **params):
    metadata = {} if label is ... else {params.pop("column", "relevant_contexts"): label}
    row = Datum("1", "m", prediction="x", contexts=contexts, metadata=metadata)
    return score_lexical([row], {"mrr": params})["mrr"][0]["reciprocal_rank"]


@pytest.mark.parametrize(
    "label, value, rank",
    [
        ("[2, 4]", 0.5, 2),
        ([3], 1 / 3, 3),
        ((4, 1), 1.0, 1),
        (2, 0.5, 2),
        (2.0, 0.5, 2),
        ("3", 1 / 3, 3),
        ("4|2", 0.5, 2),
        (" 4 | 3 ", 1 / 3, 3),
        ('["Berlin is in Germany.", "Madrid is in Spain."]', 0.5, 2),
        ("Rome is in Italy.", 1 / 3, 3),
        ("Madrid is in Spain.|Paris is in France.", 1.0, 1),
        ("[9]", 0.0, None),
        ("Lisbon is in Portugal.", 0.0, None),
        ("[0, -1, 1.5]", 0.0, None),
    ],
)
def test_reciprocal_rank(label, value, rank):
    cell = _rr(label)
    assert cell.value == pytest.approx(value, abs=1e-15)
    assert cell.details["rank"] == rank


def test_custom_column_and_delimiter():
    cell = _rr("3;1", column="gold", relevant_column="gold", delimiter=";")
    assert cell.value == 1.0 and cell.details["relevant"] == [1, 3]


@pytest.mark.parametrize("label", [..., None, "", "  ", [], float("nan"), "[]"])
def test_missing_label_is_unscored(label):
    cell = _rr(label)
    assert cell.value is None and "relevant_contexts" in cell.reason


def test_no_contexts_is_unscored():
    cell = _rr("1", contexts=())
    assert cell.value is None and cell.reason == "no retrieved contexts"


def test_mean_reciprocal_rank_over_rows():
    labels = ["1", "2", "[3]", "9"]
    data = [Datum(str(i), "m", contexts=CONTEXTS, metadata={"relevant_contexts": lab}) for i, lab in enumerate(labels)]
    values = [c["reciprocal_rank"].value for c in score_lexical(data, {"mrr": {}})["mrr"]]
    assert sum(values) / len(values) == pytest.approx((1 + 1 / 2 + 1 / 3 + 0) / 4, abs=1e-15)


def test_mrr_needs_the_relevance_column():
    spec = get_metric("mrr")
    assert spec.missing({"contexts"}, spec.resolve()) == ["needs a 'relevant_contexts' column (parameter relevant_column)"]
    assert spec.missing({"contexts", "gold"}, spec.resolve({"relevant_column": "gold"})) == []


# --- pass@k -----------------------------------------------------------------------------------
def exact_pass_at_k(n, c, k):
    return float(1 - Fraction(comb(n - c, k), comb(n, k)))


def codex_pass_at_k(n, c, k):
    """The numerically stable estimator as printed in the Codex paper (Chen et al. 2021)."""
    if n - c < k:
        return 1.0
    return 1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1))


def _grid():
    rng = random.Random(8)
    grid = [(n, c, k) for n in range(1, 9) for c in range(0, n + 1) for k in range(1, n + 1)]
    grid += [(rng.randint(50, 400), 0, 1) for _ in range(5)]
    grid += [(n, rng.randint(0, n), rng.randint(1, n)) for n in (100, 200, 1000) for _ in range(30)]
    return grid


@pytest.mark.parametrize("n, c, k", _grid())
def test_estimator_matches_exact_and_codex_formula(n, c, k):
    value = pass_at_k.pass_at_k(n, c, k)
    assert value == pytest.approx(exact_pass_at_k(n, c, k), abs=1e-12)
    assert value == pytest.approx(codex_pass_at_k(n, c, k), abs=1e-12)


def test_per_row_columns():
    data = [
        Datum("1", "m", metadata={"n": 10, "c": 3}),
        Datum("2", "m", metadata={"n": "5", "c": "0"}),
        Datum("3", "m", metadata={"n": 3.0, "c": 3}),
        Datum("4", "m", metadata={"n": 2, "c": 1}),
        Datum("5", "m", metadata={"n": 2, "c": 5}),
        Datum("6", "m", metadata={"n": "many", "c": 1}),
    ]
    cells = score_lexical(data, {"pass_at_k": {"k": "1,3"}})["pass_at_k"]
    assert cells[0]["pass@1"].value == pytest.approx(0.3, abs=1e-12)
    assert cells[0]["pass@3"].value == pytest.approx(exact_pass_at_k(10, 3, 3), abs=1e-12)
    assert cells[1]["pass@1"].value == 0.0 and cells[2]["pass@3"].value == 1.0
    assert cells[3]["pass@1"].value == 0.5 and "fewer than k=3" in cells[3]["pass@3"].reason
    assert "exceed" in cells[4]["pass@1"].reason and "'n'" in cells[5]["pass@1"].reason


def _samples():
    """Problem p1: 4 samples, 1 passes; p2: 3 samples, all pass; p3: 2 samples, none passes (two models)."""
    flags = {"p1": ["no", "yes", "0", "false"], "p2": [True, "PASS", 1], "p3": ["failed", "fail"]}
    data = []
    for model in ("a", "b"):
        for problem, values in flags.items():
            for i, flag in enumerate(values):
                data.append(Datum(f"{problem}-{i}", model, metadata={"task": problem, "ok": flag}))
    data.append(Datum("orphan", "a", metadata={"ok": "yes"}))
    data.append(Datum("unknown", "a", metadata={"task": "p1", "ok": "maybe"}))
    return data


def test_grouped_mode_counts_samples_per_problem():
    spec = get_metric("pass_at_k")
    params = spec.resolve({"k": "1,2", "group_column": "task", "pass_column": "ok"})
    data = _samples()
    cells = score_lexical(data, {"pass_at_k": params})["pass_at_k"]
    by_id = {(row.model, row.datum_id): c for row, c in zip(data, cells)}
    assert by_id[("a", "p1-0")]["pass@1"].value == pytest.approx(0.25, abs=1e-12)
    assert by_id[("a", "p1-3")]["pass@2"].value == pytest.approx(exact_pass_at_k(4, 1, 2), abs=1e-12)
    assert by_id[("a", "p1-1")]["pass@1"].details == {"group": "p1", "n": 4, "c": 1, "passed": True}
    assert by_id[("b", "p2-0")]["pass@2"].value == 1.0 and by_id[("a", "p3-1")]["pass@1"].value == 0.0
    assert "no problem id" in by_id[("a", "orphan")]["pass@1"].reason
    assert "no pass/fail value" in by_id[("a", "unknown")]["pass@1"].reason
    model_a = [(r, c) for r, c in zip(data, cells) if r.model == "a"]
    aggregate = spec.corpus([r for r, _ in model_a], [c for _, c in model_a], params)
    assert aggregate["pass@1"] == pytest.approx((0.25 + 1.0 + 0.0) / 3, abs=1e-12)  # mean over problems, not rows
    assert aggregate["pass@2"] == pytest.approx((exact_pass_at_k(4, 1, 2) + 1.0 + 0.0) / 3, abs=1e-12)


def test_grouped_aggregate_survives_split_chunks():
    spec = get_metric("pass_at_k")
    params = spec.resolve({"group_column": "task", "pass_column": "ok"})
    data = [r for r in _samples() if r.model == "a"]
    cells = []
    for start in range(0, len(data), 3):  # chunks cut through problems
        cells += score_lexical(data[start:start + 3], {"pass_at_k": params})["pass_at_k"]
    assert spec.corpus(data, cells, params)["pass@1"] == pytest.approx((0.25 + 1.0 + 0.0) / 3, abs=1e-12)


def test_columns_checked_depend_on_the_mode():
    spec = get_metric("pass_at_k")
    assert spec.missing({"n", "c"}, spec.resolve()) == []
    grouped = spec.resolve({"group_column": "task"})
    assert spec.missing({"task"}, grouped) == ["needs a 'passed' column (parameter pass_column)"]
    assert spec.missing({"task", "passed"}, grouped) == []


@pytest.mark.parametrize("raw", ["0", "1.5", "-2", "x", ""])
def test_bad_k(raw):
    with pytest.raises(ParameterError, match=r"pass_at_k\.k"):
        get_metric("pass_at_k").resolve({"k": raw})


def test_outputs_name_each_k():
    spec = get_metric("pass_at_k")
    assert spec.outputs(spec.resolve({"k": "1, 10, 100, 10"})) == ("pass@1", "pass@10", "pass@100")
