"""Counting label outputs the way the seed system (valor-lite's classification module) counts them.

Every row becomes (datum, predicted label, score) pairs: one pair for a bare
label (score 1.0, or its confidence), one per label for a JSON object of scores.
A pair is a positive at threshold ``t`` when its score is not zero and is at
least ``t``, and, under hardmax, when it is its row's highest score (the first
label given on ties). From that: true and false positives per predicted label,
false negatives per gold label (a row whose gold pair fell below the threshold
or whose positive is another label), the confusion matrix, ROC AUC over the
ranked scores, and the datums behind each count. Vectorized with numpy, so a
million rows take seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .labels import LabelOutput, pairs

_trapezoid = getattr(np, "trapezoid", None) or np.trapz  # numpy < 2 has only trapz

#: valor-lite treats a score within this of zero as no prediction (np.isclose's default atol).
ZERO_SCORE = 1e-8
#: ... and, in its confusion matrix, a score above this as a prediction.
CONFUSION_SCORE = 1e-9


@dataclass(frozen=True)
class Pairs:
    """All rows of one model as flat arrays; labels are numbered in first-seen order (gold, then predicted)."""

    labels: list[str]
    datum_ids: list[str]
    gold: np.ndarray  # label number per row
    row: np.ndarray  # row number per pair
    label: np.ndarray  # predicted label number per pair
    score: np.ndarray
    winner: np.ndarray  # True for the row's highest score
    #: True when every row scores every label (a JSON object of all labels): ROC AUC is defined then.
    complete: bool

    @property
    def match(self) -> np.ndarray:
        return self.label == self.gold[self.row]


def build(datum_ids: Sequence[str], outputs: Sequence[LabelOutput]) -> Pairs:
    """Flat arrays of the rows' pairs."""
    index: dict[str, int] = {}
    gold = np.empty(len(outputs), dtype=np.int64)
    rows: list[int] = []
    labels: list[int] = []
    scores: list[float] = []
    winners: list[bool] = []
    every_row_scored = True
    for number, output in enumerate(outputs):
        gold[number] = index.setdefault(output.gold, len(index))
        names, values = pairs(output)
        every_row_scored &= output.scores is not None
        rows.extend([number] * len(names))
        labels.extend([index.setdefault(name, len(index)) for name in names])
        scores.extend(values)
        winners.extend([name == output.winner for name in names])
    row = np.asarray(rows, dtype=np.int64)
    label = np.asarray(labels, dtype=np.int64)
    complete = every_row_scored and len(label) == len(outputs) * len(index)
    return Pairs(list(index), list(datum_ids), gold, row, label, np.asarray(scores, dtype=np.float64),
                 np.asarray(winners, dtype=bool), complete)


def positives(p: Pairs, threshold: float, hardmax: bool, *, floor: float = ZERO_SCORE) -> np.ndarray:
    """Pairs that count as a prediction at ``threshold``."""
    mask = (p.score > floor if floor == CONFUSION_SCORE else np.abs(p.score) > floor) & (p.score >= threshold)
    return mask & p.winner if hardmax else mask


def counts(p: Pairs, thresholds: Sequence[float], hardmax: bool) -> np.ndarray:
    """(thresholds, labels, 4): tp, fp, fn, tn per label, as valor-lite's compute_counts gives them."""
    n_labels, n_rows = len(p.labels), len(p.gold)
    out = np.zeros((len(thresholds), n_labels, 4), dtype=np.int64)
    match = p.match
    for k, threshold in enumerate(thresholds):
        positive = positives(p, threshold, hardmax)
        false_positive = ~match & positive
        out[k, :, 0] = np.bincount(p.label[match & positive], minlength=n_labels)
        out[k, :, 1] = np.bincount(p.label[false_positive], minlength=n_labels)
        missed_rows = np.bincount(p.row[(match & ~positive) | false_positive], minlength=n_rows) > 0
        out[k, :, 2] = np.bincount(p.gold[missed_rows], minlength=n_labels)
        out[k, :, 3] = np.bincount(p.label[~match & ~positive], minlength=n_labels)
    return out


