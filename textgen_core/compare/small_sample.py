"""The one rule for honest intervals at small n, shared by the library, the CLI and the dashboard.

An interval is given only where it can keep its promise (docs/statistics.md says why):

* **Bounded scores** (both ends of the range declared: 0-1, 1-5): an interval from :data:`MIN_BOUNDED`
  values on, never of zero width. n draws miss, with probability alpha/2, any share of the population
  up to ``q = 1 - (alpha/2)^(1/n)`` (:func:`unseen_share`, about 3.7/n at 95%). So values that do not
  vary, at any n, and every sample under :data:`SMALL_N` values get an interval that allows for a share
  q of values at either end of the range: ``[m - q (m - low), m + q (high - m)]``, joined with the usual
  interval. For values at an end of the range this is exactly the Clopper-Pearson bound. Yes/no values
  get Clopper-Pearson below :data:`SMALL_N` and Wilson from it on; other values the expanded bootstrap
  percentile interval, and the t interval from :data:`.intervals.BOOTSTRAP_MAX` values on; all clipped
  to the range.
* **Scores without a bounded range** (lengths, perplexity): nothing bounds what an unseen value could
  be, so no interval below :data:`MIN_UNBOUNDED` values or from values that do not vary.
* **Paired differences** of a bounded score lie within +/- its width and follow the bounded rule on that
  range; those of an unbounded score, the unbounded rule.
* **Estimates with their own variance** (bias-corrected means, agreement statistics) go through
  :func:`checked`: 'too few' below their minimum (:data:`MIN_LABELS`, :data:`MIN_AGREEMENT`) and
  rather than an interval of zero width.

An :class:`Interval` without ends says ``why``, in words a person can act on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from scipy import special

from ..errors import ParameterError
from .intervals import BOOTSTRAP_MAX, RESAMPLES, TOO_FEW, t_interval, wilson_interval
from .stats import bootstrap_ci, chunk_rows, expanded_tail

#: Fewest values of a bounded score that get an interval.
MIN_BOUNDED = 2
#: Fewest values of a score without a bounded range that get an interval.
MIN_UNBOUNDED = 5
#: Below this many yes/no values the exact (Clopper-Pearson) bound is used; from it on, Wilson.
SMALL_N = 30
#: Fewest human labels (or labelled pairs) behind a bias-corrected (PPI++) estimate or a labels plan.
MIN_LABELS = 10
#: Fewest labelled cells behind an agreement statistic's interval (kappa, rank correlations, alpha).
MIN_AGREEMENT = 10

EXACT = "exact bound (Clopper-Pearson on the range)"
NO_SPREAD = "values do not vary: allows for an unseen share at either end"
WILSON = "Wilson"
BOOTSTRAP = "bootstrap percentile"
T_CLIPPED = "t, clipped to the range"
T = "t"
NAN = float("nan")
#: One sentence for a legend (CLI and pages): the rule in words.
RULE = (f"Intervals follow one small-sample rule (docs/statistics.md): inside the score's range and never of zero "
        f"width; below {SMALL_N} values, or when the values do not vary, wide enough to allow for an unseen share of "
        f"values at either end of the range (exact for yes/no values); 'too few' (with the reason) below "
        f"{MIN_BOUNDED} values, or for a score without a bounded range below {MIN_UNBOUNDED} values or without "
        "spread.")


@dataclass(frozen=True)
class Interval:
    """An interval of an estimate, or why there is none (``method`` 'too few' and ``why``)."""

    low: float
    high: float
    method: str
    why: str = ""

    @property
    def given(self) -> bool:
        return not self.why and math.isfinite(self.low) and math.isfinite(self.high)

    def text(self, digits: int = 4) -> str:
        """'[low, high]', or 'too few (why)'."""
        if not self.given:
            return f"{TOO_FEW} ({self.why})" if self.why else TOO_FEW
        return f"[{self.low:.{digits}f}, {self.high:.{digits}f}]"


def _count(n: int, what: str) -> str:
    """'1 value', '3 values', '1 labelled pair' ('what' is the plural)."""
    if n != 1:
        return f"{n} {what}"
    words = what.split(" ")
    plural = next((i for i, word in enumerate(words) if word.endswith("s")), None)
    if plural is not None:
        words[plural] = words[plural][:-1]
    return "1 " + " ".join(words)


def too_few(why: str) -> Interval:
    return Interval(NAN, NAN, TOO_FEW, why)


def bounded(bounds: tuple[float | None, float | None] | None) -> bool:
    """True when both ends of a range are declared and finite, with the top above the bottom."""
    if bounds is None:
        return False
    low, high = bounds
    return low is not None and high is not None and math.isfinite(low) and math.isfinite(high) and high > low


def exact_bound(n: int, total: float, confidence: float) -> tuple[float, float]:
    """Clopper-Pearson interval of a proportion from ``total`` successes in ``n`` (fractional ``total`` allowed,
    for values in [0, 1]): the beta quantiles scipy's ``binomtest(...).proportion_ci('exact')`` uses, taken from
    ``scipy.special`` (the same numbers as ``scipy.stats.beta.ppf``, without importing scipy.stats: ~1 CPU-s of
    every command that prints a summary)."""
    if n < 1:
        return NAN, NAN
    total = min(max(float(total), 0.0), float(n))
    tail = (1.0 - confidence) / 2
    low = 0.0 if total <= 0 else float(special.betaincinv(total, n - total + 1, tail))
    high = 1.0 if total >= n else float(special.betaincinv(total + 1, n - total, 1.0 - tail))
    return low, high


def _exact_on(bounds: tuple[float, float], n: int, total_scaled: float, confidence: float) -> tuple[float, float]:
    low, high = exact_bound(n, total_scaled, confidence)
    floor, ceiling = bounds
    return floor + low * (ceiling - floor), floor + high * (ceiling - floor)


def _check(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ParameterError(f"confidence must be between 0 and 1, got {confidence!r}")


def mean_interval(values: np.ndarray, *, bounds: tuple[float | None, float | None] | None, confidence: float,
                  rng: np.random.Generator, resamples: int = RESAMPLES) -> Interval:
    """The interval of the mean of ``values`` (NaN-free) under the rule of this module."""
    _check(confidence)
    values = np.asarray(values, dtype=float)
    return _interval(values, bounds, confidence, rng, resamples, what="values")


def delta_interval(diffs: np.ndarray, *, bounds: tuple[float | None, float | None] | None, confidence: float,
                   rng: np.random.Generator, resamples: int = RESAMPLES) -> Interval:
    """The interval of a mean paired difference (candidate - baseline) of a score with range ``bounds``."""
    _check(confidence)
    diffs = np.asarray(diffs, dtype=float)
    if bounded(bounds):
        width = float(bounds[1]) - float(bounds[0])  # type: ignore[index, arg-type]
        return _interval(diffs, (-width, width), confidence, rng, resamples, what="pairs")
    return _interval(diffs, None, confidence, rng, resamples, what="pairs")


def size_rng(seed: int, n: int) -> np.random.Generator:
    """The generator :func:`mean_intervals` draws the resamples of every sample of ``n`` values from."""
    return np.random.default_rng([int(seed), int(n)])


def mean_intervals(samples: Sequence[np.ndarray], bounds: Sequence[tuple[float | None, float | None] | None], *,
                   confidence: float, seed: int = 0, resamples: int = RESAMPLES) -> list[Interval]:
    """:func:`mean_interval` of many samples at once (the points of a history: thousands of samples of hundreds of
    values). The same rule; the bootstrap of every sample of n values resamples the same rows, drawn from
    ``size_rng(seed, n)``, so that one matrix product gives every sample's bootstrap means. Each result equals
    ``mean_interval(values, rng=size_rng(seed, n))`` up to rounding (the sums run in another order)."""
    _check(confidence)
    arrays = [np.asarray(v, dtype=float) for v in samples]
    ends: dict[int, tuple[float, float]] = {}
    by_size: dict[int, list[int]] = {}
    for i, values in enumerate(arrays):  # only samples the rule may bootstrap: 2 to BOOTSTRAP_MAX values with spread
        if MIN_BOUNDED <= values.size < BOOTSTRAP_MAX and np.ptp(values) > 0:
            by_size.setdefault(values.size, []).append(i)
    for n, members in by_size.items():
        counts = _resample_counts(size_rng(seed, n), n, resamples)
        tail = expanded_tail(n, confidence)
        for start in range(0, len(members), 2000):  # bounded memory: 2,000 samples x resamples means at a time
            part = members[start:start + 2000]
            means = np.stack([arrays[i] for i in part]) @ counts.T / n
            low, high = np.quantile(means, [tail, 1.0 - tail], axis=1)
            ends.update(zip(part, zip(low.tolist(), high.tolist())))
    out = []
    for i, values in enumerate(arrays):
        if i in ends:
            boot: Callable[[np.ndarray], tuple[float, float]] = lambda _values, found=ends[i]: found
        else:  # not reached by the rule (no spread, or too few or too many values): drawn one by one if it were
            boot = lambda sample: bootstrap_ci(sample, resamples=resamples, confidence=confidence,  # noqa: E731
                                               rng=size_rng(seed, sample.size))
        out.append(_interval(values, bounds[i], confidence, None, resamples, what="values", bootstrap=boot))
    return out


def _resample_counts(rng: np.random.Generator, n: int, resamples: int) -> np.ndarray:
    """(resamples x n) how often each row is drawn in each resample: the draws of :func:`.stats.bootstrap_means`."""
    counts = np.zeros((resamples, n))
    done = 0
    for rows in chunk_rows(resamples, n):
        drawn = rng.integers(0, n, size=(rows, n), dtype=np.int32)
        flat = (drawn + (np.arange(rows) * n)[:, None]).ravel()
        counts[done:done + rows] = np.bincount(flat, minlength=rows * n).reshape(rows, n)
        done += rows
    return counts


def _interval(values: np.ndarray, bounds: tuple[float | None, float | None] | None, confidence: float,
              rng: np.random.Generator | None, resamples: int, *, what: str,
              bootstrap: Callable[[np.ndarray], tuple[float, float]] | None = None) -> Interval:
    if bootstrap is None:
        def bootstrap(sample: np.ndarray) -> tuple[float, float]:
            return bootstrap_ci(sample, resamples=resamples, confidence=confidence, rng=rng)
    n = values.size
    if not bounded(bounds):
        if n < MIN_UNBOUNDED:
            return too_few(f"{_count(n, what)}; a score without a bounded range needs at least {MIN_UNBOUNDED}")
        if np.ptp(values) == 0:
            return too_few(f"all {n} {what} are {values[0]:g}; a score without a bounded range gives no "
                           "interval from values that do not vary")
        if n < BOOTSTRAP_MAX:
            return Interval(*bootstrap(values), BOOTSTRAP)
        return moments_interval(n, float(values.mean()), float(values.std(ddof=1)), float(values.sum()), False,
                                bounds=bounds, confidence=confidence)
    floor, ceiling = float(bounds[0]), float(bounds[1])  # type: ignore[index, arg-type]
    if n < MIN_BOUNDED:
        return too_few(f"{_count(n, what)}; at least {MIN_BOUNDED} are needed")
    scaled = np.clip((values - floor) / (ceiling - floor), 0.0, 1.0)
    mean = float(values.mean())
    if np.ptp(values) == 0:
        return _guarded(mean, mean, NO_SPREAD, mean, n, (floor, ceiling), confidence)
    binary = bool(np.all((scaled == 0.0) | (scaled == 1.0)))
    if binary and n < SMALL_N:
        return Interval(*_exact_on((floor, ceiling), n, float(scaled.sum()), confidence), EXACT)
    if binary:
        low, high = wilson_interval(int(round(scaled.sum())), n, confidence)
        low, high, method = floor + low * (ceiling - floor), floor + high * (ceiling - floor), WILSON
    elif n < BOOTSTRAP_MAX:
        (low, high), method = bootstrap(values), BOOTSTRAP
    else:
        low, high = t_interval(mean, float(values.std(ddof=1)), n, confidence)
        method = T
    if n >= SMALL_N:
        return Interval(max(floor, low), min(ceiling, high), method if method != T else T_CLIPPED)
    return _guarded(low, high, method, mean, n, (floor, ceiling), confidence)


def unseen_share(n: int, confidence: float) -> float:
    """The share of a population that n draws miss with probability (1 - confidence) / 2: 1 - (alpha/2)^(1/n),
    about 3.7 / n at 95% (the 'rule of three'); what the exact bound of n equal values allows for."""
    return 1.0 - ((1.0 - confidence) / 2) ** (1.0 / n)


def _guarded(low: float, high: float, method: str, mean: float, n: int, bounds: tuple[float, float],
             confidence: float) -> Interval:
    """An interval of a bounded mean widened, where it is narrower, to allow for an unseen share
    (:func:`unseen_share`) of values at either end of the range, then clipped to the range."""
    floor, ceiling = bounds
    share = unseen_share(n, confidence)
    guard_low, guard_high = mean - share * (mean - floor), mean + share * (ceiling - mean)
    widened = method != NO_SPREAD and (guard_low < low or guard_high > high)
    low, high = max(floor, min(low, guard_low)), min(ceiling, max(high, guard_high))
    return Interval(low, high, f"{method}, widened for an unseen share" if widened else method)


def moments_interval(n: int, mean: float, std: float, total: float, binary: bool, *,
                     bounds: tuple[float | None, float | None] | None, confidence: float) -> Interval:
    """The rule from a sample's count, mean, standard deviation and sum (SQL aggregates of a large sample);
    below :data:`.intervals.BOOTSTRAP_MAX` values, call :func:`mean_interval` with the values instead."""
    _check(confidence)
    if n < BOOTSTRAP_MAX:
        raise ValueError("below BOOTSTRAP_MAX values the interval needs the values: call mean_interval")
    if not bounded(bounds):
        if std == 0:
            return too_few(f"all {n} values are {mean:g}; a score without a bounded range gives no interval "
                           "from values that do not vary")
        low, high = t_interval(mean, std, n, confidence)
        floor = None if bounds is None else bounds[0]
        ceiling = None if bounds is None else bounds[1]
        return Interval(low if floor is None else max(floor, low), high if ceiling is None else min(ceiling, high),
                        T_CLIPPED if bounds is not None and (floor is not None or ceiling is not None) else T)
    floor, ceiling = float(bounds[0]), float(bounds[1])  # type: ignore[index, arg-type]
    if std == 0:
        return _guarded(mean, mean, NO_SPREAD, mean, n, (floor, ceiling), confidence)
    if binary and (floor, ceiling) == (0.0, 1.0):
        return Interval(*wilson_interval(int(round(total)), n, confidence), WILSON)
    low, high = t_interval(mean, std, n, confidence)
    return Interval(max(floor, low), min(ceiling, high), T_CLIPPED)


def checked(low: float, high: float, method: str, *, n: int, minimum: int, what: str,
            bounds: tuple[float | None, float | None] | None = None) -> Interval:
    """An interval computed elsewhere (a normal or bootstrap interval) held to the rule: 'too few' below
    ``minimum`` ``what`` (e.g. labels), or when it has no width; clipped to ``bounds`` otherwise."""
    if n < minimum:
        return too_few(f"{_count(n, what)}; at least {minimum} are needed")
    if not (math.isfinite(low) and math.isfinite(high)):
        return too_few(f"no interval from {_count(n, what)}")
    if high - low <= 1e-12 * max(1.0, abs(low), abs(high)):
        return too_few(f"the {n} {what} do not vary, so the interval would have zero width")
    if bounds is not None:
        floor, ceiling = bounds
        low = low if floor is None else max(float(floor), low)
        high = high if ceiling is None else min(float(ceiling), high)
    return Interval(low, high, method)
