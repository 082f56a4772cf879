"""Cohen's kappa and correlations against a textbook example, scipy and (if installed) scikit-learn."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from textgen_core.compare import cohen_kappa, correlations, judge_human_agreement
from textgen_core.errors import ParameterError
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store


def test_kappa_textbook_example() -> None:
    # 50 items: both yes 20, A yes / B no 5, A no / B yes 10, both no 15.
    # p_o = 35/50 = 0.7; p_e = 0.5*0.6 + 0.5*0.4 = 0.5; kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4.
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_kappa_edge_cases() -> None:
    assert cohen_kappa([1, 0, 1], [1, 0, 1]) == pytest.approx(1.0)
    assert cohen_kappa([1, 0], [0, 1]) == pytest.approx(-1.0)
    assert math.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))  # chance agreement is total: undefined
    assert math.isnan(cohen_kappa([], []))
    with pytest.raises(ParameterError):
        cohen_kappa([1, 0], [1])


@pytest.mark.parametrize("seed", range(5))
def test_kappa_equals_scikit_learn(seed: int) -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(seed)
    a = rng.choice(["pass", "fail", "partial"], 60)
    b = np.where(rng.random(60) < 0.6, a, rng.choice(["pass", "fail", "partial"], 60))
    assert cohen_kappa(a.tolist(), b.tolist()) == pytest.approx(metrics.cohen_kappa_score(a, b), abs=1e-12)
    x, y = rng.random(40) > 0.5, rng.random(40) > 0.3
    assert cohen_kappa(x.tolist(), y.tolist()) == pytest.approx(metrics.cohen_kappa_score(x, y), abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_correlations_equal_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(1, 6, 50).astype(float)  # human 1-5 ratings: many ties
    y = 0.1 * x + rng.normal(0, 0.3, 50)
    got = correlations(x, y)
    rho, r = stats.spearmanr(x, y), stats.pearsonr(x, y)
    assert got["spearman"] == pytest.approx(rho.statistic, abs=1e-12)
    assert got["spearman_p"] == pytest.approx(rho.pvalue, rel=1e-9)
    assert got["pearson"] == pytest.approx(r.statistic, abs=1e-12)
    assert got["pearson_p"] == pytest.approx(r.pvalue, rel=1e-9)


def test_correlations_undefined_for_constant_or_tiny_input() -> None:
    assert all(math.isnan(v) for v in correlations([1.0, 1.0, 1.0], [0.1, 0.2, 0.3]).values())
    assert all(math.isnan(v) for v in correlations([1.0], [2.0]).values())


def agreement_store(path: Path) -> tuple[Store, int, dict[str, Any]]:
    """Two models, two scores and human columns in the metadata; some human values absent or unreadable."""
    rng = np.random.default_rng(11)
    rows, cells = [], []
    truth: dict[str, Any] = {}
    for model in ("m1", "m2"):
        for i in range(30):
            human = float(rng.integers(1, 6))
            meta: dict[str, Any] = {"rating": human, "verdict": "Good" if human >= 3 else "bad", "flag": human >= 3}
            if i == 0:
                meta = {}  # no human value at all
            elif i == 1:
                meta = {"rating": "n/a", "verdict": "", "flag": None}
            rows.append(Datum(f"q{i}", model, prediction="p", metadata=meta))
            judge = min(1.0, max(0.0, human / 5 + rng.normal(0, 0.2)))
            cells.append((f"q{i}", model, "judge", "faithfulness", judge, None, None))
            cells.append((f"q{i}", model, "lex", "overlap", float(rng.random()), None, None))
            truth[(model, f"q{i}")] = (human if i > 1 else None, judge)
    store = Store(path)
    run_id = store.create_run(store.save_dataset(Dataset("rated", rows, metadata_columns=("rating", "verdict", "flag"))),
                              ["judge", "lex"], {}, {}, ["m1", "m2"])
    store.write_cells(run_id, cells)
    return store, run_id, truth


def test_score_agreement_matches_scipy_on_the_same_datums(db_path: Path) -> None:
    store, run_id, truth = agreement_store(db_path)
    frame = judge_human_agreement(store, run_id, "rating", scores=["faithfulness"])
    assert frame[["model", "score"]].values.tolist() == [["m1", "faithfulness"], ["m2", "faithfulness"]]
    assert frame.attrs["skipped"] == 2  # "n/a" for each model
    for row in frame.itertuples():
        pairs = [truth[(row.model, f"q{i}")] for i in range(2, 30)]
        human, judge = np.array(pairs, dtype=float).T
        assert row.n == 28
        assert row.spearman == pytest.approx(stats.spearmanr(judge, human).statistic, abs=1e-12)
        assert row.pearson == pytest.approx(stats.pearsonr(judge, human).statistic, abs=1e-12)
        assert row.spearman > 0.5 and row.pearson_p < 0.01


def test_label_agreement_thresholds_scores(db_path: Path) -> None:
    store, run_id, truth = agreement_store(db_path)
    frame = judge_human_agreement(store, run_id, "verdict", kind="label", threshold=0.6, positive_label="good")
    assert set(frame["score"]) == {"faithfulness", "overlap"} and len(frame) == 4
    row = frame[(frame["model"] == "m2") & (frame["score"] == "faithfulness")].iloc[0]
    human = [truth[("m2", f"q{i}")][0] >= 3 for i in range(2, 30)]
    judged = [truth[("m2", f"q{i}")][1] >= 0.6 for i in range(2, 30)]
    assert row["n"] == 28
    assert row["kappa"] == pytest.approx(cohen_kappa(judged, human))
    assert row["agreement"] == pytest.approx(np.mean(np.array(judged) == np.array(human)))
    # A boolean column needs no positive label: True >= 0.5.
    flags = judge_human_agreement(store, run_id, "flag", kind="label", threshold=0.6, scores=["faithfulness"])
    assert flags[flags["model"] == "m2"].iloc[0]["kappa"] == pytest.approx(row["kappa"])


def test_label_agreement_equals_scikit_learn(db_path: Path) -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    store, run_id, truth = agreement_store(db_path)
    frame = judge_human_agreement(store, run_id, "rating", kind="label", threshold=0.5, scores=["faithfulness"])
    for row in frame.itertuples():
        human = [truth[(row.model, f"q{i}")][0] >= 0.5 for i in range(2, 30)]
        judged = [truth[(row.model, f"q{i}")][1] >= 0.5 for i in range(2, 30)]
        assert row.kappa == pytest.approx(metrics.cohen_kappa_score(judged, human), nan_ok=True)


@pytest.mark.parametrize(("column", "kwargs", "message"), [
    ("stars", {}, "no datum has a human column 'stars'; metadata columns: rating, verdict, flag"),
    ("verdict", {"kind": "label"}, "say which label is positive"),
    ("verdict", {}, "holds no numbers"),
    ("verdict", {"kind": "label", "positive_label": "excellent"}, "no datum has the label 'excellent'"),
    ("rating", {"kind": "rank"}, "kind must be"),
    ("rating", {"scores": ["bleu"]}, "no scored values for 'bleu'"),
])
def test_bad_agreement_requests(db_path: Path, column: str, kwargs: dict, message: str) -> None:
    store, run_id, _ = agreement_store(db_path)
    with pytest.raises(ParameterError, match=message):
        judge_human_agreement(store, run_id, column, **kwargs)
