"""Intervals of one model's mean score that stay inside the score's range.

0/1 scores of a metric declared on [0, 1] get the Wilson score interval; other scores a bootstrap percentile
interval (expanded for small n, see :func:`.stats.bootstrap_ci`), whose ends are
means of resampled values and so can never leave the range the values live in.
Large samples, where resampling is slow and the t interval is accurate, get the
t interval clipped to the declared range. Fewer than two values: no interval.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ..errors import ParameterError
from .stats import bootstrap_ci

#: From this many values on, the t interval (clipped to the range) replaces the bootstrap.
BOOTSTRAP_MAX = 1000
#: Resamples of the bootstrap interval of a mean.
RESAMPLES = 2000
WILSON, BOOTSTRAP, T_CLIPPED, TOO_FEW = "Wilson", "bootstrap percentile", "t, clipped to the range", "too few"


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a proportion; (NaN, NaN) when n is 0. Always inside [0, 1]."""
    if not 0.0 < confidence < 1.0:
        raise ParameterError(f"confidence must be between 0 and 1, got {confidence}")
    if n <= 0:
        return float("nan"), float("nan")
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    share = successes / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def is_binary(values: np.ndarray) -> bool:
    """True when every value is 0 or 1 (exact match, pass/fail judges...)."""
    return bool(values.size) and bool(np.all((values == 0.0) | (values == 1.0)))


def mean_interval(values: np.ndarray, *, confidence: float, rng: np.random.Generator,
                  bounds: tuple[float | None, float | None] = (None, None)) -> tuple[float, float, str]:
    """(low, high, method) of the mean of ``values``: NaN ends and 'too few' below two values."""
    values = np.asarray(values, dtype=float)
    n = values.size
    if n < 2:
        return float("nan"), float("nan"), TOO_FEW
    binary = tuple(bounds) == (0.0, 1.0) and is_binary(values)
    if n < BOOTSTRAP_MAX and not binary:
        low, high = bootstrap_ci(values, resamples=RESAMPLES, confidence=confidence, rng=rng)
        return low, high, BOOTSTRAP
    return interval_from_moments(n, float(values.mean()), float(values.std(ddof=1)), float(values.sum()),
                                 binary, confidence=confidence, bounds=bounds)


def interval_from_moments(n: int, mean: float, std: float, total: float, binary: bool, *, confidence: float,
                          bounds: tuple[float | None, float | None] = (None, None)) -> tuple[float, float, str]:
    """:func:`mean_interval` of values known by their count, mean, sample std and sum (no bootstrap needed):
    Wilson for 0/1 values on [0, 1], else, from :data:`BOOTSTRAP_MAX` values on, the t interval clipped
    to the range. Lets a million stored values be summarized from SQL aggregates."""
    if n < 2:
        return float("nan"), float("nan"), TOO_FEW
    if tuple(bounds) == (0.0, 1.0) and binary:
        low, high = wilson_interval(int(total), n, confidence)
        return low, high, WILSON
    if n < BOOTSTRAP_MAX:
        raise ValueError("below BOOTSTRAP_MAX values the interval is a bootstrap: pass the values to mean_interval")
    low, high = t_interval(mean, std, n, confidence)
    floor, ceiling = bounds
    return (low if floor is None else max(floor, low)), (high if ceiling is None else min(ceiling, high)), T_CLIPPED


def t_interval(mean: float, std: float, n: int, confidence: float) -> tuple[float, float]:
    """Student t interval of a mean from its sample standard deviation (n >= 2)."""
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1) * std / math.sqrt(n))
    return mean - half, mean + half
