"""Rates and paired differences of failure modes against references: statsmodels' exact McNemar and Holm,
Wilson intervals, and Newcombe's paired interval checked by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from textgen_core.failures.rates import holm, mcnemar_exact, newcombe_paired, paired_rate, rate


@pytest.mark.parametrize("only_c, only_b", [(0, 1), (3, 0), (7, 2), (20, 31), (44, 18), (5, 5)])
def test_exact_mcnemar_matches_statsmodels(only_c: int, only_b: int) -> None:
    table = [[10, only_c], [only_b, 50]]
    assert mcnemar_exact(only_c, only_b) == pytest.approx(mcnemar(table, exact=True).pvalue, abs=1e-12)


def test_no_discordant_pair_is_p_one_not_an_error() -> None:
    assert mcnemar_exact(0, 0) == 1.0


def test_holm_matches_statsmodels_and_keeps_missing_out_of_the_family() -> None:
    p = [0.001, 0.04, 0.03, 0.2, 0.012]
    expected = multipletests(p, method="holm")[1]
    assert holm(p) == pytest.approx(list(expected), abs=1e-12)
    with_missing = holm([0.001, None, 0.04, 0.03, 0.2, 0.012])
    assert with_missing[1] is None
    assert [x for x in with_missing if x is not None] == pytest.approx(list(expected), abs=1e-12)


def test_a_rate_has_the_wilson_interval() -> None:
    share, low, high, note = rate(7, 40)
    ref = proportion_confint(7, 40, alpha=0.05, method="wilson")
    assert share == 7 / 40 and note is None
    assert (low, high) == pytest.approx(ref, abs=1e-12)


def test_no_failure_still_has_an_interval_of_width() -> None:
    share, low, high, _ = rate(0, 50)
    assert share == 0 and low == pytest.approx(0, abs=1e-15) and high > 0.05


def test_a_small_sample_gets_the_shared_rules_exact_interval() -> None:
    share, low, high, note = rate(1, 9)
    ref = proportion_confint(1, 9, alpha=0.05, method="beta")  # Clopper-Pearson below 30 cells
    assert (low, high) == pytest.approx(ref, abs=1e-9) and note is None


def test_too_few_cells_say_so_instead_of_an_interval() -> None:
    share, low, high, note = rate(1, 1)
    assert share == 1 and low is None and high is None and note.startswith("too few: 1 value")
    assert rate(0, 0)[3] == "no scored cells"
    paired = paired_rate(np.array([1, 0, 0]), np.array([1, 1, 0]))
    assert paired.low is None and paired.p_value is None and "too few" in paired.note
    assert paired.difference == pytest.approx(1 / 3)


def test_newcombe_worked_example() -> None:
    """Fagerland, Lydersen & Laake, Statistical Analysis of Contingency Tables, ch. 8: the paired table
    (59, 6 / 16, 80) of Cavo et al. (2012) has the square-and-add interval -0.1186 to -0.0046 (estimate -0.0621)."""
    low, high = newcombe_paired(59, 6, 16, 80)
    assert (round(low, 4), round(high, 4)) == (-0.1186, -0.0046)
    assert round((6 - 16) / 161, 4) == -0.0621


def test_newcombe_interval_is_never_of_zero_width() -> None:
    low, high = newcombe_paired(0, 0, 0, 30)
    assert low < 0 < high
    low, high = newcombe_paired(30, 0, 0, 0)
    assert low < 0 < high


@pytest.mark.parametrize("n, p_base, p_cand, rho", [(20, 0.1, 0.1, 0.0), (30, 0.05, 0.2, 0.3), (60, 0.3, 0.4, 0.5),
                                                    (10, 0.02, 0.02, 0.0)])
def test_paired_interval_covers_by_simulation(n: int, p_base: float, p_cand: float, rho: float) -> None:
    """At least 93% of 2,000 simulated 95% intervals cover the true difference (correlated pairs included).

    The 2,000 samples are drawn at once and counted in numpy; each sample's interval is Newcombe's from its
    counts, which is what paired_rate reports (checked on the first 50 samples, whose arrays are at hand).
    """
    rng = np.random.default_rng(11)
    runs = 2000
    shared = rng.random((runs, n)) < rho
    u = rng.random((runs, n))
    base = u < p_base
    cand = np.where(shared, u < p_cand, rng.random((runs, n)) < p_cand)
    both = np.count_nonzero(base & cand, axis=1)
    only_cand = np.count_nonzero(cand & ~base, axis=1)
    only_base = np.count_nonzero(base & ~cand, axis=1)
    intervals = [newcombe_paired(b, c, a, n - b - c - a) for b, c, a in
                 zip(both.tolist(), only_cand.tolist(), only_base.tolist())]
    for k in range(50):
        r = paired_rate(base[k], cand[k])
        assert (r.low, r.high) == intervals[k]
    cover = sum(low <= (p_cand - p_base) <= high for low, high in intervals)
    assert cover / runs >= 0.93, cover / runs


def test_paired_difference_counts_discordant_pairs() -> None:
    b = np.array([1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])
    c = np.array([1, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1])
    r = paired_rate(b, c)
    assert r.n == 12 and r.difference == pytest.approx((3 - 1) / 12)
    assert r.p_value == pytest.approx(mcnemar([[2, 3], [1, 6]], exact=True).pvalue)
    assert not math.isnan(r.low) and r.low < r.difference < r.high
