"""How often each failure mode happens per model, and whether a candidate's rate differs from the baseline's.

The unit is a scored cell: a (datum, model, score) whose value exists. A
model's rate of a mode is the share of its scored cells with at least one
failing judgement in that mode, with the interval of the project's one
small-sample rule (docs/statistics.md: Clopper-Pearson below 30 cells, Wilson
from 30, never of zero width, "too few" below 2 cells).

Between a candidate and the baseline the cells are paired by (datum, score),
scored for both. The difference of rates is the mean of the paired
differences; its interval is Newcombe's hybrid score interval for paired
proportions (1998, method 10, the square-and-add interval of Fagerland et al.), its p-value the exact McNemar test (a two-sided
binomial test of the discordant pairs, scipy). The p-values of every
(candidate, mode) form one Holm family.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..compare.intervals import wilson_interval
from ..compare.stats import holm_adjust

#: Fewest paired cells for which a difference gets an interval.
MIN_CELLS = 10


@dataclass(frozen=True)
class PairedRate:
    """One mode's paired difference of rates, candidate minus baseline."""

    n: int
    baseline_rate: float
    candidate_rate: float
    difference: float
    low: float | None
    high: float | None
    p_value: float | None
    #: Why there is no interval or p-value ("too few ..."), else None.
    note: str | None = None


def rate(hits: int, n: int, confidence: float = 0.95) -> tuple[float | None, float | None, float | None, str | None]:
    """(share, low, high, note): a model's rate of a mode with its interval under the shared small-sample rule
    (:mod:`textgen_core.compare.small_sample`: exact below 30 cells, Wilson from 30, never of zero width), or why
    there is none."""
    from ..compare.small_sample import mean_interval

    if n == 0:
        return None, None, None, "no scored cells"
    values = np.zeros(n)
    values[:hits] = 1.0
    interval = mean_interval(values, bounds=(0.0, 1.0), confidence=confidence, rng=np.random.default_rng(0))
    if not interval.given:
        return hits / n, None, None, f"too few: {interval.why}"
    return hits / n, interval.low, interval.high, None


def newcombe_paired(both: int, only_candidate: int, only_baseline: int, neither: int,
                    confidence: float = 0.95) -> tuple[float, float]:
    """Newcombe's (1998) method 10 interval for p_candidate - p_baseline from a paired 2x2 table."""
    n = both + only_candidate + only_baseline + neither
    p1, p2 = (both + only_candidate) / n, (both + only_baseline) / n
    l1, u1 = wilson_interval(both + only_candidate, n, confidence)
    l2, u2 = wilson_interval(both + only_baseline, n, confidence)
    margins = ((both + only_candidate) * (only_baseline + neither) * (both + only_baseline)
               * (only_candidate + neither))
    cross = both * neither - only_candidate * only_baseline
    # Newcombe's correlation estimate: a positive cross product is first reduced by n / 2 (and never below 0)
    shrunk = cross - n / 2 if cross > n / 2 else (cross if cross < 0 else 0.0)
    phi = 0.0 if margins == 0 else shrunk / math.sqrt(margins)
    delta = p1 - p2
    low = delta - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    high = delta + math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return max(-1.0, low), min(1.0, high)


def mcnemar_exact(only_candidate: int, only_baseline: int) -> float:
    """Two-sided exact McNemar p-value: the discordant pairs against a fair coin (1.0 without any)."""
    discordant = only_candidate + only_baseline
    if discordant == 0:
        return 1.0
    return _fair_coin(int(only_candidate), int(discordant))


@lru_cache(maxsize=4096)
def _fair_coin(successes: int, trials: int) -> float:
    """scipy's two-sided binomial test against p = 0.5, kept per (successes, trials): a table of modes x
    candidates, or a simulation, asks the same few again (each binomtest call costs about a millisecond)."""
    from scipy.stats import binomtest

    return float(binomtest(successes, trials, 0.5).pvalue)


def paired_rate(baseline: np.ndarray, candidate: np.ndarray, confidence: float = 0.95) -> PairedRate:
    """The paired difference of two 0/1 arrays (1: the cell failed in this mode), aligned by cell."""
    b = np.asarray(baseline, dtype=bool)
    c = np.asarray(candidate, dtype=bool)
    return paired_counts(int(np.count_nonzero(b & c)), int(np.count_nonzero(c & ~b)), int(np.count_nonzero(b & ~c)),
                         int(b.size), confidence)


def paired_counts(both: int, only_candidate: int, only_baseline: int, n: int,
                  confidence: float = 0.95) -> PairedRate:
    """The paired difference from the counts of ``n`` paired cells: failed in both, only the candidate, only
    the baseline (the rest failed in neither)."""
    if n == 0:
        return PairedRate(0, math.nan, math.nan, math.nan, None, None, None, "no cells scored for both models")
    base, cand = (both + only_baseline) / n, (both + only_candidate) / n
    diff = (only_candidate - only_baseline) / n
    if n < MIN_CELLS:
        return PairedRate(n, base, cand, diff, None, None, None,
                          f"too few paired cells for an interval ({n} < {MIN_CELLS})")
    low, high = newcombe_paired(both, only_candidate, only_baseline, n - both - only_candidate - only_baseline,
                                confidence)
    return PairedRate(n, base, cand, diff, low, high, mcnemar_exact(only_candidate, only_baseline))


def holm(p_values: list[float | None]) -> list[float | None]:
    """Holm-adjusted p-values of one family; a missing p stays missing and is not counted."""
    adjusted = holm_adjust([math.nan if p is None else p for p in p_values])
    return [None if math.isnan(p) else p for p in adjusted]
