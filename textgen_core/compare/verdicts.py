"""The verdict of one comparison row, and the missingness test that can overrule it.

A verdict is exactly one of ``better``, ``worse``, ``not significant`` or
``inconclusive``. "Not significant" is not "no difference": the test could not
tell the models apart, and the interval says how large a difference is still
possible. A candidate is never called better or worse when the two
models were scored on different datums (an exact McNemar test on the paired
"has a score" indicator), when fewer than two datums pair up, or when the
score has no better direction.
"""

from __future__ import annotations

import math
from typing import Mapping


BETTER, WORSE, NOT_SIGNIFICANT, INCONCLUSIVE = "better", "worse", "not significant", "inconclusive"
#: The old name of NOT_SIGNIFICANT (the words changed: the test not rejecting is not evidence of equality).
NO_DIFFERENCE = NOT_SIGNIFICANT
VERDICTS = (BETTER, WORSE, NOT_SIGNIFICANT, INCONCLUSIVE)
#: Family of a row: in the Holm family, or listed apart (a score without a better direction).
HOLM, APART = "holm", "apart"


def mcnemar_exact(baseline_only: int, candidate_only: int) -> float:
    """Two-sided exact McNemar p from the discordant pairs (scored for one model only); 1 when there are none."""
    total = baseline_only + candidate_only
    if total == 0:
        return 1.0
    from scipy import stats  # here: the dashboard's words import this module for its verdict names alone

    return float(min(1.0, 2.0 * stats.binom.cdf(min(baseline_only, candidate_only), total, 0.5)))


def worst_value(direction: str, value_range: tuple[float, float | None], observed: tuple[float, float]) -> float:
    """The score's worst value: its declared bound, or the worst value observed when the range is open."""
    low, high = value_range
    if direction == "lower":
        return float(high) if high is not None else float(observed[1])
    return float(low) if low is not None else float(observed[0])


def decide(*, direction: str, family: str, n: int, delta: float, p_value: float, p_used: float,
           missingness_p: float, alpha: float) -> tuple[str, str]:
    """(verdict, why) of one row; ``p_used`` is the Holm-adjusted p when the table is adjusted."""
    if n < 2 or math.isnan(p_value):
        return INCONCLUSIVE, f"too few pairs (n = {n})"
    if missingness_p < alpha:
        return INCONCLUSIVE, f"the models were scored on different datums (McNemar p = {missingness_p:.2g})"
    if family == APART or direction == "none":
        p, which = (p_value, "unadjusted p") if family == APART else (p_used, "adjusted p")
        if math.isnan(p) or p >= alpha:
            return NOT_SIGNIFICANT, f"no better direction; {which}"
        return INCONCLUSIVE, f"differs, but the score has no better direction ({which})"
    if math.isnan(p_used) or p_used >= alpha or delta == 0:
        return NOT_SIGNIFICANT, ""
    improved = delta < 0 if direction == "lower" else delta > 0
    return (BETTER, "") if improved else (WORSE, "")


def oriented(direction: str, delta: float) -> float:
    """A delta turned so that positive means the candidate is better."""
    return -delta if direction == "lower" else delta


def fails(verdict: str, family: str, fail_if: str, direction: str = "higher") -> bool:
    """True when a row fails a CI gate: ``worse``, or with ``inconclusive`` also an inconclusive row.

    Scores without a better direction never fail a gate, in the Holm family or apart.
    """
    if family == APART or direction == "none":
        return False
    return verdict == WORSE or (fail_if == INCONCLUSIVE and verdict == INCONCLUSIVE)


GATES: Mapping[str, str] = {WORSE: "a score is significantly worse after Holm",
                            INCONCLUSIVE: "a score is significantly worse, or its comparison is inconclusive"}
