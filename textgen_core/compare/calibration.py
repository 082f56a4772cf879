"""Bias-corrected means from a judge and a few human labels: prediction-powered inference (PPI++).

A judge scores every cell; people label a subset. The judge-only mean carries
the judge's bias; the labelled mean alone is unbiased but wide. PPI++
(Angelopoulos, Duchi and Zrnic, 2023) combines them::

    theta = mean(Y) + lam * (mean(f_all) - mean(f_lab))

with ``Y`` the human values and ``f`` the judge's, over the labelled cells
(``lab``) and every judge-scored cell (``all``). Its variance is
``lam^2 Var(f_all) / N + Var(Y - lam f_lab) / n``, and the power-tuning
parameter that minimises it is ``lam = Cov(Y, f_lab) / ((1 + n / N) Var(f_all))``,
clipped to [0, 1]: 0 ignores the judge (the labelled mean), 1 is the classic
difference estimator. The interval is normal (z), clipped to the score's range.
The labelled cells must be a uniformly random subset; when each labelled cell's
inclusion probability is known (stratified sampling), the rectifier's mean is
the ratio (Hajek) estimate sum(r / pi) / sum(1 / pi), with its linearised
variance: only the probabilities' relative sizes matter, so an estimate cannot
leave the range because the probabilities do not add up to the run. A subset
picked by disagreement has no known probability: no estimate is given for it,
and the caller says why. The small-sample rule (:mod:`.small_sample`) holds:
no interval from fewer than :data:`MIN_LABELS` labels, or when human - lambda x
judge does not vary over them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from ..errors import ParameterError
from .small_sample import MIN_LABELS, checked

#: Probabilities whose sum of 1/pi is off the run's size by more than this factor are named in the note.
WEIGHTS_OFF = 2.0


@dataclass(frozen=True)
class Calibrated:
    """A bias-corrected mean beside the judge-only one."""

    estimate: float
    ci_low: float
    ci_high: float
    #: The power-tuning parameter used (0: labels only; 1: the difference estimator).
    lam: float
    #: Labelled cells used, and judge-scored cells in all.
    n_labels: int
    n_judged: int
    judge_mean: float
    judge_ci_low: float
    judge_ci_high: float
    #: 'PPI++' for a uniformly random subset, 'PPI++ with inverse-probability weights' for known probabilities;
    #: 'too few' when no interval is given.
    method: str
    #: Why there is no interval, or what is odd about the input ('' when nothing is).
    note: str = ""


def power_tuning(human: np.ndarray, judge_lab: np.ndarray, judge_all: np.ndarray) -> float:
    """The variance-minimising lambda of PPI++ for a mean, clipped to [0, 1]; 0 when the judge does not vary."""
    n, big_n = human.size, judge_all.size
    variance = float(np.var(judge_all, ddof=1)) if big_n > 1 else 0.0
    if n < 2 or variance <= 0.0:
        return 0.0
    covariance = float(np.cov(human, judge_lab, ddof=1)[0, 1])
    return float(np.clip(covariance / ((1.0 + n / big_n) * variance), 0.0, 1.0))


def ppi_mean(human: np.ndarray, judge_lab: np.ndarray, judge_all: np.ndarray, *, confidence: float = 0.95,
             lam: float | None = None, probabilities: np.ndarray | None = None,
             bounds: tuple[float | None, float | None] | None = None, minimum: int = MIN_LABELS) -> Calibrated:
    """PPI++ estimate and interval of the mean human value, with the judge-only mean and its t interval.

    ``human`` and ``judge_lab`` pair by position over the labelled cells;
    ``judge_all`` holds the judge's value of every cell of the population (the
    labelled ones included). ``lam`` fixes the tuning parameter (default: tuned).
    ``probabilities``: each labelled cell's inclusion probability, for
    inverse-probability weighting (ratio estimate); None for a uniformly random subset.
    ``bounds``: the range of the estimate (the score's, or +/- its width for a
    difference); the estimate and interval are clipped to it. Below ``minimum``
    labels (at least 2) the estimate is given without an interval.
    """
    human, judge_lab = np.asarray(human, dtype=float), np.asarray(judge_lab, dtype=float)
    judge_all = np.asarray(judge_all, dtype=float)
    if human.shape != judge_lab.shape or human.ndim != 1:
        raise ParameterError(f"human and judge values must pair up, got {human.shape} and {judge_lab.shape}")
    if not 0.0 < confidence < 1.0:
        raise ParameterError(f"confidence must be between 0 and 1, got {confidence!r}")
    if np.isnan(human).any() or np.isnan(judge_lab).any() or np.isnan(judge_all).any():
        raise ParameterError("calibration needs scored values only: drop unscored cells first")
    n, big_n = human.size, judge_all.size
    z = float(special.ndtri(0.5 + confidence / 2))
    judge_mean, judge_low, judge_high = _judge_only(judge_all, confidence)
    nan = float("nan")
    if n < 2 or big_n < 1:
        return Calibrated(nan, nan, nan, nan, n, big_n, judge_mean, judge_low, judge_high, "too few",
                          f"{n} labels; at least {max(minimum, 2)} are needed")
    tuned = power_tuning(human, judge_lab, judge_all) if lam is None else float(lam)
    spread_all = float(np.var(judge_all, ddof=1)) if big_n > 1 else 0.0
    rectifier = human - tuned * judge_lab
    note = ""
    if probabilities is None:
        estimate = float(tuned * judge_all.mean() + rectifier.mean())
        variance = tuned ** 2 * spread_all / big_n + float(np.var(rectifier, ddof=1)) / n
        method = "PPI++"
    else:
        pi = np.asarray(probabilities, dtype=float)
        if pi.shape != human.shape or not np.all((pi > 0) & (pi <= 1)):
            raise ParameterError("inclusion probabilities must pair with the labels and lie in (0, 1]")
        weights = 1.0 / pi
        # Hajek (ratio) mean of the rectifier, with its linearised Poisson-sampling variance
        ratio = float(np.sum(rectifier * weights) / np.sum(weights))
        estimate = float(tuned * judge_all.mean() + ratio)
        centred = rectifier - ratio
        variance = (tuned ** 2 * spread_all / big_n
                    + float(np.sum((1.0 - pi) * weights ** 2 * centred ** 2)) / float(np.sum(weights)) ** 2)
        method = "PPI++ with inverse-probability weights"
        represented = float(np.sum(weights))
        if not 1.0 / WEIGHTS_OFF <= represented / big_n <= WEIGHTS_OFF:
            note = (f"the labels' probabilities stand for {represented:,.0f} cells (sum of 1/p) where the run has "
                    f"{big_n:,}: check how they were drawn; the ratio estimate uses only their relative sizes")
    floor, ceiling = bounds if bounds is not None else (None, None)
    clipped = min(max(estimate, floor if floor is not None else -math.inf), ceiling if ceiling is not None
                  else math.inf)
    if np.ptp(rectifier) <= 1e-12 * max(1.0, float(np.abs(rectifier).max())):
        why = (f"human - {tuned:.2f} x judge is {rectifier[0]:g} on every one of the {n} labels: they do not "
               "vary, so the interval's spread is unknown; label more cells")
        return Calibrated(clipped, nan, nan, tuned, n, big_n, judge_mean, judge_low, judge_high, "too few",
                          "; ".join(filter(None, [why, note])))
    half = z * math.sqrt(max(variance, 0.0))
    ruled = checked(estimate - half, estimate + half, method, n=n, minimum=minimum, what="labels", bounds=bounds)
    return Calibrated(clipped, ruled.low, ruled.high, tuned, n, big_n, judge_mean, judge_low, judge_high,
                      ruled.method, "; ".join(filter(None, [ruled.why, note])))


def _judge_only(judge_all: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """Mean of the judge's values with its t interval: what a report without people would say."""
    if judge_all.size == 0:
        return float("nan"), float("nan"), float("nan")
    mean = float(judge_all.mean())
    if judge_all.size < 2:
        return mean, float("nan"), float("nan")
    half = float(special.stdtrit(judge_all.size - 1, 0.5 + confidence / 2)) * float(
        np.std(judge_all, ddof=1)) / math.sqrt(judge_all.size)
    return mean, mean - half, mean + half


def labels_needed(residual_sd: float, half_width: float, *, judge_sd: float = 0.0, lam: float = 1.0,
                  n_judged: float = math.inf, confidence: float = 0.95) -> float:
    """Labelled cells that bring the PPI++ interval's half-width down to ``half_width``.

    From the observed spread of ``human - lam * judge`` (``residual_sd``) and of
    the judge over the ``n_judged`` cells; inf when the judge's own term alone is
    wider than the target (more judged cells are needed, not more labels).
    """
    if not (math.isfinite(half_width) and half_width > 0):
        raise ParameterError(f"the target half-width must be a positive number, got {half_width!r}")
    if not (math.isfinite(residual_sd) and residual_sd >= 0):
        raise ParameterError(f"the residual spread must be zero or positive, got {residual_sd!r}")
    z = float(special.ndtri(0.5 + confidence / 2))
    room = (half_width / z) ** 2 - (lam * judge_sd) ** 2 / n_judged
    if room <= 0:
        return math.inf
    return float(max(MIN_LABELS, math.ceil(residual_sd ** 2 / room)))  # never below the rule's minimum
