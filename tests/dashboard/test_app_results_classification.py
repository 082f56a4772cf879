"""Results page of a classification run through AppTest: per-label table, confusion matrix, curves, and a
confusion cell's datums opening in Explore."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from app_helpers import all_text, no_exception, page, store

from textgen_core import api
from textgen_core.compare.classification import classification_reports
from textgen_dashboard.state import (EXPLORE_DATUM, EXPLORE_RUN, RESULTS_CLASS_GOLD, RESULTS_CLASS_MODEL,
                                     RESULTS_CLASS_PREDICTED, RESULTS_OPEN, RESULTS_RUN)


@pytest.fixture
def classification_run(app_db):
    rng = np.random.default_rng(2)
    labels = ["pos", "neg", "neutral"]
    rows = []
    for i in range(60):
        gold = labels[rng.integers(3)]
        for model in ("alpha", "beta"):
            logits = rng.normal(size=3)
            logits[labels.index(gold)] += 1.5 if model == "alpha" else 0.3
            probs = np.exp(logits) / np.exp(logits).sum()
            rows.append({"id": f"q{i}", "model": model, "reference": gold,
                         "prediction": json.dumps(dict(zip(labels, np.round(probs, 3).tolist())))})
    frame = api.score(pd.DataFrame(rows), ["classification"], store=store(), name="labels")
    return frame.attrs["run_id"], rows


def _results(run_id):
    at = page("app.py").run()
    at = at.switch_page("views/results.py").run()
    at.selectbox(key=RESULTS_RUN).set_value(run_id).run()
    return at


def _figures(at):
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def test_confusion_matrix_and_curves_equal_the_core_report(classification_run):
    run_id, _ = classification_run
    at = _results(run_id)
    no_exception(at)
    assert "Classification" in all_text(at)
    report = classification_reports(store(), run_id)[at.selectbox(key=RESULTS_CLASS_MODEL).value]
    figures = _figures(at)
    heatmap = next(f for f in figures if f["data"][0]["type"] == "heatmap")
    z = heatmap["data"][0]["z"]
    assert [row[:-1] for row in z] == report["confusion"]["matrix"]
    assert [row[-1] for row in z] == report["confusion"]["unmatched"]
    titles = [f["layout"]["title"]["text"] for f in figures if "title" in f["layout"]]
    assert any("Precision-recall" in t for t in titles) and any("ROC" in t for t in titles)
    roc = next(f for f in figures if "ROC" in f["layout"].get("title", {}).get("text", ""))
    assert len(roc["data"]) == len(report["roc"]) + 1  # one curve per label, and chance
    per_label = next(df.value for df in at.dataframe if "support" in df.value.columns)
    assert per_label.set_index("label")["f1"].to_dict() == pytest.approx(
        {p["label"]: p["f1"] for p in report["per_label"]})


def test_a_confusion_cell_lists_its_datums_and_one_opens_in_explore(classification_run):
    run_id, rows = classification_run
    at = _results(run_id)
    at.selectbox(key=RESULTS_CLASS_MODEL).set_value("beta").run()
    at.selectbox(key=RESULTS_CLASS_GOLD).set_value("pos").run()
    at.selectbox(key=RESULTS_CLASS_PREDICTED).set_value("neg").run()
    no_exception(at)
    want = sorted(r["id"] for r in rows if r["model"] == "beta" and r["reference"] == "pos"
                  and max(json.loads(r["prediction"]).items(), key=lambda kv: kv[1])[0] == "neg")
    listed = next(df.value for df in at.dataframe if list(df.value.columns) == ["datum_id"])
    assert sorted(listed["datum_id"]) == want and want
    assert f"{len(want)} datums with gold 'pos' and prediction 'neg'" in all_text(at)
    at.session_state[RESULTS_OPEN] = want[0]  # what selecting the row does
    at.run()
    no_exception(at)
    assert at.session_state[EXPLORE_RUN] == run_id and at.session_state[EXPLORE_DATUM] == want[0]


def test_a_run_without_classification_shows_no_section(sample_run):
    _, run_id = sample_run
    at = _results(run_id)
    no_exception(at)
    assert all(box.key != RESULTS_CLASS_GOLD for box in at.selectbox)
    assert not any(f["data"] and f["data"][0]["type"] == "heatmap" for f in _figures(at))
