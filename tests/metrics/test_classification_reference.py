"""Classification numbers against the seed system (valor-lite's classification module) and scikit-learn, live."""

from __future__ import annotations

import json

import numpy as np
import pytest
from classification_data import bare, scored
from sklearn.metrics import accuracy_score, confusion_matrix, precision_recall_fscore_support, roc_auc_score
from valor_lite.classification import Classification, Loader, MetricType

from textgen_core.metrics.classification import report
from textgen_core.metrics.classification.labels import pairs, read_row
from textgen_core.metrics.classification.spec import SPEC

TOL = 1e-9


def _outputs(rows, params):
    outs = [read_row(r, params) for r in rows]
    assert not any(isinstance(o, str) for o in outs), outs
    return outs


def _valor(rows, outs):
    loader = Loader.in_memory()
    loader.add_data([Classification(uid=r.datum_id, groundtruth=o.gold, predictions=pairs(o)[0], scores=pairs(o)[1])
                     for r, o in zip(rows, outs)])
    return loader.finalize()


def _by_label(metrics, threshold):
    return {m.parameters["label"]: m.value for m in metrics if m.parameters["score_threshold"] == threshold}


CASES = [
    ("bare", lambda: bare(300, 1), {}),
    ("confidence", lambda: bare(300, 2, confidence=True), {"score_column": "conf"}),
    ("scores", lambda: scored(300, 3), {}),
    ("scores with ties", lambda: scored(300, 4, ties=True), {}),
]


@pytest.mark.parametrize("hardmax", [True, False])
@pytest.mark.parametrize("threshold", [0.0, 0.25, 0.5])
@pytest.mark.parametrize("name, make, extra", CASES, ids=[c[0] for c in CASES])
def test_per_label_scores_accuracy_and_confusion_equal_valor_lite(name, make, extra, threshold, hardmax):
    rows = make()
    params = SPEC.resolve({**extra, "score_threshold": threshold, "hardmax": hardmax,
                           "pr_thresholds": [0.1, 0.5, 0.9]})
    outs = _outputs(rows, params)
    ours = report([r.datum_id for r in rows], outs, params)
    evaluator = _valor(rows, outs)
    theirs = evaluator.compute_precision_recall(score_thresholds=[threshold], hardmax=hardmax)
    per_label = {p["label"]: p for p in ours["per_label"]}
    for kind, key in ((MetricType.Precision, "precision"), (MetricType.Recall, "recall"), (MetricType.F1, "f1")):
        for label, value in _by_label(theirs[kind], threshold).items():
            assert per_label[label][key] == pytest.approx(value, abs=TOL), (kind, label)
    for label, value in _by_label(theirs[MetricType.Counts], threshold).items():
        assert {k: per_label[label][k] for k in ("tp", "fp", "fn", "tn")} == value
    assert ours["averages"]["accuracy"] == pytest.approx(theirs[MetricType.Accuracy][0].value, abs=TOL)
    matrix = evaluator.compute_confusion_matrix(score_thresholds=[threshold], hardmax=hardmax)[0].value
    labels = ours["confusion"]["labels"]
    for i, gold in enumerate(labels):
        assert ours["confusion"]["unmatched"][i] == matrix["unmatched_ground_truths"][gold]
        for j, predicted in enumerate(labels):
            assert ours["confusion"]["matrix"][i][j] == matrix["confusion_matrix"][gold][predicted]
    # the precision-recall curves are the same counts over their thresholds
    curves = evaluator.compute_precision_recall(score_thresholds=[0.1, 0.5, 0.9], hardmax=hardmax)
    for t in (0.1, 0.5, 0.9):
        for label, value in _by_label(curves[MetricType.Precision], t).items():
            point = next(p for p in ours["pr_curves"][label] if p["threshold"] == t)
            assert point["precision"] == pytest.approx(value, abs=TOL)


@pytest.mark.parametrize("ties", [False, True])
def test_roc_auc_equals_valor_lite_and_scikit_learn(ties):
    rows = scored(400, 7, ties=ties)
    params = SPEC.resolve()
    outs = _outputs(rows, params)
    ours = report([r.datum_id for r in rows], outs, params)
    rocauc = _valor(rows, outs).compute_rocauc()
    valor_auc = {m.parameters["label"]: m.value for m in rocauc[MetricType.ROCAUC]}
    gold = np.array([o.gold for o in outs])
    for entry in ours["per_label"]:
        label = entry["label"]
        sk = roc_auc_score(gold == label, [o.scores[label] for o in outs])
        assert entry["roc_auc"] == pytest.approx(valor_auc[label], abs=TOL)
        assert entry["roc_auc"] == pytest.approx(sk, abs=TOL)
    assert ours["averages"]["roc_auc_mean"] == pytest.approx(rocauc[MetricType.mROCAUC][0].value, abs=TOL)


@pytest.mark.parametrize("name, make, extra", CASES, ids=[c[0] for c in CASES])
def test_averages_equal_scikit_learn(name, make, extra):
    rows = make()
    params = SPEC.resolve(extra)
    outs = _outputs(rows, params)
    ours = report([r.datum_id for r in rows], outs, params)["averages"]
    y_true = [o.gold for o in outs]
    y_pred = [o.winner for o in outs]
    assert ours["accuracy"] == pytest.approx(accuracy_score(y_true, y_pred), abs=TOL)
    for average in ("macro", "micro", "weighted"):
        p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, average=average, zero_division=0)
        assert (ours[f"precision_{average}"], ours[f"recall_{average}"], ours[f"f1_{average}"]) == pytest.approx(
            (p, r, f), abs=TOL), average


def test_confusion_matrix_equals_scikit_learn_and_a_never_predicted_label_has_precision_zero():
    rows = bare(200, 11, labels=("a", "b", "c"))
    rows = [type(r)(r.datum_id, r.model, prediction="a" if r.prediction == "c" else r.prediction,
                    references=r.references) for r in rows]  # 'c' is a gold label never predicted
    params = SPEC.resolve()
    outs = _outputs(rows, params)
    ours = report([r.datum_id for r in rows], outs, params)
    labels = ours["confusion"]["labels"]
    want = confusion_matrix([o.gold for o in outs], [o.winner for o in outs], labels=labels)
    assert ours["confusion"]["matrix"] == want.tolist()
    c = next(p for p in ours["per_label"] if p["label"] == "c")
    assert (c["precision"], c["recall"], c["tp"], c["fp"]) == (0.0, 0.0, 0, 0) and c["support"] > 0


def test_one_class_only_leaves_roc_auc_undefined_and_out_of_the_mean():
    rows = scored(50, 5)
    gold_first = [type(r)(r.datum_id, r.model, prediction=r.prediction, references=("cat",)) for r in rows]
    params = SPEC.resolve()
    ours = report([r.datum_id for r in gold_first], _outputs(gold_first, params), params)
    assert all(p["roc_auc"] is None for p in ours["per_label"])  # cat: no negatives; the others: no positives
    assert "roc_auc_mean" not in ours["averages"]
    assert ours["averages"]["accuracy"] == pytest.approx(
        np.mean([max(json.loads(r.prediction), key=json.loads(r.prediction).get) == "cat" for r in rows]))
