"""Agreement statistics with intervals: Cohen's kappa (plain and weighted), rank correlations, Krippendorff's alpha.

Each statistic is written out here (kappa as in scikit-learn's
``cohen_kappa_score``, alpha as in Krippendorff 2011 "Computing Krippendorff's
alpha-reliability") and its interval is a percentile bootstrap over the items
(cells, or units for alpha), seeded, so a report reads the same twice.
"""

from __future__ import annotations

import functools
import warnings
from typing import Callable, Literal, Sequence

import numpy as np
from scipy import stats

from ..errors import ParameterError

Weights = Literal["linear", "quadratic"] | None
Level = Literal["nominal", "ordinal", "interval", "ratio"]
#: Bootstrap resamples of an agreement interval.
RESAMPLES = 1000
#: Item indices drawn at once by a bootstrap (16 MB of them).
DRAWS_AT_ONCE = 2_000_000


def kappa(first: Sequence[float], second: Sequence[float], *, labels: Sequence[float] | None = None,
          weights: Weights = None) -> float:
    """Cohen's kappa of two raters over the same items; ``weights`` 'linear' or 'quadratic' for ordinal scales.

    ``labels``: the categories in scale order (default: the values seen, sorted);
    weights grow with the distance between category positions. NaN when the
    raters' chance agreement is total (a constant rater).
    """
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ParameterError(f"kappa needs two rating lists of one length, got {a.shape} and {b.shape}")
    if a.size == 0:
        return float("nan")
    cats = np.unique(np.concatenate([a, b])) if labels is None else np.asarray(labels, dtype=float)
    ia, ib = _positions(a, cats), _positions(b, cats)
    k = cats.size
    if weights not in (None, "linear", "quadratic"):
        raise ParameterError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    # counted in one bincount (np.add.at was a third of a call; a bootstrap makes thousands): the same counts
    observed = np.bincount(ia * k + ib, minlength=k * k).reshape(k, k).astype(float)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / a.size
    weight = _kappa_weights(k, weights)
    chance = float(np.sum(weight * expected))
    if chance == 0.0:
        return float("nan")
    return float(1.0 - np.sum(weight * observed) / chance)


@functools.lru_cache(maxsize=64)
def _kappa_weights(k: int, weights: Weights) -> np.ndarray:
    """Disagreement weights of k ordered categories (read-only: shared by every call with the same scale)."""
    distance = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    if weights is None:
        weight = (distance > 0).astype(float)
    elif weights == "linear":
        weight = distance
    else:
        weight = distance ** 2
    weight.flags.writeable = False
    return weight


def _positions(values: np.ndarray, cats: np.ndarray) -> np.ndarray:
    """Each value's index in ``cats`` (the last, should a category repeat), in numpy: a bootstrap interval
    calls kappa thousands of times, and a Python lookup per rating made that seconds per interval."""
    if cats.size == 0:
        if values.size:
            raise ParameterError(f"rating {values[0]:g} is not one of the categories")
        return np.zeros(0, dtype=int)
    order = np.argsort(cats, kind="stable")
    ranked = cats[order]
    at = np.clip(np.searchsorted(ranked, values, side="right") - 1, 0, None)
    bad = ranked[at] != values  # NaN is never a category
    if bad.any():
        raise ParameterError(f"rating {values[int(np.argmax(bad))]:g} is not one of the categories")
    return order[at]


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho: Pearson's r of the mid-ranks (scipy's spearmanr, without its p-value's cost; numpy only,
    4x faster than rankdata + corrcoef, since a bootstrap interval calls it once per resample)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    rx, ry = _midranks(x), _midranks(y)
    rx -= rx.mean()
    ry -= ry.mean()
    return float(rx @ ry / np.sqrt((rx @ rx) * (ry @ ry)))


