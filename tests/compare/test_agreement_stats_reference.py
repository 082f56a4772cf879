"""Kappa against scikit-learn, alpha against the krippendorff package, and interval coverage in simulation."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from textgen_core.compare import agreement_stats as ag
from textgen_core.errors import ParameterError


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kappa_equals_scikit_learn(weights, seed) -> None:
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 6, 80)
    b = np.clip(a + rng.integers(-2, 3, 80), 1, 5)
    ours = ag.kappa(a, b, labels=[1, 2, 3, 4, 5], weights=weights)
    assert ours == pytest.approx(cohen_kappa_score(a, b, labels=[1, 2, 3, 4, 5], weights=weights), abs=1e-12)
    assert ag.kappa(a, b, weights=weights) == pytest.approx(cohen_kappa_score(a, b, weights=weights), abs=1e-12)


def test_kappa_edges() -> None:
    assert math.isnan(ag.kappa([1, 1, 1], [1, 1, 1]))  # chance agreement is total
    assert ag.kappa([0, 1, 0, 1], [0, 1, 0, 1], labels=[0, 1]) == 1.0
    with pytest.raises(ParameterError, match="one length"):
        ag.kappa([1, 2], [1])
    with pytest.raises(ParameterError, match="not one of the categories"):
        ag.kappa([1, 7], [1, 2], labels=[1, 2, 3])


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alpha_equals_the_krippendorff_package(level, seed) -> None:
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, 40)
    ratings = np.clip(truth[None, :] + rng.integers(-1, 2, (4, 40)), 1, 5).astype(float)
    ratings[rng.random((4, 40)) < 0.3] = np.nan
    expected = krippendorff.alpha(reliability_data=ratings, level_of_measurement=level)
    assert ag.krippendorff_alpha(ratings, level) == pytest.approx(expected, abs=1e-9)


def test_alpha_of_the_package_docs_example() -> None:
    data = np.array([[np.nan, np.nan, np.nan, np.nan, np.nan, 3, 4, 1, 2, 1, 1, 3, 3, np.nan, 3],
                     [1, np.nan, 2, 1, 3, 3, 4, 3, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan],
                     [np.nan, np.nan, 2, 1, 3, 4, 4, np.nan, 2, 1, 1, 3, 3, np.nan, 4]])
    for level in ("nominal", "interval"):
        assert ag.krippendorff_alpha(data, level) == pytest.approx(
            krippendorff.alpha(reliability_data=data, level_of_measurement=level), abs=1e-9)
    assert math.isnan(ag.krippendorff_alpha(np.array([[1.0, np.nan], [np.nan, 2.0]])))  # nothing pairable


def test_rank_correlations_equal_scipy() -> None:
    rng = np.random.default_rng(9)
    x = rng.normal(size=50)
    y = x + rng.normal(size=50)
    assert ag.spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert ag.kendall(x, y) == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
    assert math.isnan(ag.spearman([1, 1, 1], [1, 2, 3]))


def test_kappa_interval_covers_at_its_nominal_rate() -> None:
    """Judge and human yes/no from a known joint distribution: population kappa 0.5; 200 samples of 150 cells."""
    p_yes, agree = 0.5, 0.75  # P(both yes) = P(both no) = 0.375, kappa = (0.75 - 0.5) / 0.5
    truth = (agree - 0.5) / 0.5
    rng = np.random.default_rng(11)
    covered = 0
    sims = 200
    for _ in range(sims):
        judge = rng.random(150) < p_yes
        same = rng.random(150) < agree
        human = np.where(same, judge, ~judge).astype(float)
        low, high = ag.bootstrap_interval(lambda a, b: ag.kappa(a, b, labels=[0.0, 1.0]), judge.astype(float),
                                          human, resamples=300, rng=rng,
                                          many=lambda a, b: ag.kappa_rows(a, b, labels=[0.0, 1.0]))
        covered += low <= truth <= high
    assert 0.91 * sims <= covered <= 0.985 * sims, covered


def test_alpha_interval_covers_at_its_nominal_rate() -> None:
    """Two people rate 1-5: each gives the true rating with probability 0.7, else any rating. The population
    alpha comes from 200,000 units; 200 samples of 120 units each get a bootstrap interval."""
    rng = np.random.default_rng(12)

    def sample(units: int) -> np.ndarray:
        truth = rng.integers(1, 6, units)
        noise = rng.integers(1, 6, (2, units))
        return np.where(rng.random((2, units)) < 0.7, truth[None, :], noise).astype(float)

    population = ag.krippendorff_alpha(sample(200_000), "ordinal")
    covered, sims = 0, 200
    for _ in range(sims):
        low, high = ag.krippendorff_interval(sample(120), "ordinal", resamples=300, rng=rng)
        covered += low <= population <= high
    assert 0.90 * sims <= covered <= 0.99 * sims, covered


def test_spearman_interval_covers_at_its_nominal_rate() -> None:
    """Bivariate normal with rho 0.6: Spearman's population value is (6/pi) asin(rho/2); 150 samples of 150."""
    rng = np.random.default_rng(13)
    rho = 0.6
    truth = 6 / math.pi * math.asin(rho / 2)
    covered, sims = 0, 150
    for _ in range(sims):
        x = rng.normal(size=150)
        y = rho * x + math.sqrt(1 - rho ** 2) * rng.normal(size=150)
        low, high = ag.bootstrap_interval(ag.spearman, x, y, resamples=250, rng=rng, many=ag.spearman_rows)
        covered += low <= truth <= high
    assert 0.90 * sims <= covered <= 0.99 * sims, covered


