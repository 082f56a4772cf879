"""Model against model, per score: means, paired delta with a bootstrap interval, a test, wins."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import ParameterError
from ..store import Store
from .pairing import Pairs, RunScores, load_run_scores, pair
from .stats import bootstrap_ci, holm_adjust, permutation_test, rng_for, win_tie_loss

DIRECTIONS = ("higher", "lower", "none")
CI_METHOD = "paired bootstrap, expanded percentile (Hesterberg 2015); datums resampled with replacement"


@dataclass(frozen=True)
class ComparisonRow:
    """One score, baseline against one candidate, over the datums scored for both."""

    score: str
    direction: str
    n: int
    baseline_mean: float
    candidate_mean: float
    #: candidate - baseline, raw (not flipped for lower-is-better scores).
    delta: float
    ci_low: float
    ci_high: float
    p_value: float
    p_adjusted: float | None
    #: Counted in the score's direction: a win is a datum where the candidate is better.
    wins: int
    ties: int
    losses: int
    missing_baseline: int
    missing_candidate: int
    #: Which test gave p_value, and whether it was exact or Monte Carlo.
    test: str


COLUMNS = ["baseline", "candidate", *(f.name for f in fields(ComparisonRow))]


def compare_pairs(pairs: Pairs, *, score: str, direction: str, rng: np.random.Generator,
                  resamples: int = 2000, tie_tolerance: float = 1e-9,
                  confidence: float = 0.95) -> ComparisonRow:
    """The statistics of one paired sample; p_adjusted is left to the caller."""
    diffs = pairs.diffs
    n = int(diffs.size)
    boot_rng, test_rng = rng.spawn(2)
    ci_low, ci_high = bootstrap_ci(diffs, resamples=resamples, confidence=confidence, rng=boot_rng)
    p_value, test = permutation_test(diffs, resamples=resamples, rng=test_rng, zero_tolerance=tie_tolerance)
    wins, ties, losses = win_tie_loss(diffs, direction, tie_tolerance)
    nan = float("nan")
    return ComparisonRow(
        score=score, direction=direction, n=n,
        baseline_mean=float(pairs.baseline.mean()) if n else nan,
        candidate_mean=float(pairs.candidate.mean()) if n else nan,
        delta=float(diffs.mean()) if n else nan,
        ci_low=ci_low, ci_high=ci_high, p_value=p_value, p_adjusted=None,
        wins=wins, ties=ties, losses=losses,
        missing_baseline=pairs.missing_baseline, missing_candidate=pairs.missing_candidate, test=test,
    )


def compare_models(store: Store, run_id: int, baseline: str, candidate: str | Sequence[str] | None = None, *,
                   scores: Sequence[str] | None = None, resamples: int = 2000, seed: int = 0,
                   tie_tolerance: float = 1e-9, holm: bool = True, confidence: float = 0.95,
                   directions: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per (candidate, score): ``baseline``, ``candidate`` and the :class:`ComparisonRow` fields.

    Datums are paired by id; only datums scored for both models are compared.
    ``candidate`` defaults to every other model of the run. With ``holm``,
    ``p_adjusted`` is Holm-adjusted over all rows of the table. ``directions``
    overrides the registry's direction of a score. Each (candidate, score) draws
    from its own seeded stream, so adding a score does not change the others.
    Settings, a note on multiple comparisons and the scores whose direction
    nobody declared (``undeclared``, counted as higher is better) are in ``frame.attrs``.
    """
    _check_settings(resamples, seed, tie_tolerance, confidence)
    data = load_run_scores(store, run_id, scores=scores)
    data.check_model(baseline)
    candidates = _candidates(data, baseline, candidate)
    names = list(scores) if scores is not None else _scores_of(data, [baseline, *candidates])
    data.check_scores(names)
    direction = {name: _direction(name, directions) for name in names}
    rows: list[dict] = []
    for other in candidates:
        for name in names:
            row = compare_pairs(pair(data, baseline, other, name), score=name, direction=direction[name],
                                rng=rng_for(seed, baseline, other, name), resamples=resamples,
                                tie_tolerance=tie_tolerance, confidence=confidence)
            rows.append({"baseline": baseline, "candidate": other, **asdict(row)})
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame["p_adjusted"] = holm_adjust(frame["p_value"].tolist()) if holm else np.nan
    frame["p_adjusted"] = frame["p_adjusted"].astype(float)
    frame.attrs.update(
        run_id=run_id, baseline=baseline, candidates=candidates, scores=names, seed=seed, resamples=resamples,
        confidence=confidence, tie_tolerance=tie_tolerance, ci_method=CI_METHOD,
        holm=holm, note=_multiplicity_note(int(frame["p_value"].notna().sum()), holm),
        undeclared=_undeclared(names, directions),
    )
    return frame


