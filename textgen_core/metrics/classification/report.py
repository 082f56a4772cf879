"""The classification report of one model: per-label and averaged scores, confusion matrix, ROC and PR curves,
and the detailed curves that sort errors into kinds with example datums.

Built from stored cells alone (their details keep the gold label, the winning
label and the scores), so the in-process, streamed and Ray runs, the CLI, the
Python API and the dashboard all read the same numbers.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from .counts import Pairs, build, confusion_cells, counts, positives, ratios, roc_auc, roc_curve
from .labels import LabelOutput

#: Above this many labels the report's matrix, curves and detailed curves cover the labels with the most
#: support (the per-label table and the averages still cover every label; the confusion keeps every non-zero
#: cell as a list, whose length is bounded by the rows, and its largest off-diagonal cells).
SHOWN_LABELS = 30
#: Largest off-diagonal confusion cells listed.
TOP_CONFUSIONS = 20


def averages(p: Pairs, params: Mapping[str, Any], auc: np.ndarray | None = None) -> dict[str, float]:
    """Accuracy and the macro, micro and support-weighted precision, recall and F1 (and mean ROC AUC).

    The averages run over the labels that occur as a gold label or as a counted prediction (scikit-learn's
    default label set); a label that only appears as a key of a score object is left out of them.
    """
    if not len(p.gold):
        return {}
    table = counts(p, [params["score_threshold"]], params["hardmax"])[0]
    tp, fp, fn = table[:, 0], table[:, 1], table[:, 2]
    used = (tp + fp + fn) > 0
    precision, recall, f1 = ratios(tp, fp, fn)
    out = {"accuracy": float(tp.sum()) / len(p.gold)}
    for name, values in (("precision", precision), ("recall", recall), ("f1", f1)):
        out[f"{name}_macro"] = float(values[used].mean())
    micro = ratios(tp.sum(keepdims=True), fp.sum(keepdims=True), fn.sum(keepdims=True))
    for name, values in zip(("precision", "recall", "f1"), micro):
        out[f"{name}_micro"] = float(values[0])
    support = (tp + fn).astype(np.float64)
    if support.sum() > 0:
        for name, values in (("precision", precision), ("recall", recall), ("f1", f1)):
            out[f"{name}_weighted"] = float(np.sum(values * support) / support.sum())
    auc = roc_auc(p) if auc is None else auc
    if np.isfinite(auc).any():
        out["roc_auc_mean"] = float(np.nanmean(auc))
    return out


def _examples(mask: np.ndarray, datum_ids: Sequence[str], limit: int) -> dict[str, Any]:
    rows = np.flatnonzero(mask)
    return {"count": int(rows.size), "examples": [datum_ids[i] for i in rows[:limit]]}


def focus(table: np.ndarray, shown: int = SHOWN_LABELS) -> np.ndarray:
    """Label numbers the bounded parts of the report cover: all of them up to ``shown``, else the ``shown`` with
    the most support (then the most predictions), in first-seen order."""
    n_labels = table.shape[0]
    if n_labels <= shown:
        return np.arange(n_labels)
    support, predicted = table[:, 0] + table[:, 2], table[:, 0] + table[:, 1]
    order = np.lexsort((np.arange(n_labels), -predicted, -support))
    return np.sort(order[:shown])


def confusion_report(p: Pairs, threshold: float, hardmax: bool, shown: np.ndarray) -> dict[str, Any]:
    """The confusion matrix, bounded: dense over the ``shown`` labels; every non-zero cell as
    [gold, predicted, count]; the largest off-diagonal cells; and a note when labels are left out."""
    cells, unmatched = confusion_cells(p, threshold, hardmax)
    where = np.full(len(p.labels), -1)
    where[shown] = np.arange(len(shown))
    matrix = np.zeros((len(shown), len(shown)), dtype=np.int64)
    inside = (where[cells[:, 0]] >= 0) & (where[cells[:, 1]] >= 0)
    matrix[where[cells[inside, 0]], where[cells[inside, 1]]] = cells[inside, 2]
    off = cells[cells[:, 0] != cells[:, 1]]
    top = off[np.lexsort((off[:, 1], off[:, 0], -off[:, 2]))][:TOP_CONFUSIONS]
    names = p.labels
    note = None
    if len(shown) < len(names):
        note = (f"{len(names):,} labels: the matrix shows the {len(shown)} with the most support; the confusion "
                f"has {len(cells):,} non-zero cells ({len(off):,} off the diagonal), all in 'cells'")
    return {"labels": [names[i] for i in shown], "matrix": matrix.tolist(), "unmatched": unmatched[shown].tolist(),
            "n_labels": len(names), "note": note,
            "cells": [[names[g], names[k], int(n)] for g, k, n in cells],
            "top_confusions": [{"gold": names[g], "predicted": names[k], "count": int(n)} for g, k, n in top]}


def detailed(p: Pairs, threshold: float, hardmax: bool, limit: int,
             shown: np.ndarray | None = None) -> dict[str, dict[str, Any]]:
    """Per label at one threshold: true positives; false positives split into misclassifications (a label the
    run's gold labels use) and hallucinations (a label no gold label uses); false negatives split into
    misclassifications (another label passed the threshold) and missed detections (no label did)."""
    positive = positives(p, threshold, hardmax)
    n_rows = len(p.gold)
    gold_labels = np.zeros(len(p.labels), dtype=bool)
    gold_labels[p.gold] = True
    match = p.match
    # per row: its positive pair matching the gold label, another label's positive, any positive
    row_tp = np.bincount(p.row[match & positive], minlength=n_rows) > 0
    row_other = np.bincount(p.row[~match & positive], minlength=n_rows) > 0
    row_gold_below = np.bincount(p.row[match & ~positive], minlength=n_rows) > 0
    missed = row_other | row_gold_below
    out: dict[str, dict[str, Any]] = {}
    for number in (range(len(p.labels)) if shown is None else shown):
        label = p.labels[number]
        fp_rows = np.bincount(p.row[~match & positive & (p.label == number)], minlength=n_rows) > 0
        is_gold = p.gold == number
        fn_rows = is_gold & missed
        wrong = "misclassifications" if gold_labels[number] else "hallucinations"
        out[label] = {
            "tp": _examples(is_gold & row_tp, p.datum_ids, limit),
            "fp": {wrong: _examples(fp_rows, p.datum_ids, limit)},
            "fn": {"misclassifications": _examples(fn_rows & row_other, p.datum_ids, limit),
                   "missed_detections": _examples(fn_rows & ~row_other, p.datum_ids, limit)},
        }
    return out


def report(datum_ids: Sequence[str], outputs: Sequence[LabelOutput], params: Mapping[str, Any]) -> dict[str, Any]:
    """Everything about one model's labels, as plain data (JSON-ready)."""
    p = build(datum_ids, outputs)
    threshold, hardmax = params["score_threshold"], params["hardmax"]
    table = counts(p, [threshold], hardmax)[0]
    precision, recall, f1 = ratios(table[:, 0], table[:, 1], table[:, 2])
    auc = roc_auc(p)
    per_label = [{"label": label, "precision": float(precision[i]), "recall": float(recall[i]), "f1": float(f1[i]),
                  "support": int(table[i, 0] + table[i, 2]), "tp": int(table[i, 0]), "fp": int(table[i, 1]),
                  "fn": int(table[i, 2]), "tn": int(table[i, 3]),
                  "roc_auc": None if np.isnan(auc[i]) else float(auc[i])} for i, label in enumerate(p.labels)]
    shown = focus(table)
    pr_thresholds = list(params["pr_thresholds"])
    curve_counts = counts(p, pr_thresholds, hardmax)
    pr_curves: dict[str, list[dict[str, Any]]] = {}
    for i in shown:
        label = p.labels[i]
        cp, cr, cf = ratios(curve_counts[:, i, 0], curve_counts[:, i, 1], curve_counts[:, i, 2])
        pr_curves[label] = [{"threshold": t, "precision": float(cp[k]), "recall": float(cr[k]), "f1": float(cf[k]),
                             "tp": int(curve_counts[k, i, 0]), "fp": int(curve_counts[k, i, 1]),
                             "fn": int(curve_counts[k, i, 2])} for k, t in enumerate(pr_thresholds)]
    roc: dict[str, dict[str, Any]] = {}
    if p.complete:
        for i in shown:
            label = p.labels[i]
            curve = roc_curve(p, i)
            if curve is not None:
                roc[label] = {"fpr": curve[0].tolist(), "tpr": curve[1].tolist(), "auc": per_label[i]["roc_auc"]}
    limit = params["max_examples"]
    return {
        "rows": len(p.gold),
        "labels": p.labels,
        "threshold": threshold,
        "hardmax": hardmax,
        "per_label": per_label,
        "averages": averages(p, params, auc),
        "confusion": confusion_report(p, threshold, hardmax, shown),
        "roc": roc,
        "roc_note": None if p.complete else "ROC AUC needs every row to score every label (a JSON object of "
                                            "label scores naming all labels)",
        "pr_curves": pr_curves,
        "detailed": {f"{t:g}": detailed(p, t, hardmax, limit, shown) for t in pr_thresholds},
        "curves_note": None if len(shown) == len(p.labels) else
        f"curves and detailed curves of the {len(shown)} labels with the most support (of {len(p.labels):,})",
    }


def cell_datums(datum_ids: Sequence[str], outputs: Sequence[LabelOutput], params: Mapping[str, Any],
                gold: str, predicted: str | None) -> list[str]:
    """Datum ids behind one confusion-matrix cell (``predicted`` None: the gold rows with no prediction)."""
    p = build(datum_ids, outputs)
    positive = positives(p, params["score_threshold"], params["hardmax"], floor=1e-9)
    if gold not in p.labels:
        return []
    g = p.labels.index(gold)
    if predicted is None:
        predicted_rows = np.bincount(p.row[positive], minlength=len(p.gold)) > 0
        return [p.datum_ids[i] for i in np.flatnonzero((p.gold == g) & ~predicted_rows)]
    if predicted not in p.labels:
        return []
    k = p.labels.index(predicted)
    hits = positive & (p.label == k) & (p.gold[p.row] == g)
    return [p.datum_ids[i] for i in np.unique(p.row[hits])]
