"""Intervals of one model's mean score that stay inside the score's range.

The building blocks (Wilson, t); which interval a mean gets, and when it gets none,
is the one rule of :mod:`.small_sample`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from ..errors import ParameterError

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
    z = float(special.ndtri(0.5 + confidence / 2))  # the normal quantile, what scipy.stats.norm.ppf computes
    share = successes / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def is_binary(values: np.ndarray) -> bool:
    """True when every value is 0 or 1 (exact match, pass/fail judges...)."""
    return bool(values.size) and bool(np.all((values == 0.0) | (values == 1.0)))


def t_interval(mean: float, std: float, n: int, confidence: float) -> tuple[float, float]:
    """Student t interval of a mean from its sample standard deviation (n >= 2)."""
    half = float(special.stdtrit(n - 1, 0.5 + confidence / 2) * std / math.sqrt(n))
    return mean - half, mean + half
