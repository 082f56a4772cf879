"""The Alternative Annotator Test on a worked example computed by hand, and its references (scipy, statsmodels)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from textgen_core.align.aat import _match, alt_test, by_adjust, one_sided_t

#: cell: (A, B, C, judge), yes/no as 1/0
WORKED = {"c1": (1, 1, 1, 1), "c2": (0, 0, 1, 0), "c3": (1, 0, 0, 0), "c4": (0, 1, 1, 1)}


def _labels(table: dict) -> tuple[pd.DataFrame, dict]:
    rows = [(cell, "m", who, float(v)) for cell, values in table.items() for who, v in zip("ABC", values[:3])]
    return (pd.DataFrame(rows, columns=["datum_id", "model", "annotator", "value"]),
            {(cell, "m"): float(values[3]) for cell, values in table.items()})


def test_the_worked_example_by_hand():
    # Leave A out (others B, C): c1 tie, c2 tie (both match one of two), c3 and c4 the judge matches both and A
    # neither: judge wins 4 of 4, A wins 2 of 4; d = [0, 0, 1, 1], d + 0.2 = [.2, .2, 1.2, 1.2]: mean 0.7,
    # sd sqrt(1/3), t = 0.7 / (sqrt(1/3) / 2) = 2.4249 on 3 degrees of freedom.
    # Leave B out: every cell a tie, d + 0.2 = 0.2 on every cell: no spread, above 0: rejected, p = 0.
    # Leave C out: c2 the judge matches A and B, C neither; the rest ties: d + 0.2 = [.2, 1.2, .2, .2],
    # mean 0.45, sd 0.5, t = 0.45 / 0.25 = 1.8.
    labels, judge = _labels(WORKED)
    test = alt_test(labels, judge, categorical=True, epsilon=0.2)
    by = {r.annotator: r for r in test.results}
    assert (by["A"].rho_judge, by["A"].rho_annotator) == (1.0, 0.5)
    assert (by["B"].rho_judge, by["B"].rho_annotator) == (1.0, 1.0)
    assert (by["C"].rho_judge, by["C"].rho_annotator) == (1.0, 0.75)
    assert by["A"].t == pytest.approx(0.7 / (math.sqrt(1 / 3) / 2), abs=1e-12)
    assert by["C"].t == pytest.approx(1.8, abs=1e-12) and by["B"].t == math.inf
    p_a, p_c = stats.t.sf(0.7 / (math.sqrt(1 / 3) / 2), 3), stats.t.sf(1.8, 3)
    assert by["A"].p == pytest.approx(p_a, abs=1e-12) and by["C"].p == pytest.approx(p_c, abs=1e-12)
    assert by["B"].p == 0.0
    # scipy's own one-sided one-sample t-test says the same
    assert by["A"].p == pytest.approx(stats.ttest_1samp([0.2, 0.2, 1.2, 1.2], 0, alternative="greater").pvalue,
                                      abs=1e-12)
    # Benjamini-Yekutieli by hand: c(3) = 1 + 1/2 + 1/3 = 11/6; sorted p: B 0, A p_a, C p_c;
    # adjusted C = p_c * 3 * c / 3, A = min(p_a * 3 * c / 2, adjusted C), B = 0
    c = 11 / 6
    adj_c = p_c * 3 * c / 3
    adj_a = min(p_a * 3 * c / 2, adj_c)
    assert by["C"].p_adjusted == pytest.approx(adj_c, abs=1e-12)
    assert by["A"].p_adjusted == pytest.approx(adj_a, abs=1e-12) and by["B"].p_adjusted == 0.0
    assert adj_a > 0.05 and adj_c > 0.05
    # only B's null is rejected: winning rate 1/3 < 0.5, the judge does not pass
    assert [r.rejected for r in test.results] == [False, True, False]
    assert test.winning_rate == pytest.approx(1 / 3) and not test.passed
    assert test.advantage == pytest.approx(1.0)
    assert "may not replace an annotator at epsilon = 0.2" in test.verdict()
    assert (test.annotators, test.shared_cells) == (3, 4)


def test_by_adjust_is_statsmodels_fdr_by():
    rng = np.random.default_rng(4)
    for m in (1, 2, 5, 17):
        p = rng.uniform(0, 0.2, size=m)
        assert by_adjust(p) == pytest.approx(multipletests(p, method="fdr_by")[1].tolist(), abs=1e-12)


def test_the_rating_match_is_the_negative_rmse_to_the_others():
    # others 2 and 4: a judge's 3 is 1 away from each (-1); an annotator's 4 is 2 and 0 away (-sqrt(2))
    others = np.array([[2.0, 4.0], [3.0, np.nan]])
    assert _match(np.array([3.0, 5.0]), others, False) == pytest.approx([-1.0, -2.0])
    assert _match(np.array([4.0, 3.0]), others, False) == pytest.approx([-math.sqrt(2), 0.0])


def test_a_judge_that_is_the_consensus_passes_and_a_coin_does_not():
    rng = np.random.default_rng(11)
    truth = rng.integers(0, 2, size=60)
    people = {who: np.where(rng.random(60) < 0.15, 1 - truth, truth) for who in "ABCD"}
    rows = [(f"d{i}", "m", who, float(v[i])) for who, v in people.items() for i in range(60)]
    labels = pd.DataFrame(rows, columns=["datum_id", "model", "annotator", "value"])
    good = alt_test(labels, {(f"d{i}", "m"): float(truth[i]) for i in range(60)}, categorical=True)
    coin = alt_test(labels, {(f"d{i}", "m"): float(rng.integers(0, 2)) for i in range(60)}, categorical=True)
    assert good.passed and good.winning_rate >= 0.5
    assert not coin.passed


def test_fewer_than_three_annotators_on_shared_cells_is_said_not_computed():
    labels, judge = _labels(WORKED)
    two = labels[labels["annotator"] != "C"]
    test = alt_test(two, judge, categorical=True)
    assert test.why and "at least 3 annotators" in test.verdict() and not test.passed
    apart = labels.assign(datum_id=labels["datum_id"] + labels["annotator"])  # nobody shares a cell
    assert "found 0 on 0 shared cells" in alt_test(apart, judge, categorical=True).why
    assert "epsilon" in alt_test(labels, judge, categorical=True, epsilon=1.5).why


def test_one_sided_t_without_spread():
    assert one_sided_t(np.zeros(5), 0.2) == (math.inf, 0.0)
    assert one_sided_t(np.full(5, -1.0), 0.2)[1] == 1.0
