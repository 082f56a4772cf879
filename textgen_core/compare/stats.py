"""Paired statistics: bootstrap interval, sign-flip permutation test, Holm, win/tie/loss.

Every function takes the per-datum differences (candidate - baseline) of one
score, already paired by datum id. Randomness comes only from the generator
passed in, so the same seed gives the same numbers.
"""

from __future__ import annotations

import math
import zlib
from typing import Sequence

import numpy as np

from ..errors import ParameterError

#: Largest number of non-zero differences for which all 2^k sign flips are enumerated.
EXACT_MAX = 20
#: Upper bound on the cells of one random matrix, to keep memory flat for large n.
_CHUNK_CELLS = 2_000_000
#: The smallest Monte Carlo p is alpha / family / RESOLUTION, so sampling noise cannot decide a verdict.
RESOLUTION = 10
#: Sign flips x differences beyond which the normal approximation replaces Monte Carlo (about 0.05 s).
MONTE_CARLO_CELLS = 10_000_000


def rng_for(seed: int, *keys: str) -> np.random.Generator:
    """A generator for one comparison: depends on the seed and the keys, not on call order."""
    if seed < 0:
        raise ParameterError(f"seed must be zero or positive, got {seed}")
    words = [seed, *(zlib.crc32(k.encode("utf-8")) for k in keys)]
    return np.random.default_rng(np.random.SeedSequence(words))


