"""Paired statistics against known answers: exact tests, Holm, wins, and bootstrap coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from textgen_core.compare.stats import (
    bootstrap_ci,
    holm_adjust,
    permutation_test,
    rng_for,
    win_tie_loss,
)
from textgen_core.errors import ParameterError


def test_identical_values_give_p_one_and_all_ties() -> None:
    diffs = np.zeros(50)
    p, method = permutation_test(diffs, resamples=100, rng=np.random.default_rng(0))
    assert p == 1.0 and "exact" in method
    assert win_tie_loss(diffs, "higher", 1e-9) == (0, 50, 0)
    assert bootstrap_ci(diffs, resamples=100, confidence=0.95, rng=np.random.default_rng(0)) == (0.0, 0.0)


@pytest.mark.parametrize("n", [2, 5, 12, 15])
def test_exact_permutation_equals_scipy_sign_flip_test(n: int) -> None:
    diffs = np.random.default_rng(n).normal(0.3, 1.0, n)
    p, method = permutation_test(diffs, resamples=100, rng=np.random.default_rng(0))
    expected = scipy_stats.permutation_test((diffs,), np.mean, permutation_type="samples",
                                            n_resamples=np.inf, alternative="two-sided").pvalue
    assert method == "paired permutation (exact)"
    assert p == pytest.approx(expected, rel=1e-12)


def test_exact_p_of_all_positive_differences() -> None:
    # Only the identity and the all-negative flip are as extreme: p = 2 / 2^10.
    p, _ = permutation_test(np.arange(1.0, 11.0), resamples=10, rng=np.random.default_rng(0))
    assert p == pytest.approx(2 / 1024)


def test_monte_carlo_p_is_seeded_and_never_zero() -> None:
    diffs = np.full(40, 0.5)
    p1, method = permutation_test(diffs, resamples=999, rng=np.random.default_rng(3))
    p2, _ = permutation_test(diffs, resamples=999, rng=np.random.default_rng(3))
    assert method == "paired permutation (Monte Carlo, 999 draws)"
    assert p1 == p2 == pytest.approx(1 / 1000)


def test_monte_carlo_p_close_to_exact() -> None:
    diffs = np.random.default_rng(7).normal(0.2, 1.0, 16)
    exact, _ = permutation_test(diffs, resamples=1, rng=np.random.default_rng(0))
    approx, method = permutation_test(diffs, resamples=20000, rng=np.random.default_rng(0), exact_max=4)
    assert "Monte Carlo" in method
    assert approx == pytest.approx(exact, abs=4 * math.sqrt(exact * (1 - exact) / 20000) + 1e-4)


def test_ties_within_tolerance_do_not_count_in_the_test() -> None:
    p, _ = permutation_test(np.array([1e-12, -1e-12, 0.0]), resamples=10, rng=np.random.default_rng(0),
                            zero_tolerance=1e-9)
    assert p == 1.0


def test_holm_against_hand_computed_values() -> None:
    # Sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1 -> max(0.06, 0.04)=0.06.
    adjusted = holm_adjust([0.01, 0.04, 0.03, float("nan"), 0.005])
    assert adjusted[:3] == pytest.approx([0.03, 0.06, 0.06])
    assert math.isnan(adjusted[3])
    assert adjusted[4] == pytest.approx(0.02)
    assert holm_adjust([0.6, 0.7]) == [1.0, 1.0]


@pytest.mark.parametrize(("direction", "expected"), [
    ("higher", (2, 1, 1)), ("lower", (1, 1, 2)), ("none", (2, 1, 1)),
])
def test_wins_follow_the_direction(direction: str, expected: tuple[int, int, int]) -> None:
    assert win_tie_loss(np.array([0.5, 0.2, 0.0, -0.1]), direction, 1e-9) == expected


def test_rng_for_depends_on_keys_not_order() -> None:
    a = rng_for(5, "base", "cand", "rouge1").random(3)
    b = rng_for(5, "base", "cand", "rouge1").random(3)
    c = rng_for(5, "base", "cand", "rouge2").random(3)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    with pytest.raises(ParameterError, match="seed"):
        rng_for(-1)


def test_bootstrap_rejects_bad_settings() -> None:
    with pytest.raises(ParameterError, match="confidence"):
        bootstrap_ci(np.ones(3), resamples=10, confidence=1.5, rng=np.random.default_rng(0))
    with pytest.raises(ParameterError, match="resamples"):
        bootstrap_ci(np.ones(3), resamples=0, confidence=0.95, rng=np.random.default_rng(0))


def test_bootstrap_interval_covers_the_true_difference_about_95_percent() -> None:
    """1000 seeded paired datasets of bounded, correlated scores with a known mean difference."""
    simulations, n = 1000, 30
    true_delta = 0.7 * 2 / 7 + 0.3 * 3 / 7 - 2 / 7  # E[candidate] - E[baseline] for the Beta mix below
    covered = 0
    for seed in range(simulations):
        rng = np.random.default_rng(seed)
        baseline = rng.beta(2, 5, n)
        candidate = 0.7 * baseline + 0.3 * rng.beta(3, 4, n)
        low, high = bootstrap_ci(candidate - baseline, resamples=400, confidence=0.95, rng=rng)
        covered += low <= true_delta <= high
    coverage = covered / simulations
    tolerance = 3 * math.sqrt(0.95 * 0.05 / simulations)  # three binomial standard errors
    assert abs(coverage - 0.95) <= tolerance, coverage
