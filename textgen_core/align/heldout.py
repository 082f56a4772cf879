"""Agreement of a judge with people on the held-out cells, and a paired test of two judge versions on them.

The statistic follows the score's kind: the quadratic-weighted kappa for an ordinal rating (1-5), Cohen's
kappa for yes/no and label scores (whose cell value is 1 for a passing label and 0 otherwise), with
Matthews' correlation beside it. Intervals are percentile bootstraps of the cells, held to the shared
small-sample rule (:mod:`textgen_core.compare.small_sample`). The paired test resamples the same held-out
cells for both versions at once, so their difference keeps its pairing.

Kappa over many resamples is computed from one confusion matrix per resample, in numpy (sklearn's
``cohen_kappa_score`` and ``matthews_corrcoef`` are the references in tests/align/).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..compare.small_sample import MIN_AGREEMENT, Interval, checked, too_few
from ..errors import ParameterError

#: Bootstrap resamples of an interval and of the paired test.
RESAMPLES = 2000
#: One-sided level of the paired test (divided among the candidates judged: Bonferroni).
ALPHA = 0.05


def codes(values: Sequence[float], categories: Sequence[float]) -> np.ndarray:
    """Each value's position among ``categories``; a value off the scale is refused."""
    cats = np.asarray(categories, dtype=float)
    found = np.asarray(values, dtype=float)
    at = np.searchsorted(cats, found)
    at = np.clip(at, 0, cats.size - 1)
    bad = cats[at] != found
    if bad.any():
        raise ParameterError(f"value {found[int(np.argmax(bad))]:g} is not on the scale "
                             f"({', '.join(f'{c:g}' for c in cats)})")
    return at


def _confusions(a: np.ndarray, b: np.ndarray, k: int, draws: np.ndarray) -> np.ndarray:
    """(resamples, k, k) counts of (a, b) pairs over each row of cell indices ``draws``."""
    pairs = a[draws] * k + b[draws]
    offset = np.arange(draws.shape[0])[:, None] * (k * k)
    counts = np.bincount((pairs + offset).ravel(), minlength=draws.shape[0] * k * k)
    return counts.reshape(draws.shape[0], k, k).astype(float)


def _weights(k: int, weighted: bool) -> np.ndarray:
    distance = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    return distance ** 2 if weighted else (distance > 0).astype(float)


def kappas(confusions: np.ndarray, weighted: bool) -> np.ndarray:
    """Kappa (quadratic-weighted or plain) of each confusion matrix; NaN when chance agreement is total."""
    k = confusions.shape[-1]
    n = confusions.sum(axis=(1, 2))
    expected = confusions.sum(axis=2)[:, :, None] * confusions.sum(axis=1)[:, None, :] / n[:, None, None]
    w = _weights(k, weighted)
    chance = (w * expected).sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 1.0 - (w * confusions).sum(axis=(1, 2)) / chance
    return np.where(chance > 0, out, np.nan)


def mccs(confusions: np.ndarray) -> np.ndarray:
    """Matthews' correlation (multi-class form) of each confusion matrix (rows: people, columns: judge);
    0 where it is undefined, as scikit-learn has it."""
    s = confusions.sum(axis=(1, 2))
    correct = np.trace(confusions, axis1=1, axis2=2)
    true, pred = confusions.sum(axis=2), confusions.sum(axis=1)
    cov = correct * s - (true * pred).sum(axis=1)
    denominator = np.sqrt((s ** 2 - (pred ** 2).sum(axis=1)) * (s ** 2 - (true ** 2).sum(axis=1)))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, cov / denominator, 0.0)


@dataclass(frozen=True)
class Agreement:
    """A judge version's agreement with people on the held-out cells."""

    statistic: str
    value: float
    interval: Interval
    #: Matthews' correlation (yes/no and label scores only; None for ratings).
    mcc: float | None
    n: int

    def text(self) -> str:
        value = "undefined" if math.isnan(self.value) else f"{self.value:.3f}"
        extra = "" if self.mcc is None else f", MCC {self.mcc:.3f}"
        return f"{self.statistic} {value} {self.interval.text(3)}{extra}"


@dataclass(frozen=True)
class PairedTest:
    """A candidate against the current version on the same held-out cells: the difference of their
    statistics, its bootstrap interval, and the one-sided p-value that the candidate is no better."""

    delta: float
    interval: Interval
    p_not_better: float
    n: int
    #: Cells whose value the candidate changed.
    changed: int


