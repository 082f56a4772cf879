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


def kappa_rows(first: np.ndarray, second: np.ndarray, *, labels: Sequence[float],
               weights: Weights = None) -> np.ndarray:
    """:func:`kappa` of each row of two (resamples x items) arrays at once: what a bootstrap interval computes.

    ``labels`` are required: with categories taken from each row's values a weighted kappa's distances would
    differ from row to row.
    """
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if a.shape != b.shape or a.ndim != 2:
        raise ParameterError(f"kappa_rows needs two 2-D rating arrays of one shape, got {a.shape} and {b.shape}")
    if weights not in (None, "linear", "quadratic"):
        raise ParameterError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    rows, items = a.shape
    if items == 0:
        return np.full(rows, np.nan)
    cats = np.asarray(labels, dtype=float)
    k = cats.size
    cell = np.arange(rows)[:, None] * (k * k) + _positions(a, cats) * k + _positions(b, cats)
    observed = np.bincount(cell.ravel(), minlength=rows * k * k).reshape(rows, k, k).astype(float)
    expected = observed.sum(axis=2)[:, :, None] * observed.sum(axis=1)[:, None, :] / items
    weight = _kappa_weights(k, weights)
    chance = (weight * expected).sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(chance == 0.0, np.nan, 1.0 - (weight * observed).sum(axis=(1, 2)) / chance)


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
        raise ParameterError(f"rating {values.ravel()[int(np.argmax(bad))]:g} is not one of the categories")
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


def spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """:func:`spearman` of each row of two (resamples x items) arrays at once (NaN where a row has no spread).

    The mid-ranks are whole or half numbers and their sums exact, so each value is the one :func:`spearman`
    gives for that row, bit for bit.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 2:
        raise ParameterError(f"spearman_rows needs two 2-D arrays of one shape, got {x.shape} and {y.shape}")
    if x.shape[1] < 2:
        return np.full(x.shape[0], np.nan)
    rx, ry = _midranks_rows(x), _midranks_rows(y)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    flat = (np.ptp(x, axis=1) == 0) | (np.ptp(y, axis=1) == 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.einsum("ij,ij->i", rx, ry) / np.sqrt(np.einsum("ij,ij->i", rx, rx) * np.einsum("ij,ij->i", ry, ry))
    return np.where(flat, np.nan, rho)


def _midranks_rows(values: np.ndarray) -> np.ndarray:
    """:func:`_midranks` of each row: a tie's rank is the mean of its first and last position, plus one."""
    rows, items = values.shape
    order = np.argsort(values, axis=1, kind="mergesort")
    ranked = np.take_along_axis(values, order, axis=1)
    new = np.ones((rows, items), dtype=bool)
    new[:, 1:] = ranked[:, 1:] != ranked[:, :-1]
    last = np.ones((rows, items), dtype=bool)
    last[:, :-1] = new[:, 1:]
    position = np.arange(items)
    first = np.maximum.accumulate(np.where(new, position, 0), axis=1)
    end = np.minimum.accumulate(np.where(last, position, items)[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty((rows, items))
    np.put_along_axis(ranks, order, (first + end) / 2.0 + 1.0, axis=1)
    return ranks


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
    from scipy import stats  # here: importing scipy.stats costs ~1 s, and a run's summary needs no Kendall

    return _rank(stats.kendalltau, x, y)


def _rank(test: Callable, x: Sequence[float], y: Sequence[float]) -> float:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(test(x, y).statistic)


def bootstrap_interval(statistic: Callable[..., float], *columns: np.ndarray, confidence: float = 0.95,
                       resamples: int = RESAMPLES, rng: np.random.Generator,
                       many: Callable[..., np.ndarray] | None = None) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(*columns)``, resampling rows (items) with replacement.

    Resamples where the statistic is undefined (NaN: e.g. a constant rater) are
    dropped; NaN when fewer than half remain or there are under 3 items.
    ``many``, when given, is the same statistic of many resamples in one call: it gets each column indexed by
    a (resamples x items) array of draws and returns one value per resample (such as :func:`kappa_rows` and
    :func:`spearman_rows`); the draws, and so the interval, are those of one ``statistic`` call per resample.
    """
    if not 0.0 < confidence < 1.0:
        raise ParameterError(f"confidence must be between 0 and 1, got {confidence!r}")
    n = len(columns[0])
    if n < 3:
        return float("nan"), float("nan")
    rows = max(1, DRAWS_AT_ONCE // n)  # resamples drawn together: memory stays bounded however many items
    parts = []
    for start in range(0, resamples, rows):
        draws = rng.integers(0, n, size=(min(rows, resamples - start), n))
        if many is not None:
            parts.append(np.asarray(many(*(c[draws] for c in columns)), dtype=float))
        else:
            parts.append(np.array([statistic(*(c[d] for c in columns)) for d in draws], dtype=float))
    values = np.concatenate(parts)
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
    """Percentile bootstrap interval of alpha, resampling units (columns) with replacement.

    A resample's coincidences are the pairable units' own (:func:`unit_coincidences`), weighted by how often
    each unit was drawn: all the resamples of one block of draws in one matrix product.
    """
    per_unit, domain = unit_coincidences(ratings)
    units, size = len(per_unit), domain.size

    def of_rows(draws: np.ndarray) -> np.ndarray:
        offsets = (np.arange(len(draws)) * units)[:, None]
        weights = np.bincount((draws + offsets).ravel(), minlength=len(draws) * units).reshape(len(draws), units)
        # einsum, not @: a product this small ran 5x slower through a threaded BLAS on a busy machine
        coincidences = np.einsum("ru,uk->rk", weights.astype(float), per_unit)
        return alphas_of_coincidences(coincidences.reshape(-1, size, size), domain, level)

    return bootstrap_interval(lambda d: alpha_of_coincidences((np.bincount(d, minlength=units) @ per_unit)
                                                              .reshape(size, size), domain, level),
                              np.arange(units), confidence=confidence, resamples=resamples, rng=rng, many=of_rows)


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


def alphas_of_coincidences(coincidences: np.ndarray, domain: np.ndarray, level: Level) -> np.ndarray:
    """:func:`alpha_of_coincidences` of each of a stack of (values x values) coincidence matrices."""
    totals = coincidences.sum(axis=2)
    n = totals.sum(axis=1)
    if level == "ordinal":  # its distances depend on each row's totals
        delta = _ordinal_distances(totals)
    else:
        delta = np.broadcast_to(_distance(domain, totals[:1].sum(axis=0), level), coincidences.shape)
    expected = np.einsum("rv,rvw,rw->r", totals, delta, totals)
    disagreement = (coincidences * delta).sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((expected == 0.0) | (n <= 1), np.nan, 1.0 - (n - 1) * disagreement / expected)


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
        return _ordinal_distances(totals)
    raise ParameterError(f"level must be 'nominal', 'ordinal', 'interval' or 'ratio', got {level!r}")


def _ordinal_distances(totals: np.ndarray) -> np.ndarray:
    """The ordinal level's squared distances between every two values, from the values' totals (one row of
    totals, or a stack of rows: one matrix each)."""
    size = totals.shape[-1]
    cumulative = np.cumsum(totals, axis=-1)
    between = cumulative[..., :, None] - cumulative[..., None, :] + totals[..., None, :]  # n_g from c to k (c >= k)
    spread = np.where(np.arange(size)[:, None] >= np.arange(size)[None, :], between, np.swapaxes(between, -1, -2))
    return (spread - (totals[..., :, None] + totals[..., None, :]) / 2.0) ** 2
