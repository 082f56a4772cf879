"""Classification runs read back from the store: each model's report, the datums behind a confusion cell, and
two models compared on the same datums (exact McNemar on accuracy, paired bootstrap on macro-F1)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..errors import ParameterError
from ..metrics.classification import cell_datums, report
from ..metrics.classification.counts import Pairs, build, positives
from ..metrics.classification.labels import LabelOutput, from_details
from ..metrics.classification.spec import SCORE
from ..store import Store
from .stats import rng_for
from .verdicts import mcnemar_exact

METRIC = "classification"


def _outputs(store: Store, run_id: int) -> tuple[dict[str, Any], dict[str, tuple[list[str], list[LabelOutput]]]]:
    """(the run's classification parameters, {model: (datum ids, label outputs)}) of the scored rows."""
    run = store.get_run(run_id)
    if METRIC not in run["metrics"]:
        raise ParameterError(f"run {run_id} has no classification metric (its metrics: {', '.join(run['metrics'])})")
    frame = store.scores(run_id, scores=[SCORE])
    by_model: dict[str, tuple[list[str], list[LabelOutput]]] = {}
    for datum_id, model, value, details in zip(frame["datum_id"], frame["model"], frame["value"], frame["details"]):
        if value is None or (isinstance(value, float) and math.isnan(value)) or not details:
            continue
        ids, outputs = by_model.setdefault(model, ([], []))
        ids.append(str(datum_id))
        outputs.append(from_details(json.loads(details) if isinstance(details, str) else details))
    return run["params"][METRIC], by_model


def classification_reports(store: Store, run_id: int) -> dict[str, dict[str, Any]]:
    """{model: report} of a run's classification metric; the report also counts the model's unscored rows."""
    params, by_model = _outputs(store, run_id)
    run = store.get_run(run_id)
    out = {}
    for model in run["models"]:
        ids, outputs = by_model.get(model, ([], []))
        out[model] = report(ids, outputs, params) if outputs else {"rows": 0}
    unscored = store.scores(run_id, scores=[SCORE])
    for model in out:
        mine = unscored[(unscored["model"] == model) & unscored["value"].isna()]
        out[model]["unscored"] = int(len(mine))
        out[model]["unscored_reasons"] = mine["reason"].value_counts().head(5).to_dict()
    return out


def confusion_datums(store: Store, run_id: int, model: str, gold: str, predicted: str | None) -> list[str]:
    """Datum ids of one confusion-matrix cell (``predicted`` None: gold rows no label passed)."""
    params, by_model = _outputs(store, run_id)
    ids, outputs = by_model.get(model, ([], []))
    return cell_datums(ids, outputs, params, gold, predicted)


@dataclass(frozen=True)
class ClassificationComparison:
    """Candidate against baseline on the datums both were scored on."""

    n: int
    accuracy_baseline: float
    accuracy_candidate: float
    #: Discordant datums: right for the baseline only, right for the candidate only.
    baseline_only: int
    candidate_only: int
    mcnemar_p: float
    f1_macro_baseline: float
    f1_macro_candidate: float
    f1_macro_delta: float
    f1_ci_low: float
    f1_ci_high: float
    f1_p: float
    #: Datums scored for one model only (left out of both tests).
    unpaired: int


def _contributions(p: Pairs, params: Mapping[str, Any]) -> tuple[np.ndarray, Any, Any, Any]:
    """Per row: correct flag, and tp, fp, fn counts per label (sparse rows x labels: a row touches a few labels,
    so 10,000 labels cost no more than 10), as the counts module counts."""
    from scipy import sparse

    positive = positives(p, params["score_threshold"], params["hardmax"])
    match = p.match
    n, k = len(p.gold), len(p.labels)

    def counted(rows: np.ndarray, labels: np.ndarray) -> Any:
        return sparse.csr_matrix((np.ones(len(rows)), (rows, labels)), shape=(n, k))  # duplicates add up

    tp = counted(p.row[match & positive], p.label[match & positive])
    fp = counted(p.row[~match & positive], p.label[~match & positive])
    missed = np.bincount(p.row[(match & ~positive) | (~match & positive)], minlength=n) > 0
    fn = counted(np.flatnonzero(missed), p.gold[missed])
    return np.asarray(tp.sum(axis=1)).ravel() > 0, tp, fp, fn


def _totals(counts: Any) -> np.ndarray:
    """Column sums of a sparse (rows x labels) count matrix, as a flat array."""
    return np.asarray(counts.sum(axis=0)).ravel()


def _macro_f1(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> np.ndarray:
    """Macro F1 of each row of (resamples x labels) counts, over the labels seen in that resample."""
    precision = np.divide(tp, tp + fp, out=np.zeros_like(tp), where=(tp + fp) > 0)
    recall = np.divide(tp, tp + fn, out=np.zeros_like(tp), where=(tp + fn) > 0)
    f1 = np.divide(2 * precision * recall, precision + recall, out=np.zeros_like(tp),
                   where=(precision + recall) > 1e-9)
    used = (tp + fp + fn) > 0
    return np.where(used, f1, 0.0).sum(axis=-1) / np.maximum(used.sum(axis=-1), 1)


def compare_classification(store: Store, run_id: int, baseline: str, candidate: str, *, resamples: int = 2000,
                           confidence: float = 0.95, seed: int = 0) -> ClassificationComparison:
    """Exact McNemar test on the paired correct/wrong labels, and a paired bootstrap of the macro-F1 difference
    (datums resampled together; percentile interval; p = twice the smaller share of resampled differences on
    either side of zero, at least 1/resamples)."""
    if resamples < 1:
        raise ParameterError(f"resamples must be at least 1, got {resamples}")
    params, by_model = _outputs(store, run_id)
    for model in (baseline, candidate):
        if model not in by_model:
            raise ParameterError(f"model {model!r} has no scored classification rows in run {run_id}")
    (ids_a, out_a), (ids_b, out_b) = by_model[baseline], by_model[candidate]
    where_b = {d: i for i, d in enumerate(ids_b)}
    common = [(i, where_b[d]) for i, d in enumerate(ids_a) if d in where_b]
    unpaired = len(ids_a) + len(ids_b) - 2 * len(common)
    if not common:
        raise ParameterError(f"{baseline!r} and {candidate!r} share no scored datum in run {run_id}")
    a_rows, b_rows = [i for i, _ in common], [j for _, j in common]
    labels_a = [out_a[i] for i in a_rows]
    labels_b = [out_b[j] for j in b_rows]
    # one label numbering for both models: build them together, then split the rows
    joint = build([""] * (2 * len(common)), labels_a + labels_b)
    correct, tp, fp, fn = _contributions(joint, params)
    n = len(common)
    first, second = slice(0, n), slice(n, 2 * n)
    base_only = int(np.count_nonzero(correct[first] & ~correct[second]))
    cand_only = int(np.count_nonzero(~correct[first] & correct[second]))
    f1_a = float(_macro_f1(_totals(tp[first]), _totals(fp[first]), _totals(fn[first])))
    f1_b = float(_macro_f1(_totals(tp[second]), _totals(fp[second]), _totals(fn[second])))
    tp_a, fp_a, fn_a, tp_b, fp_b, fn_b = (m[part].T.tocsr() for part in (first, second) for m in (tp, fp, fn))
    rng = rng_for(seed, "classification", baseline, candidate)
    diffs = []
    for start in range(0, resamples, 200):
        rows = min(200, resamples - start)
        weights = np.zeros((rows, n))
        draws = rng.integers(0, n, size=(rows, n))
        np.add.at(weights, (np.repeat(np.arange(rows), n), draws.ravel()), 1)
        # (labels x rows) sparse @ (rows x resamples) dense: resampled counts without a dense rows x labels array
        fa = _macro_f1(*((m @ weights.T).T for m in (tp_a, fp_a, fn_a)))
        fb = _macro_f1(*((m @ weights.T).T for m in (tp_b, fp_b, fn_b)))
        diffs.append(fb - fa)
    delta = np.concatenate(diffs)
    tail = (1.0 - confidence) / 2
    low, high = np.quantile(delta, [tail, 1.0 - tail])
    share = min(np.mean(delta <= 0), np.mean(delta >= 0))
    p = float(min(1.0, max(2.0 * share, 1.0 / resamples)))
    return ClassificationComparison(
        n=n, accuracy_baseline=float(correct[first].mean()), accuracy_candidate=float(correct[second].mean()),
        baseline_only=base_only, candidate_only=cand_only, mcnemar_p=mcnemar_exact(base_only, cand_only),
        f1_macro_baseline=f1_a, f1_macro_candidate=f1_b, f1_macro_delta=f1_b - f1_a,
        f1_ci_low=float(low), f1_ci_high=float(high), f1_p=p, unpaired=unpaired)