def chunk_rows(total: int, width: int) -> list[int]:
    """Row counts of chunks of a (total x width) matrix that stay under the cell budget."""
    rows = max(1, _CHUNK_CELLS // max(width, 1))
    sizes = [rows] * (total // rows)
    if total % rows:
        sizes.append(total % rows)
    return sizes


def bootstrap_means(diffs: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Means of ``resamples`` resamples of the datums, drawn with replacement (pairs stay together)."""
    diffs = np.asarray(diffs, dtype=float)
    n = diffs.size
    if resamples < 1:
        raise ParameterError(f"resamples must be at least 1, got {resamples}")
    if n == 0:
        return np.full(resamples, np.nan)
    parts = [diffs[rng.integers(0, n, size=(rows, n), dtype=np.int32)].mean(axis=1) for rows in chunk_rows(resamples, n)]
    return np.concatenate(parts)


def bootstrap_ci(diffs: np.ndarray, *, resamples: int, confidence: float,
                 rng: np.random.Generator) -> tuple[float, float]:
    """Paired bootstrap interval of the mean difference: expanded percentile (Hesterberg 2015).

    Plain percentile intervals of a mean are too narrow for small n (they cover
    about 92% instead of 95% at n = 20), because resampled means spread by
    sqrt((n-1)/n) times the standard error and the tails are normal rather than t.
    The expanded interval reads percentiles at the level that corrects both,
    and becomes the plain percentile interval as n grows.
    """
    if not 0.0 < confidence < 1.0:
        raise ParameterError(f"confidence must be between 0 and 1, got {confidence}")
    diffs = np.asarray(diffs, dtype=float)
    n = diffs.size
    if n == 0:
        return float("nan"), float("nan")
    tail = expanded_tail(n, confidence)
    low, high = np.quantile(bootstrap_means(diffs, resamples, rng), [tail, 1.0 - tail])
    return float(low), float(high)


def expanded_tail(n: int, confidence: float) -> float:
    """The lower percentile (as a share) the expanded interval of a sample of n reads (see :func:`bootstrap_ci`)."""
    tail = (1.0 - confidence) / 2
    if n >= 2:
        # here, not at the top: the label pages import this module for rng_for alone. scipy.special's normal cdf
        # and t quantile are what scipy.stats.norm.cdf and t.ppf compute, without importing scipy.stats (~1 s)
        from scipy import special

        tail = float(special.ndtr(-math.sqrt(n / (n - 1)) * special.stdtrit(n - 1, 1.0 - tail)))
    return tail


def permutation_test(diffs: np.ndarray, *, resamples: int, rng: np.random.Generator,
                     zero_tolerance: float = 0.0, exact_max: int = EXACT_MAX, family: int = 1,
                     alpha: float = 0.05) -> tuple[float, str]:
    """Two-sided paired permutation test of a zero mean difference; returns (p, method).

    Under the null each difference is as likely to have either sign, so the test
    flips signs. Differences within ``zero_tolerance`` of zero are ties and do
    not move the statistic. With at most ``exact_max`` non-zero differences all
    2^k flips are enumerated (exact p). Otherwise random flips are drawn, as many
    as it takes for the smallest possible p, 1 / (1 + draws), to sit well below
    ``alpha / family`` (the first Holm threshold of a family of that size); and
    when that many draws over k differences would cost too much, the sign-flip
    distribution (symmetric, variance the sum of squares) is read from its normal
    approximation, whose error shrinks as 1/k.
    """
    diffs = np.asarray(diffs, dtype=float)
    if diffs.size == 0:
        return float("nan"), "none (no pairs)"
    nonzero = diffs[np.abs(diffs) > zero_tolerance]
    k = nonzero.size
    if k == 0:
        return 1.0, "paired permutation (exact)"
    observed = abs(nonzero.sum())
    # Sums of the same numbers in another order differ in the last bits only.
    floor = observed - 1e-9 * np.abs(nonzero).sum()
    if k <= exact_max:
        hits = 0
        for start, rows in _exact_blocks(k):
            codes = np.arange(start, start + rows, dtype=np.int64)
            signs = 1.0 - 2.0 * ((codes[:, None] >> np.arange(k)) & 1)
            hits += int(np.count_nonzero(np.abs(signs @ nonzero) >= floor))
        return hits / 2.0 ** k, "paired permutation (exact)"
    if resamples < 1:
        raise ParameterError(f"resamples must be at least 1, got {resamples}")
    draws = max(resamples, draws_for(family, alpha))
    if draws * k > MONTE_CARLO_CELLS:
        from scipy import special

        z = observed / math.sqrt(float(np.square(nonzero).sum()))
        return float(min(1.0, 2.0 * special.ndtr(-z))), "paired permutation (normal approximation)"
    hits = 0
    for rows in chunk_rows(draws, k):
        signs = 1.0 - 2.0 * rng.integers(0, 2, size=(rows, k), dtype=np.int8)
        hits += int(np.count_nonzero(np.abs(signs @ nonzero) >= floor))
    return (1 + hits) / (1 + draws), f"paired permutation (Monte Carlo, {draws} draws)"


def draws_for(family: int, alpha: float) -> int:
    """Random sign flips so that the smallest Monte Carlo p is a tenth of alpha / family."""
    return int(math.ceil(RESOLUTION * max(family, 1) / alpha)) - 1


def smallest_p(k: int, *, resamples: int, family: int = 1, alpha: float = 0.05,
               exact_max: int = EXACT_MAX) -> float:
    """The smallest p :func:`permutation_test` can give for ``k`` non-zero differences (its resolution)."""
    if k == 0:
        return 1.0
    if k <= exact_max:
        return 2.0 / 2.0 ** k
    draws = max(resamples, draws_for(family, alpha))
    return 0.0 if draws * k > MONTE_CARLO_CELLS else 1.0 / (1 + draws)


def _exact_blocks(k: int) -> list[tuple[int, int]]:
    total = 1 << k
    rows = max(1, _CHUNK_CELLS // k)
    return [(start, min(rows, total - start)) for start in range(0, total, rows)]


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values; NaN entries stay NaN and are not counted."""
    p = np.asarray(p_values, dtype=float)
    adjusted = np.full(p.shape, np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    m = valid.size
    if m == 0:
        return adjusted.tolist()
    order = valid[np.argsort(p[valid], kind="stable")]
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[index]))
        adjusted[index] = running
    return adjusted.tolist()


def win_tie_loss(diffs: np.ndarray, direction: str, tolerance: float) -> tuple[int, int, int]:
    """Counts of candidate better / within ``tolerance`` / worse, in the score's direction.

    For direction 'none' a higher value counts as a win.
    """
    diffs = np.asarray(diffs, dtype=float)
    oriented = -diffs if direction == "lower" else diffs
    ties = int(np.count_nonzero(np.abs(oriented) <= tolerance))
    wins = int(np.count_nonzero(oriented > tolerance))
    return wins, ties, int(diffs.size) - wins - ties