def ratios(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision, recall, F1 (0 where undefined, as valor-lite and scikit-learn's zero_division=0 give them)."""
    tp, fp, fn = (np.asarray(a, dtype=np.float64) for a in (tp, fp, fn))
    precision = np.divide(tp, tp + fp, out=np.zeros_like(tp), where=(tp + fp) > 0)
    recall = np.divide(tp, tp + fn, out=np.zeros_like(tp), where=(tp + fn) > 0)
    f1 = np.divide(2 * precision * recall, precision + recall, out=np.zeros_like(tp),
                   where=(precision + recall) > 1e-9)
    return precision, recall, f1


def confusion(p: Pairs, threshold: float, hardmax: bool) -> tuple[np.ndarray, np.ndarray]:
    """(gold x predicted counts, gold rows with no prediction at all), as valor-lite's compute_confusion_matrix.
    Dense: for a few labels (see :func:`confusion_cells` for many)."""
    cells, unmatched = confusion_cells(p, threshold, hardmax)
    matrix = np.zeros((len(p.labels), len(p.labels)), dtype=np.int64)
    matrix[cells[:, 0], cells[:, 1]] = cells[:, 2]
    return matrix, unmatched


def confusion_cells(p: Pairs, threshold: float, hardmax: bool) -> tuple[np.ndarray, np.ndarray]:
    """The confusion matrix as its non-zero cells, (gold, predicted, count) rows sorted by gold then predicted,
    and the gold rows with no prediction per label. Memory grows with the rows, never with labels squared:
    10,000 labels would make a dense matrix of 800 MB."""
    n_labels = len(p.labels)
    positive = positives(p, threshold, hardmax, floor=CONFUSION_SCORE)
    codes = p.gold[p.row[positive]] * n_labels + p.label[positive]
    present, counts = np.unique(codes, return_counts=True)
    cells = np.stack([present // max(n_labels, 1), present % max(n_labels, 1), counts], axis=1).astype(np.int64)
    predicted_rows = np.bincount(p.row[positive], minlength=len(p.gold)) > 0
    unmatched = np.bincount(p.gold[~predicted_rows], minlength=n_labels)
    return cells.reshape(-1, 3), unmatched


def roc_curve(p: Pairs, label: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(false positive rates, true positive rates) of one label against the rest, one point per distinct
    score (ties form one step), or None when the label has no positives or no negatives."""
    mine = p.label == label
    scores = p.score[mine]
    truth = (p.gold[p.row[mine]] == label)
    positives_ = int(np.count_nonzero(p.gold == label))
    negatives = int(np.count_nonzero(np.bincount(p.row[mine], minlength=len(p.gold)))) - positives_
    if positives_ == 0 or negatives <= 0:
        return None
    order = np.argsort(-scores, kind="stable")
    scores, truth = scores[order], truth[order]
    tp = np.cumsum(truth)
    fp = np.cumsum(~truth)
    ends = np.r_[np.flatnonzero(np.diff(scores)), len(scores) - 1]
    tp, fp = np.r_[0, tp[ends]], np.r_[0, fp[ends]]
    if scores.size and scores[0] == 0:  # valor-lite starts the curve at the first nonzero score only
        tp, fp = tp[1:], fp[1:]
    return fp / negatives, tp / positives_


def roc_auc(p: Pairs) -> np.ndarray:
    """ROC AUC per label by the trapezoidal rule (NaN where undefined or when rows do not score every label)."""
    out = np.full(len(p.labels), np.nan)
    if not p.complete:
        return out
    for label in range(len(p.labels)):
        curve = roc_curve(p, label)
        if curve is not None:
            fpr, tpr = curve
            out[label] = float(_trapezoid(tpr, fpr)) if fpr.size > 1 else 0.0
    return out
