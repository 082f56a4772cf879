"""The change detector of a history: each run against the previous run of the same model and score, a paired test
on the datums both scored, false alarms held by Holm's method across every test of the history (scores x runs).

Vectorised over leading axes, so one history and ten thousand simulated ones go through the same lines
(tests/over_time/test_changes.py holds the detector to its promises by simulation).

The test is the paired t test of the differences (two-sided). Below :data:`MIN_PAIRS` shared datums a run gets
no test ("too few"), and such a run is not in Holm's family. Differences without spread are either all zero
(p = 1) or all one same non-zero value: then the exact sign test, p = 2 * 0.5**n.

The family-wise level is :data:`FALSE_ALARMS` = 0.04, not 0.05: Holm's bound is nearly tight for the many weakly
dependent tests of a history, and the t test's far tail (p near 0.05 / 190) is only approximately right, so a
level of 0.05 would put the false-alarm rate at about 5% rather than under it.
"""

from __future__ import annotations

import numpy as np

#: Family-wise level of the flags of one history (every score and run of one model on one dataset).
FALSE_ALARMS = 0.04
#: Fewest shared datums for a test of a run against the previous one.
MIN_PAIRS = 10
TOO_FEW = f"too few: under {MIN_PAIRS} datums scored in both runs"


def paired_tests(before: np.ndarray, after: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n, mean difference after - before, two-sided p) over the last axis, pairing positions where both are
    numbers (NaN elsewhere); p is NaN below :data:`MIN_PAIRS` pairs."""
    from scipy import stats

    diffs = np.asarray(after, dtype=float) - np.asarray(before, dtype=float)
    total = diffs.sum(axis=-1)
    # every datum scored in both runs (a NaN difference makes its sum NaN): no mask to build, count or apply
    complete = not np.isnan(total).any()
    valid = None if complete else ~np.isnan(diffs)
    n = np.full(np.shape(total), diffs.shape[-1])[()] if valid is None else valid.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (total if valid is None else np.where(valid, diffs, 0.0).sum(axis=-1)) / n
        if complete:  # in place: a simulation of thousands of histories holds one array of differences, not three
            centred = np.subtract(diffs, mean[..., None], out=diffs)
        else:
            centred = np.where(valid, diffs - mean[..., None], 0.0)
        var = np.square(centred, out=centred).sum(axis=-1) / (n - 1)
        t = mean / np.sqrt(var / n)
        p = 2.0 * stats.t.sf(np.abs(t), np.maximum(n - 1, 1))
    spreadless = ~(var > 1e-24)  # all differences equal (up to rounding)
    p = np.where(spreadless, np.where(np.abs(mean) <= 1e-12, 1.0, np.minimum(1.0, 2.0 * 0.5 ** n)), p)
    p = np.where(n < MIN_PAIRS, np.nan, p)
    return n, np.where(n > 0, mean, np.nan), p


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values over the last axis; NaN (no test) stays NaN and is not counted in the family."""
    p = np.asarray(p_values, dtype=float)
    m = (~np.isnan(p)).sum(axis=-1, keepdims=True)
    order = np.argsort(np.where(np.isnan(p), np.inf, p), axis=-1, kind="stable")
    ranked = np.take_along_axis(p, order, axis=-1)
    steps = np.arange(p.shape[-1])
    scaled = np.minimum(1.0, (m - steps) * ranked)
    scaled = np.maximum.accumulate(np.where(np.isnan(scaled), -np.inf, scaled), axis=-1)
    adjusted = np.empty_like(p)
    np.put_along_axis(adjusted, order, scaled, axis=-1)
    return np.where(np.isnan(p), np.nan, adjusted)


def series_tests(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each run against the one before: ``values`` is (..., runs, datums), NaN where not scored; returns n, mean
    difference and p of shape (..., runs - 1)."""
    return paired_tests(values[..., :-1, :], values[..., 1:, :])


def flags(values: np.ndarray, alpha: float = FALSE_ALARMS) -> np.ndarray:
    """(..., scores, runs - 1) booleans: a run flagged as different from the previous one, Holm over scores and
    runs of each history. ``values`` is (..., scores, runs, datums)."""
    _, _, p = series_tests(values)
    shape = p.shape
    adjusted = holm(p.reshape(*shape[:-2], shape[-2] * shape[-1])).reshape(shape)
    return adjusted < alpha
