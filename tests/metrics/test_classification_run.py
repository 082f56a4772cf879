"""Classification through a real run: Python API, CLI, stored cells, edge cases, the paired comparison."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.contingency_tables import mcnemar

from textgen_core import api
from textgen_core.compare.classification import classification_reports, compare_classification, confusion_datums
from textgen_core.metrics.classification import report
from textgen_core.metrics.classification.labels import read_row
from textgen_core.metrics.classification.spec import SPEC
from textgen_core.model import Datum
from textgen_core.store import Store


def _frame(n: int = 120, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    labels = ["pos", "neg", "neutral"]
    rows = []
    for i in range(n):
        gold = labels[rng.integers(3)]
        for model, skill in (("good", 0.85), ("weak", 0.5)):
            pred = gold if rng.random() < skill else labels[rng.integers(3)]
            rows.append({"id": f"q{i}", "model": model, "prediction": pred, "reference": gold})
    return pd.DataFrame(rows)


def test_api_run_report_equals_the_report_of_the_same_rows(tmp_path):
    frame = _frame()
    store = Store(tmp_path / "c.duckdb")
    wide = api.score(frame, ["classification"], store=store)
    reports = classification_reports(store, wide.attrs["run_id"])
    params = SPEC.resolve()
    for model, rep in reports.items():
        mine = frame[frame["model"] == model]
        rows = [Datum(i, model, prediction=p, references=(r,)) for i, p, r in
                zip(mine["id"], mine["prediction"], mine["reference"])]
        direct = report([r.datum_id for r in rows], [read_row(r, params) for r in rows], params)
        assert sorted(rep["per_label"], key=lambda p: p["label"]) == sorted(direct["per_label"],
                                                                          key=lambda p: p["label"])
        assert rep["averages"] == direct["averages"] and rep["confusion"]["matrix"]
        aggregates = store.aggregates(wide.attrs["run_id"])
        stored = aggregates[aggregates["model"] == model].set_index("score")["value"]
        assert stored["f1_macro"] == pytest.approx(direct["averages"]["f1_macro"], abs=1e-12)
        assert wide[wide["model"] == model]["label_correct"].mean() == pytest.approx(direct["averages"]["accuracy"])


def test_a_confusion_cell_lists_its_datums(tmp_path):
    frame = _frame(40)
    store = Store(tmp_path / "c.duckdb")
    run_id = api.score(frame, ["classification"], store=store).attrs["run_id"]
    weak = frame[frame["model"] == "weak"]
    want = sorted(weak[(weak["reference"] == "pos") & (weak["prediction"] == "neg")]["id"])
    assert sorted(confusion_datums(store, run_id, "weak", "pos", "neg")) == want
    assert confusion_datums(store, run_id, "weak", "pos", None) == []
    assert confusion_datums(store, run_id, "weak", "no such label", "neg") == []


def test_compare_mcnemar_equals_statsmodels_and_the_bootstrap_brackets_the_macro_f1_difference(tmp_path):
    frame = _frame(150, seed=3)
    store = Store(tmp_path / "c.duckdb")
    run_id = api.score(frame, ["classification"], store=store).attrs["run_id"]
    result = compare_classification(store, run_id, "weak", "good", resamples=500, seed=1)
    good = frame[frame["model"] == "good"].set_index("id")
    weak = frame[frame["model"] == "weak"].set_index("id").loc[good.index]
    a, b = weak["prediction"] == weak["reference"], good["prediction"] == good["reference"]
    table = [[int((a & b).sum()), int((a & ~b).sum())], [int((~a & b).sum()), int((~a & ~b).sum())]]
    assert result.mcnemar_p == pytest.approx(mcnemar(table, exact=True).pvalue, abs=1e-12)
    assert (result.baseline_only, result.candidate_only) == (table[0][1], table[1][0])
    reports = classification_reports(store, run_id)
    assert result.f1_macro_delta == pytest.approx(
        reports["good"]["averages"]["f1_macro"] - reports["weak"]["averages"]["f1_macro"], abs=1e-12)
    assert result.f1_ci_low <= result.f1_macro_delta <= result.f1_ci_high
    assert result.f1_p < 0.05 and result.mcnemar_p < 0.05
    again = compare_classification(store, run_id, "weak", "good", resamples=500, seed=1)
    assert again == result  # same seed, same numbers


ODD = [
    ("", "no prediction|the predicted label is empty"),
    ('{"pos": "0.9", "neg": 0.1}', "not text|finite numbers"),
    ('{"pos": 0.9, "POS": 0.1}', None),
    ("{not json", "not a JSON object"),
    ("{}", "empty object"),
    ('{"pos": -1}', ">= 0"),
    ('{"pos": NaN}', "finite"),
    ('{"pos": [0.9]}', "finite numbers"),
]


@pytest.mark.parametrize("prediction, reason", ODD)
def test_odd_predictions_are_unscored_with_their_reason_never_wrong(prediction, reason):
    row = Datum("1", "m", prediction=prediction, references=("pos",))
    cell = SPEC.score([row], {})[0]["label_correct"]
    if reason is None:  # distinct keys without lowercasing are two labels
        assert cell.value == 1.0
        assert SPEC.score([row], {"lowercase": True})[0]["label_correct"].reason.startswith("two scores")
        return
    import re

    assert cell.value is None and re.search(reason, cell.reason), cell.reason


def test_several_references_and_a_missing_confidence_are_unscored():
    two = Datum("1", "m", prediction="pos", references=("pos", "neg"))
    assert "one gold label" in SPEC.score([two], {})[0]["label_correct"].reason
    row = Datum("1", "m", prediction="pos", references=("pos",), metadata={"conf": "high"})
    assert "not a number" in SPEC.score([row], {"score_column": "conf"})[0]["label_correct"].reason
    row = Datum("1", "m", prediction="pos", references=("pos",), metadata={"conf": "0.7"})
    cell = SPEC.score([row], {"score_column": "conf"})[0]["label_correct"]
    assert cell.value == 1.0 and cell.details["score"] == 0.7


def test_normalisation_is_off_by_default_and_declared_when_on():
    row = Datum("1", "m", prediction=" Positive.\n", references=("positive",))
    assert SPEC.score([row], {})[0]["label_correct"].value == 0.0
    params = {"strip_whitespace": True, "strip_punctuation": True, "lowercase": True}
    assert SPEC.score([row], params)[0]["label_correct"].value == 1.0
    assert "tok:labels+strip_whitespace+strip_punctuation+lowercase" in SPEC.signature(SPEC.resolve(params))


def test_ties_go_to_the_first_label_given():
    row = Datum("1", "m", prediction=json.dumps({"neg": 0.5, "pos": 0.5}), references=("pos",))
    cell = SPEC.score([row], {})[0]["label_correct"]
    assert cell.value == 0.0 and cell.details["label"] == "neg"


def test_detailed_curves_sort_errors_and_keep_examples():
    rows = [Datum("a", "m", prediction="pos", references=("pos",)),
            Datum("b", "m", prediction="neg", references=("pos",)),
            Datum("c", "m", prediction="maybe", references=("neg",)),
            Datum("d", "m", prediction=json.dumps({"pos": 0.2, "neg": 0.1}), references=("pos",))]
    params = SPEC.resolve({"pr_thresholds": [0.5], "max_examples": 1})
    rep = report([r.datum_id for r in rows], [read_row(r, params) for r in rows], params)
    at = rep["detailed"]["0.5"]
    assert at["pos"]["tp"] == {"count": 1, "examples": ["a"]}
    assert at["pos"]["fn"]["misclassifications"] == {"count": 1, "examples": ["b"]}
    assert at["pos"]["fn"]["missed_detections"] == {"count": 1, "examples": ["d"]}  # 0.2 < 0.5: nothing passed
    assert at["maybe"]["fp"] == {"hallucinations": {"count": 1, "examples": ["c"]}}  # no gold label is 'maybe'
    assert at["neg"]["fp"]["misclassifications"]["examples"] == ["b"]


def test_cli_run_prints_per_label_scores_averages_and_the_confusion_matrix(tmp_path, cli_main):
    data = tmp_path / "labels.csv"
    _frame(30).to_csv(data, index=False)
    db = tmp_path / "c.duckdb"
    out = cli_main("--db", db, "run", data, "--metrics", "classification")
    assert out.returncode == 0, out.stderr
    assert "classification, model good: 30 labelled rows scored, 0 unscored" in out.stdout
    assert "label precision recall     f1  support" in out.stdout
    assert "averages: accuracy" in out.stdout and "f1_macro" in out.stdout
    assert "gold \\ predicted" in out.stdout
    listing = cli_main("metrics")
    assert all(name in listing.stdout for name in ("classification", "bertscore", "lsa", "semantic_similarity"))
    compared = cli_main("--db", db, "compare", "1", "--baseline", "weak", "--resamples", "200")
    assert compared.returncode == 0, compared.stderr
    assert "McNemar p" in compared.stdout and "macro-F1" in compared.stdout


def test_public_api(): import textgen_core; assert textgen_core.classification_reports and textgen_core.compare_classification


def test_the_python_api_returns_the_report_the_cli_prints(tmp_path):
    frame = _frame(20)
    wide = api.score(frame, ["classification"])
    reports = wide.attrs["classification"]
    assert set(reports) == {"good", "weak"}
    assert reports["good"]["confusion"]["labels"] and reports["good"]["averages"]["accuracy"] == pytest.approx(
        wide[wide["model"] == "good"]["label_correct"].mean())
    assert "classification" not in api.score(frame, ["exact_match"]).attrs