def statistic_name(weighted: bool) -> str:
    return "weighted kappa" if weighted else "kappa"


def draws_for(n: int, rng: np.random.Generator, resamples: int = RESAMPLES) -> np.ndarray:
    """Cell indices of the resamples (drawn once, shared by every version of a comparison)."""
    return rng.integers(0, n, size=(resamples, n))


def agreement(people: np.ndarray, judge: np.ndarray, k: int, weighted: bool, draws: np.ndarray,
              confidence: float = 0.95) -> Agreement:
    """Agreement of ``judge`` with ``people`` (both category codes of the held-out cells)."""
    n = int(people.size)
    name = statistic_name(weighted)
    if n == 0:
        return Agreement(name, float("nan"), too_few("no held-out cell"), None, 0)
    whole = _confusions(people, judge, k, np.arange(n)[None, :])
    value = float(kappas(whole, weighted)[0])
    boot = kappas(_confusions(people, judge, k, draws), weighted)
    boot = boot[~np.isnan(boot)]
    tail = (1.0 - confidence) / 2
    if boot.size < draws.shape[0] / 2:
        interval = too_few("kappa is undefined in most resamples (one side gives one value)")
    elif n >= MIN_AGREEMENT and np.ptp(boot) == 0:
        interval = too_few(f"{name} is {boot[0]:.3f} in every resample of the {n} held-out cells, so the interval "
                           "would have zero width")
    else:
        interval = checked(float(np.quantile(boot, tail)), float(np.quantile(boot, 1 - tail)), "bootstrap percentile",
                           n=n, minimum=MIN_AGREEMENT, what="held-out cells", bounds=(-1.0, 1.0))
    mcc = None if weighted else float(mccs(whole)[0])
    return Agreement(name, value, interval, mcc, n)


def paired(people: np.ndarray, current: np.ndarray, candidate: np.ndarray, k: int, weighted: bool,
           draws: np.ndarray, confidence: float = 0.95) -> PairedTest:
    """The candidate's statistic minus the current version's, resampling the same cells for both."""
    n = int(people.size)
    changed = int(np.sum(current != candidate))
    if n == 0:
        return PairedTest(float("nan"), too_few("no held-out cell"), float("nan"), 0, 0)
    everything = np.arange(n)[None, :]
    delta = float(kappas(_confusions(people, candidate, k, everything), weighted)[0]
                  - kappas(_confusions(people, current, k, everything), weighted)[0])
    if changed == 0:
        return PairedTest(0.0, too_few("the candidate gives every held-out cell the current version's value"),
                          1.0, n, 0)
    boot = (kappas(_confusions(people, candidate, k, draws), weighted)
            - kappas(_confusions(people, current, k, draws), weighted))
    boot = boot[~np.isnan(boot)]
    if boot.size < draws.shape[0] / 2 or math.isnan(delta):
        return PairedTest(delta, too_few("kappa is undefined in most resamples"), float("nan"), n, changed)
    tail = (1.0 - confidence) / 2
    interval = checked(float(np.quantile(boot, tail)), float(np.quantile(boot, 1 - tail)), "paired bootstrap",
                       n=n, minimum=MIN_AGREEMENT, what="held-out cells", bounds=(-2.0, 2.0))
    p = float((np.sum(boot <= 0.0) + 1) / (boot.size + 1))
    return PairedTest(delta, interval, p, n, changed)


def verdict(test: PairedTest, candidates: int, alpha: float = ALPHA) -> tuple[bool, str]:
    """(accepted, why): better in point estimate, and not worse by the paired test at ``alpha`` shared among
    ``candidates`` (the share of resamples where it is no better is at most alpha / candidates)."""
    level = alpha / max(1, candidates)
    if test.n < MIN_AGREEMENT:
        return False, f"too few held-out cells ({test.n}; at least {MIN_AGREEMENT} are needed)"
    if test.changed == 0:
        return False, "no change: the candidate gives every held-out cell the current version's value"
    if math.isnan(test.delta) or math.isnan(test.p_not_better):
        return False, "the difference is undefined (kappa needs more than one value on each side)"
    if test.delta <= 0:
        return False, f"not better: the difference is {test.delta:+.3f}"
    if test.p_not_better > level:
        return False, (f"better by {test.delta:+.3f}, but not beyond chance: p = {test.p_not_better:.4f} > "
                       f"{level:.4f} ({alpha:g} shared among {candidates} candidates)")
    return True, f"better by {test.delta:+.3f}, p = {test.p_not_better:.4f} <= {level:.4f}"