def paired_differences(store: Store, run_id: int, baseline: str, candidate: str, score: str) -> pd.DataFrame:
    """datum_id, baseline, candidate, diff (candidate - baseline) over datums scored for both, in dataset order.

    ``attrs`` holds the score's direction and how many datums each model is missing.
    """
    data = load_run_scores(store, run_id, scores=[score])
    data.check_model(baseline)
    data.check_model(candidate)
    data.check_scores([score])
    pairs = pair(data, baseline, candidate, score)
    frame = pd.DataFrame({"datum_id": pd.Series(pairs.datum_ids, dtype=object), "baseline": pairs.baseline,
                          "candidate": pairs.candidate, "diff": pairs.diffs})
    frame.attrs.update(score=score, direction=_direction(score, None), missing_baseline=pairs.missing_baseline,
                       missing_candidate=pairs.missing_candidate)
    return frame


def _check_settings(resamples: int, seed: int, tie_tolerance: float, confidence: float) -> None:
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 1:
        raise ParameterError(f"resamples must be a whole number of at least 1, got {resamples!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ParameterError(f"seed must be a whole number of at least 0, got {seed!r}")
    if not (math.isfinite(tie_tolerance) and tie_tolerance >= 0):
        raise ParameterError(f"tie tolerance must be zero or a positive number, got {tie_tolerance!r}")
    if not 0.0 < confidence < 1.0:
        raise ParameterError(f"confidence must be between 0 and 1, got {confidence!r}")


def _candidates(data: RunScores, baseline: str, candidate: str | Sequence[str] | None) -> list[str]:
    if candidate is None:
        chosen = [m for m in data.models if m != baseline]
    else:
        chosen = list(dict.fromkeys([candidate] if isinstance(candidate, str) else candidate))
    for model in chosen:
        data.check_model(model)
        if model == baseline:
            raise ParameterError(f"model {model!r} is the baseline; choose another candidate")
    if not chosen:
        raise ParameterError(f"run {data.run_id} has no model to compare with the baseline {baseline!r}")
    return chosen


def _scores_of(data: RunScores, models: Sequence[str]) -> list[str]:
    names = data.values.loc[data.values["model"].isin(models), "score"]
    found = list(dict.fromkeys(names))
    if not found:
        raise ParameterError(f"run {data.run_id} has no scored values for {', '.join(models)}")
    return found


def _direction(score: str, overrides: Mapping[str, str] | None) -> str:
    """The score's direction: an override, else the registry; 'higher' if the registry cannot say."""
    if overrides and score in overrides:
        value = overrides[score]
        if value not in DIRECTIONS:
            raise ParameterError(f"direction of {score!r} must be one of {', '.join(DIRECTIONS)}, got {value!r}")
        return value
    try:
        from ..metrics.registry import direction_of

        value = direction_of(score)
    except Exception:  # the registry is optional here: a broken declaration must not stop a comparison
        return "higher"
    return value if value in DIRECTIONS else "higher"


def _undeclared(scores: Sequence[str], overrides: Mapping[str, str] | None) -> list[str]:
    """Scores whose direction neither an override nor the metric registry declares."""
    found = []
    for score in scores:
        if overrides and score in overrides:
            continue
        try:
            from ..metrics.registry import get_metric

            get_metric(score)
        except Exception:  # unknown to the registry, or the registry cannot load
            found.append(score)
    return found


def _multiplicity_note(comparisons: int, holm: bool) -> str:
    if comparisons <= 1:
        return ""
    if holm:
        return (f"{comparisons} comparisons are made; p_adjusted is Holm-adjusted over all of them "
                "(family-wise error rate).")
    return (f"{comparisons} comparisons are made; the p-values are not adjusted, so some will be small by "
            "chance: use the Holm correction to control the family-wise error rate.")
