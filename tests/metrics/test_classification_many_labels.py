"""Issue 34, point 14: classification with thousands of labels stays bounded in what it prints and holds.

2,500 labels over 5,000 rows printed 75 MB and used 1.5 GB: the dense labels x labels matrix was built, kept in
the report and printed whole. Now the matrix covers the labels with the most support, every non-zero cell is
kept as a list (bounded by the rows), the largest confusions are printed with a note counting the rest, and the
per-label numbers still equal scikit-learn's for every label.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import confusion_matrix, precision_recall_fscore_support

from textgen_core.cli.main import main
from textgen_core.metrics.classification import report
from textgen_core.metrics.classification.labels import read_row
from textgen_core.metrics.classification.report import SHOWN_LABELS, TOP_CONFUSIONS
from textgen_core.metrics.classification.spec import SPEC
from textgen_core.model import Datum

TOL = 1e-9


def _many(n_rows: int, n_labels: int, seed: int = 0) -> list[Datum]:
    rng = np.random.default_rng(seed)
    gold = rng.zipf(1.3, size=n_rows) % n_labels  # a long tail, as real label sets have
    wrong = rng.random(n_rows) < 0.4
    predicted = np.where(wrong, rng.integers(n_labels, size=n_rows), gold)
    return [Datum(f"d{i}", "m", prediction=f"L{p}", references=(f"L{g}",))
            for i, (g, p) in enumerate(zip(gold, predicted))]


def test_a_report_of_thousands_of_labels_is_bounded_and_exact() -> None:
    rows = _many(6000, 3000)
    params = SPEC.resolve()
    outs = [read_row(r, params) for r in rows]
    tracemalloc.start()
    ours = report([r.datum_id for r in rows], outs, params)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 150e6, f"{peak / 1e6:.0f} MB"  # the dense int64 matrix alone would be 72 MB, its lists ~10x that
    labels = ours["labels"]
    assert len(labels) > 2000 and len(ours["per_label"]) == len(labels)  # every label keeps its numbers
    y_true, y_pred = [o.gold for o in outs], [o.winner for o in outs]
    p, r, f, s = precision_recall_fscore_support(y_true, y_pred, labels=labels, zero_division=0)
    got = pd.DataFrame(ours["per_label"])
    assert np.allclose(got["precision"], p, atol=TOL) and np.allclose(got["recall"], r, atol=TOL)
    assert np.allclose(got["f1"], f, atol=TOL) and (got["support"].to_numpy() == s).all()
    confusion = ours["confusion"]
    assert len(confusion["labels"]) == SHOWN_LABELS and len(confusion["matrix"]) == SHOWN_LABELS
    assert confusion["n_labels"] == len(labels) and f"{len(labels):,} labels" in confusion["note"]
    assert len(ours["pr_curves"]) == SHOWN_LABELS and all(len(d) == SHOWN_LABELS for d in ours["detailed"].values())
    # the shown labels are the ones with the most support; their block of the matrix equals scikit-learn's
    support = dict(zip(labels, s))
    assert min(support[x] for x in confusion["labels"]) >= sorted(s)[-SHOWN_LABELS]
    want = confusion_matrix(y_true, y_pred, labels=confusion["labels"])
    assert confusion["matrix"] == want.tolist()
    # every non-zero cell, and the largest off-diagonal ones
    pairs = pd.Series(list(zip(y_true, y_pred))).value_counts()
    assert {(g, k): n for g, k, n in confusion["cells"]} == pairs.to_dict()
    off = pairs[[g != k for g, k in pairs.index]]
    assert [c["count"] for c in confusion["top_confusions"]] == sorted(off.tolist(), reverse=True)[:TOP_CONFUSIONS]


def test_few_labels_keep_the_whole_matrix_and_curves() -> None:
    rows = _many(500, 12)
    params = SPEC.resolve()
    ours = report([r.datum_id for r in rows], [read_row(r, params) for r in rows], params)
    assert ours["confusion"]["note"] is None and ours["curves_note"] is None
    assert ours["confusion"]["labels"] == ours["labels"] and len(ours["pr_curves"]) == len(ours["labels"])


@pytest.mark.timeout(600)
def test_the_cli_prints_a_bounded_report_of_many_labels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = _many(5000, 2500)
    data = tmp_path / "labels.csv"
    pd.DataFrame({"id": [r.datum_id for r in rows], "model": "m", "prediction": [r.prediction for r in rows],
                  "reference": [r.references[0] for r in rows]}).to_csv(data, index=False)
    assert main(["--db", str(tmp_path / "c.duckdb"), "run", str(data), "--metrics", "classification"]) == 0
    out = capsys.readouterr().out
    assert len(out) < 40_000, len(out)  # was 75 MB
    assert f"per label: the {SHOWN_LABELS} labels with the most support of " in out
    assert "labels: the matrix shows the 30 with the most support; the confusion has" in out
    assert "largest confusions (gold -> predicted: rows):" in out
    assert "confusion matrix (rows: gold label" not in out


def test_the_paired_comparison_of_many_labels_is_sparse_and_equals_scikit_learn(tmp_path: Path) -> None:
    from sklearn.metrics import accuracy_score, f1_score

    from textgen_core import api
    from textgen_core.compare.classification import compare_classification
    from textgen_core.store import Store

    base, cand = _many(3000, 2000, seed=1), _many(3000, 2000, seed=1)
    rng = np.random.default_rng(5)
    flips = rng.random(len(cand)) < 0.2
    frame = pd.DataFrame(
        [{"id": r.datum_id, "model": "base", "prediction": r.prediction, "reference": r.references[0]} for r in base]
        + [{"id": r.datum_id, "model": "cand", "prediction": r.references[0] if f else r.prediction,
            "reference": r.references[0]} for r, f in zip(cand, flips)])
    store = Store(tmp_path / "c.duckdb")
    run_id = api.score(frame, ["classification"], store=store).attrs["run_id"]
    tracemalloc.start()
    c = compare_classification(store, run_id, "base", "cand", resamples=200)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 200e6, f"{peak / 1e6:.0f} MB"  # dense rows x labels counts were 3 x 48 MB, and copies per resample
    gold = frame[frame.model == "base"]["reference"].tolist()
    for model, accuracy, f1 in (("base", c.accuracy_baseline, c.f1_macro_baseline),
                                ("cand", c.accuracy_candidate, c.f1_macro_candidate)):
        predicted = frame[frame.model == model]["prediction"].tolist()
        assert accuracy == pytest.approx(accuracy_score(gold, predicted), abs=TOL)
        assert f1 == pytest.approx(f1_score(gold, predicted, average="macro", zero_division=0), abs=TOL)
    assert c.f1_ci_low <= c.f1_macro_delta <= c.f1_ci_high
