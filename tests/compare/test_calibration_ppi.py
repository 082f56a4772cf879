"""PPI++ against the paper's formula on fixed data, and its coverage where the judge-only mean misses."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from textgen_core.compare.calibration import labels_needed, power_tuning, ppi_mean
from textgen_core.errors import ParameterError


def reference_ppi(y: np.ndarray, f_lab: np.ndarray, f_all: np.ndarray, confidence: float = 0.95):
    """PPI++ for a mean written from Angelopoulos, Duchi, Zrnic (2023), eqs. for the mean, term by term."""
    n, big_n = len(y), len(f_all)
    mean_y = sum(y) / n
    mean_f = sum(f_lab) / n
    mean_all = sum(f_all) / big_n
    cov = sum((a - mean_y) * (b - mean_f) for a, b in zip(y, f_lab)) / (n - 1)
    var_all = sum((b - mean_all) ** 2 for b in f_all) / (big_n - 1)
    lam = min(1.0, max(0.0, cov / ((1 + n / big_n) * var_all)))
    theta = lam * mean_all + sum(a - lam * b for a, b in zip(y, f_lab)) / n
    rect = [a - lam * b for a, b in zip(y, f_lab)]
    mean_rect = sum(rect) / n
    var_rect = sum((r - mean_rect) ** 2 for r in rect) / (n - 1)
    se = math.sqrt(lam ** 2 * var_all / big_n + var_rect / n)
    z = stats.norm.ppf(0.5 + confidence / 2)
    return theta, theta - z * se, theta + z * se, lam


def fixed_data(seed: int = 3):
    rng = np.random.default_rng(seed)
    truth = rng.normal(0.5, 0.2, 400)
    judge = truth + 0.1 + rng.normal(0, 0.1, 400)
    labelled = rng.choice(400, 60, replace=False)
    return truth[labelled], judge[labelled], judge


def test_point_and_interval_equal_the_papers_formula() -> None:
    y, f_lab, f_all = fixed_data()
    got = ppi_mean(y, f_lab, f_all)
    theta, low, high, lam = reference_ppi(y.tolist(), f_lab.tolist(), f_all.tolist())
    assert got.estimate == pytest.approx(theta, abs=1e-12)
    assert (got.ci_low, got.ci_high) == pytest.approx((low, high), abs=1e-12)
    assert got.lam == pytest.approx(lam, abs=1e-12) and 0 < got.lam < 1
    assert got.method == "PPI++" and got.n_labels == 60 and got.n_judged == 400


def test_lambda_zero_is_the_labelled_mean_and_one_the_difference_estimator() -> None:
    y, f_lab, f_all = fixed_data(4)
    only_labels = ppi_mean(y, f_lab, f_all, lam=0.0)
    assert only_labels.estimate == pytest.approx(y.mean(), abs=1e-12)
    half = stats.norm.ppf(0.975) * y.std(ddof=1) / math.sqrt(y.size)
    assert only_labels.ci_high - only_labels.estimate == pytest.approx(half, abs=1e-12)
    difference = ppi_mean(y, f_lab, f_all, lam=1.0)
    assert difference.estimate == pytest.approx(f_all.mean() + (y - f_lab).mean(), abs=1e-12)


def test_a_judge_that_says_nothing_gets_no_weight() -> None:
    y = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    assert power_tuning(y, np.ones(5), np.ones(50)) == 0.0
    result = ppi_mean(y, np.ones(5), np.ones(50))
    assert result.estimate == pytest.approx(0.6)


def test_calibrated_interval_covers_the_truth_and_the_judge_only_one_does_not() -> None:
    """1,000 simulated runs: 500 cells, a judge biased by +0.1, 100 random labels."""
    rng = np.random.default_rng(2026)
    truth, covered, judge_covered = 0.5, 0, 0
    for _ in range(1000):
        human = rng.normal(truth, 0.2, 500)
        judge = human + 0.1 + rng.normal(0, 0.1, 500)
        labelled = rng.choice(500, 100, replace=False)
        result = ppi_mean(human[labelled], judge[labelled], judge)
        covered += result.ci_low <= truth <= result.ci_high
        judge_covered += result.judge_ci_low <= truth <= result.judge_ci_high
    assert 930 <= covered <= 970, covered
    assert judge_covered < 100, judge_covered


def test_inverse_probability_weights_cover_under_stratified_sampling() -> None:
    """Labels drawn 4x as often where the judge is high: the plain estimate is pulled, the weighted one covers."""
    rng = np.random.default_rng(7)
    truth, covered, plain_covered = 0.5, 0, 0
    for _ in range(1000):
        human = rng.normal(truth, 0.2, 600)
        judge = human + 0.1 + rng.normal(0, 0.1, 600)
        high = judge >= np.median(judge)
        chosen = np.concatenate([rng.choice(np.flatnonzero(high), 80, replace=False),
                                 rng.choice(np.flatnonzero(~high), 20, replace=False)])
        pi = np.where(high[chosen], 80 / high.sum(), 20 / (~high).sum())
        weighted = ppi_mean(human[chosen], judge[chosen], judge, probabilities=pi)
        covered += weighted.ci_low <= truth <= weighted.ci_high
        plain = ppi_mean(human[chosen], judge[chosen], judge, lam=0.0)
        plain_covered += plain.ci_low <= truth <= plain.ci_high
    assert weighted.method == "PPI++ with inverse-probability weights"
    assert 930 <= covered <= 975, covered
    assert plain_covered < 500, plain_covered


def test_labels_needed_shrinks_the_interval_to_the_target() -> None:
    rng = np.random.default_rng(5)
    human = rng.normal(0.5, 0.2, 5000)
    judge = human + 0.1 + rng.normal(0, 0.1, 5000)
    pilot = rng.choice(5000, 80, replace=False)
    first = ppi_mean(human[pilot], judge[pilot], judge)
    residual = np.std(human[pilot] - first.lam * judge[pilot], ddof=1)
    needed = labels_needed(residual, 0.01, judge_sd=float(judge.std(ddof=1)), lam=first.lam, n_judged=5000)
    more = rng.choice(5000, int(needed), replace=False)
    again = ppi_mean(human[more], judge[more], judge)
    # the plan comes from an 80-label pilot's spread: the achieved half-width is near the target
    assert 0.007 <= (again.ci_high - again.ci_low) / 2 <= 0.0115
    assert labels_needed(residual, 1e-6, judge_sd=1.0, lam=1.0, n_judged=10) == math.inf
    with pytest.raises(ParameterError, match="half-width"):
        labels_needed(residual, 0.0)


def test_bad_input_is_named() -> None:
    with pytest.raises(ParameterError, match="pair up"):
        ppi_mean(np.ones(3), np.ones(4), np.ones(10))
    with pytest.raises(ParameterError, match="unscored"):
        ppi_mean(np.array([1.0, np.nan]), np.ones(2), np.ones(10))
    with pytest.raises(ParameterError, match="probabilities"):
        ppi_mean(np.ones(3), np.ones(3), np.ones(10), probabilities=np.array([0.5, 0.0, 0.5]))
    assert math.isnan(ppi_mean(np.ones(1), np.ones(1), np.ones(10)).estimate)
