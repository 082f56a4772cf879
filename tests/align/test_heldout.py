"""Held-out agreement and the paired test: kappa and MCC against scikit-learn, acceptance rules, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, matthews_corrcoef

from textgen_core.align.heldout import (_confusions, agreement, codes, draws_for, kappas, mccs, paired, verdict)
from textgen_core.compare.stats import rng_for
from textgen_core.errors import ParameterError


@pytest.mark.parametrize("k,weighted,n,seed", [(5, True, 40, 1), (5, False, 40, 2), (2, False, 25, 3),
                                               (3, True, 12, 4), (4, True, 200, 5)])
def test_kappa_and_mcc_match_sklearn_on_every_resample(k, weighted, n, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, k, size=n)
    b = np.where(rng.random(n) < 0.6, a, rng.integers(0, k, size=n))
    draws = draws_for(n, rng, resamples=30)
    got = kappas(_confusions(a, b, k, draws), weighted)
    got_mcc = mccs(_confusions(a, b, k, draws))
    for row, value, mcc in zip(draws, got, got_mcc):
        ref = cohen_kappa_score(a[row], b[row], labels=list(range(k)), weights="quadratic" if weighted else None)
        assert value == pytest.approx(ref, abs=1e-9) or (np.isnan(value) and np.isnan(ref))
        assert mcc == pytest.approx(matthews_corrcoef(a[row], b[row]), abs=1e-9)


def test_codes_refuse_a_value_off_the_scale():
    assert codes([1, 5, 3], [1, 2, 3, 4, 5]).tolist() == [0, 4, 2]
    with pytest.raises(ParameterError, match="value 6 is not on the scale"):
        codes([1, 6], [1, 2, 3, 4, 5])


def test_a_candidate_that_changes_nothing_is_never_accepted():
    rng = rng_for(0, "t")
    people = rng.integers(0, 5, size=50)
    judge = np.where(rng.random(50) < 0.5, people, rng.integers(0, 5, size=50))
    test = paired(people, judge, judge.copy(), 5, True, draws_for(50, rng))
    assert test.changed == 0 and test.delta == 0.0
    assert verdict(test, 1) == (False, "no change: the candidate gives every held-out cell the current version's "
                                       "value")


def test_a_clearly_better_candidate_is_accepted_and_a_worse_one_is_not():
    rng = rng_for(0, "t2")
    people = rng.integers(0, 5, size=80)
    noisy = np.where(rng.random(80) < 0.4, people, rng.integers(0, 5, size=80))
    better = np.where(rng.random(80) < 0.9, people, noisy)
    draws = draws_for(80, rng)
    up = paired(people, noisy, better, 5, True, draws)
    assert up.delta > 0 and up.interval.given and up.interval.low > 0
    assert verdict(up, 3)[0]
    down = paired(people, better, noisy, 5, True, draws)
    assert down.delta < 0 and not verdict(down, 3)[0]


def test_the_threshold_is_shared_among_candidates():
    rng = rng_for(1, "t3")
    people = rng.integers(0, 2, size=40)
    judge = np.where(rng.random(40) < 0.6, people, 1 - people)
    candidate = judge.copy()
    wrong = np.flatnonzero(candidate != people)[:3]
    candidate[wrong] = people[wrong]  # three cells fixed: better, but not by much
    test = paired(people, judge, candidate, 2, False, draws_for(40, rng))
    assert test.delta > 0
    one, many = verdict(test, 1), verdict(test, 50)
    assert not many[0] and "shared among 50 candidates" in many[1]
    assert test.p_not_better > 0.05 / 50


def test_too_few_held_out_cells_give_no_interval_and_no_acceptance():
    people, judge = np.array([0, 1, 2, 1]), np.array([0, 1, 1, 1])
    rng = rng_for(2, "t4")
    made = agreement(people, judge, 3, True, draws_for(4, rng))
    assert not made.interval.given and "at least 10" in made.interval.why
    test = paired(people, judge, people.copy(), 3, True, draws_for(4, rng))
    assert verdict(test, 1) == (False, "too few held-out cells (4; at least 10 are needed)")


def test_perfect_agreement_says_why_it_has_no_interval():
    people = np.tile(np.arange(5), 6)
    made = agreement(people, people.copy(), 5, True, draws_for(30, rng_for(3, "t5")))
    assert made.value == 1.0 and not made.interval.given and "in every resample" in made.interval.why