def _midranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, ties sharing their mean rank (scipy.stats.rankdata's 'average')."""
    order = np.argsort(values, kind="mergesort")
    ranked = values[order]
    starts = np.flatnonzero(np.concatenate(([True], ranked[1:] != ranked[:-1])))
    counts = np.diff(np.append(starts, values.size))
    ranks = np.empty(values.size)
    ranks[order] = np.repeat(starts + (counts + 1) / 2.0, counts)
    return ranks


def kendall(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b (scipy)."""
    return _rank(stats.kendalltau, x, y)


def _rank(test: Callable, x: Sequence[float], y: Sequence[float]) -> float:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(test(x, y).statistic)


def bootstrap_interval(statistic: Callable[..., float], *columns: np.ndarray, confidence: float = 0.95,
                       resamples: int = RESAMPLES, rng: np.random.Generator) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(*columns)``, resampling rows (items) with replacement.

    Resamples where the statistic is undefined (NaN: e.g. a constant rater) are
    dropped; NaN when fewer than half remain or there are under 3 items.
    """
    if not 0.0 < confidence < 1.0:
        raise ParameterError(f"confidence must be between 0 and 1, got {confidence!r}")
    n = len(columns[0])
    if n < 3:
        return float("nan"), float("nan")
    rows = max(1, DRAWS_AT_ONCE // n)  # resamples drawn together: memory stays bounded however many items
    values = np.array([statistic(*(c[d] for c in columns))
                       for start in range(0, resamples, rows)
                       for d in rng.integers(0, n, size=(min(rows, resamples - start), n))])
    values = values[~np.isnan(values)]
    if values.size < resamples / 2:
        return float("nan"), float("nan")
    tail = (1.0 - confidence) / 2
    return float(np.quantile(values, tail)), float(np.quantile(values, 1.0 - tail))


def krippendorff_alpha(ratings: np.ndarray, level: Level = "interval") -> float:
    """Krippendorff's alpha of a (raters x units) array with NaN where a rater gave no value.

    Units with fewer than two values are not pairable and are left out; NaN when
    nothing is pairable or every pairable value is the same.
    """
    data = np.asarray(ratings, dtype=float)
    if data.ndim != 2:
        raise ParameterError(f"alpha needs a raters x units array, got shape {data.shape}")
    counts, domain = _unit_counts(data)
    return _alpha(counts, domain, level)


def krippendorff_interval(ratings: np.ndarray, level: Level = "interval", *, confidence: float = 0.95,
                          resamples: int = RESAMPLES, rng: np.random.Generator) -> tuple[float, float]:
    """Percentile bootstrap interval of alpha, resampling units (columns) with replacement."""
    counts, domain = _unit_counts(np.asarray(ratings, dtype=float))
    counts = counts[counts.sum(axis=1) >= 2]
    return bootstrap_interval(lambda c: _alpha(c, domain, level), counts, confidence=confidence,
                              resamples=resamples, rng=rng)


def _unit_counts(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(units x values) counts of each value in each unit, and the sorted values seen."""
    domain = np.unique(data[~np.isnan(data)])
    counts = np.zeros((data.shape[1], domain.size))
    for rater in data:
        seen = ~np.isnan(rater)
        np.add.at(counts, (np.flatnonzero(seen), np.searchsorted(domain, rater[seen])), 1.0)
    return counts, domain


def _alpha(counts: np.ndarray, domain: np.ndarray, level: Level) -> float:
    pairable = counts[counts.sum(axis=1) >= 2]
    if pairable.size == 0:
        return float("nan")
    m = pairable.sum(axis=1)
    coincidence = np.einsum("uc,uk->ck", pairable / (m - 1)[:, None], pairable)
    coincidence -= np.diag((pairable / (m - 1)[:, None]).sum(axis=0))
    return alpha_of_coincidences(coincidence, domain, level)


def unit_coincidences(ratings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each pairable unit's coincidences, flattened ((pairable units) x values^2), and the sorted values seen, of a
    (raters x units) array: a resample of units is then a weighted sum of rows (:func:`alpha_of_coincidences`)."""
    counts, domain = _unit_counts(np.asarray(ratings, dtype=float))
    pairable = counts[counts.sum(axis=1) >= 2]
    scaled = pairable / (pairable.sum(axis=1) - 1)[:, None]
    per_unit = scaled[:, :, None] * pairable[:, None, :]
    per_unit[:, np.arange(domain.size), np.arange(domain.size)] -= scaled
    return per_unit.reshape(len(pairable), -1), domain


def alpha_of_coincidences(coincidence: np.ndarray, domain: np.ndarray, level: Level) -> float:
    """Alpha from a values x values coincidence matrix; NaN when nothing varies."""
    totals = coincidence.sum(axis=1)
    n = totals.sum()
    delta = _distance(domain, totals, level)
    expected = float(totals @ delta @ totals)
    if expected == 0.0 or n <= 1:
        return float("nan")
    return float(1.0 - (n - 1) * float(np.sum(coincidence * delta)) / expected)


def _distance(domain: np.ndarray, totals: np.ndarray, level: Level) -> np.ndarray:
    """Squared difference function of the level of measurement between every two values."""
    if level == "nominal":
        return 1.0 - np.eye(domain.size)
    if level == "interval":
        return np.subtract.outer(domain, domain) ** 2
    if level == "ratio":  # ((c - k) / (c + k))^2, 0 where both are 0
        total = np.add.outer(domain, domain)
        gap = np.subtract.outer(domain, domain)
        return np.divide(gap, total, out=np.zeros_like(gap), where=total != 0) ** 2
    if level == "ordinal":
        cumulative = np.cumsum(totals)
        between = cumulative[:, None] - cumulative[None, :] + totals[None, :]  # sum of n_g from c to k (c >= k)
        spread = np.where(np.arange(domain.size)[:, None] >= np.arange(domain.size)[None, :], between, between.T)
        return (spread - (totals[:, None] + totals[None, :]) / 2.0) ** 2
    raise ParameterError(f"level must be 'nominal', 'ordinal', 'interval' or 'ratio', got {level!r}")
