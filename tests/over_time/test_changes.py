"""The change detector against references (scipy's paired t test, statsmodels' Holm) and by simulation: no true
change over 20 runs x 10 scores flags at most 5% of histories; a drop of 0.05 on 300 datums is flagged in at
least 80% of them.

The simulated scores: each datum has a difficulty d ~ Beta(2, 2) shared by every run (the pairing the test
exploits), each run scores clip(d + e, 0, 1) with run noise e ~ N(0, SD) independent per datum and run (the spread of an
LLM judge re-asked, or of a model re-sampled). With SD = 0.12 paired differences have a standard deviation of
about 0.16. The power promise depends on that spread: at SD = 0.15 (differences' spread 0.2) the same drop is
flagged in about 70% of histories (docs/runs-over-time.md).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from textgen_core.over_time.changes import MIN_PAIRS, flags, holm, paired_tests, series_tests

RUNS, SCORES, DATUMS, SD, CHUNK = 20, 10, 300, 0.12, 200


def simulate(histories: int, rng: np.random.Generator, drop: float = 0.0, at: int = 12) -> np.ndarray:
    """(histories, scores, runs, datums) of scores; ``drop`` is taken off score 0 from run ``at`` on."""
    difficulty = rng.beta(2, 2, size=(histories, SCORES, 1, DATUMS))
    values = rng.normal(0.0, SD, size=(histories, SCORES, RUNS, DATUMS))  # the noise, made the scores in place
    values += difficulty
    np.clip(values, 0.0, 1.0, out=values)
    values[:, 0, at:, :] -= drop
    return values


def flagged(histories: int, seed: int, **planted) -> np.ndarray:
    """flags() of simulated histories, made and tested CHUNK at a time (bounded memory)."""
    rng = np.random.default_rng(seed)
    return np.concatenate([flags(simulate(CHUNK, rng, **planted)) for _ in range(histories // CHUNK)])


def test_no_true_change_flags_at_most_five_percent_of_histories() -> None:
    share = flagged(2000, 20261127).any(axis=(-2, -1)).mean()
    assert 0.01 < share <= 0.05, share  # under 5%, and not simply silent


def test_a_planted_drop_of_005_on_300_datums_is_flagged_in_80_percent() -> None:
    found = flagged(600, 7, drop=0.05, at=12)
    share = found[:, 0, 11].mean()  # run 12 against run 11, score 0
    assert share >= 0.80, share
    others = np.delete(found.reshape(len(found), -1), 11, axis=1)  # every other test of the history
    assert others.any(axis=1).mean() <= 0.05


def test_binary_scores_keep_the_false_alarm_promise() -> None:
    rng = np.random.default_rng(3)
    shares = []
    for _ in range(1000 // CHUNK):
        p = rng.beta(1, 1, size=(CHUNK, SCORES, 1, DATUMS))
        shares.append(flags((rng.random((CHUNK, SCORES, RUNS, DATUMS)) < p).astype(float)).any(axis=(-2, -1)))
    assert np.concatenate(shares).mean() <= 0.05


@pytest.mark.parametrize("n", [MIN_PAIRS, 37, 300])
def test_paired_test_equals_scipy(n: int) -> None:
    rng = np.random.default_rng(n)
    before, after = rng.random(n), rng.random(n) + 0.05
    count, mean, p = paired_tests(before, after)
    reference = stats.ttest_rel(after, before)
    assert count == n and mean == pytest.approx(np.mean(after - before), abs=1e-12)
    assert p == pytest.approx(reference.pvalue, rel=1e-9, abs=1e-15)


def test_unpaired_positions_are_left_out_and_few_pairs_get_no_test() -> None:
    before = np.array([0.1, np.nan, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 0.2, 0.3])
    after = np.array([0.2, 0.5, np.nan, 0.5, 0.4, 0.9, 0.6, 0.9, 0.8, 1.0, 0.4, 0.1])
    both = ~np.isnan(before) & ~np.isnan(after)
    count, mean, p = paired_tests(before, after)
    assert count == 10 and p == pytest.approx(stats.ttest_rel(after[both], before[both]).pvalue, rel=1e-9)
    count, _, p = paired_tests(before[:9], after[:9])
    assert count == 7 and np.isnan(p)


def test_differences_without_spread() -> None:
    same = np.linspace(0, 1, 20)
    assert paired_tests(same, same)[2] == 1.0
    assert paired_tests(same, same - 0.1)[2] == pytest.approx(2 * 0.5 ** 20)


def test_holm_equals_statsmodels_and_skips_missing_tests() -> None:
    rng = np.random.default_rng(1)
    p = rng.random((5, 40)) ** 3
    p[:, ::7] = np.nan
    adjusted = holm(p)
    for row, got in zip(p, adjusted):
        keep = ~np.isnan(row)
        assert np.allclose(got[keep], multipletests(row[keep], method="holm")[1], rtol=0, atol=1e-12)
        assert np.isnan(got[~keep]).all()


def test_series_tests_pair_each_run_with_the_previous() -> None:
    values = np.random.default_rng(2).random((4, 50))
    n, mean, p = series_tests(values)
    assert n.tolist() == [50, 50, 50]
    assert mean == pytest.approx((values[1:] - values[:-1]).mean(axis=1))