# The coverage checks above compute each resample's statistic in one call for all resamples (kappa_rows,
# spearman_rows, and alpha from weighted unit coincidences); these hold those to the one-resample functions.

@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_rows_equal_kappa_of_each_row(weights) -> None:
    rng = np.random.default_rng(21)
    labels = [1.0, 2.0, 3.0, 4.0]
    a = rng.integers(1, 5, (300, 40)).astype(float)
    b = np.where(rng.random((300, 40)) < 0.6, a, rng.integers(1, 5, (300, 40)))
    b[7] = 2.0  # a constant rater in one row: chance agreement is not total, kappa is defined
    a[8] = b[8] = 3.0  # both constant: NaN, as kappa gives
    got = ag.kappa_rows(a, b, labels=labels, weights=weights)
    want = np.array([ag.kappa(x, y, labels=labels, weights=weights) for x, y in zip(a, b)])
    assert np.isnan(got[8]) and np.isnan(want[8])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    with pytest.raises(ParameterError, match="not one of the categories"):
        ag.kappa_rows(a, b + 0.5, labels=labels)
    with pytest.raises(ParameterError, match="2-D"):
        ag.kappa_rows(a[0], b[0], labels=labels)


def test_spearman_rows_equal_spearman_of_each_row_bit_for_bit() -> None:
    rng = np.random.default_rng(22)
    x = rng.normal(size=(200, 30))
    y = x + rng.normal(size=(200, 30))
    x[:50] = np.round(x[:50])  # ties
    y[50:100] = rng.integers(0, 3, (50, 30))  # many ties
    y[100] = 5.0  # no spread: NaN
    got = ag.spearman_rows(x, y)
    want = np.array([ag.spearman(a, b) for a, b in zip(x, y)])
    assert np.isnan(got[100]) and np.isnan(want[100])
    assert np.array_equal(got, want, equal_nan=True)
    assert np.isnan(ag.spearman_rows(x[:, :1], y[:, :1])).all()


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_the_alpha_interval_is_the_percentile_interval_of_each_resample_alpha(level) -> None:
    rng = np.random.default_rng(23)
    data = rng.integers(0, 5, (3, 60)).astype(float)
    data[rng.random((3, 60)) < 0.2] = np.nan  # some units unpairable, some with two values
    low, high = ag.krippendorff_interval(data, level, resamples=400, rng=np.random.default_rng(5))
    pairable = data[:, (~np.isnan(data)).sum(axis=0) >= 2]
    draws = np.random.default_rng(5).integers(0, pairable.shape[1], (400, pairable.shape[1]))
    values = np.array([ag.krippendorff_alpha(pairable[:, d], level) for d in draws])
    values = values[~np.isnan(values)]
    assert low == pytest.approx(np.quantile(values, 0.025), abs=1e-12)
    assert high == pytest.approx(np.quantile(values, 0.975), abs=1e-12)


def test_a_vectorised_statistic_gives_the_interval_of_one_call_per_resample() -> None:
    rng = np.random.default_rng(24)
    a = rng.integers(0, 2, 90).astype(float)
    b = np.where(rng.random(90) < 0.8, a, 1 - a)
    one = ag.bootstrap_interval(lambda x, y: ag.kappa(x, y, labels=[0.0, 1.0]), a, b, rng=np.random.default_rng(1))
    many = ag.bootstrap_interval(lambda x, y: ag.kappa(x, y, labels=[0.0, 1.0]), a, b, rng=np.random.default_rng(1),
                                 many=lambda x, y: ag.kappa_rows(x, y, labels=[0.0, 1.0]))
    assert many == pytest.approx(one, abs=1e-12)
    x, y = rng.normal(size=60), rng.normal(size=60)
    assert ag.bootstrap_interval(ag.spearman, x, y, rng=np.random.default_rng(2), many=ag.spearman_rows) == \
        ag.bootstrap_interval(ag.spearman, x, y, rng=np.random.default_rng(2))
