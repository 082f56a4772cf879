"""Model against model, per score: means, paired delta with an interval, a test, a verdict, missingness."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import ParameterError
from ..judge.metrics.pairwise_preference import NAME as PAIRWISE
from ..store import Store
from .intervals import BOOTSTRAP_MAX
from .pairing import Pairs, RunScores, load_run_scores, pair
from .power import datums_needed, mde
from .run_cache import RUNS
from .row_notes import is_judge, label_counts, row_warnings
from .small_sample import delta_interval
from .stats import holm_adjust, permutation_test, rng_for, smallest_p, win_tie_loss
from .verdicts import APART, HOLM, NOT_SIGNIFICANT, decide, mcnemar_exact, worst_value

DIRECTIONS = ("higher", "lower", "none")
CI_METHOD = ("paired bootstrap, expanded percentile (Hesterberg 2015), datums resampled with replacement; "
             f"t interval from {BOOTSTRAP_MAX:,} pairs on; held to the small-sample rule (docs/statistics.md): "
             "never of zero width, 'too few' with its reason where none can be honest")
COUNTS = ("scored", "unscored", "empty", "missing")
#: Why a requested score nobody could score is inconclusive.
NO_SCORED_DATUMS = "no scored datums"


@dataclass(frozen=True)
class ComparisonRow:
    """One score, baseline against one candidate, over the datums scored for both."""

    score: str
    direction: str
    #: 'holm': in the Holm family; 'apart': a score without a better direction, tested on its own.
    family: str
    n: int
    baseline_mean: float
    candidate_mean: float
    #: candidate - baseline, raw (not flipped for lower-is-better scores).
    delta: float
    ci_low: float
    ci_high: float
    p_value: float
    p_adjusted: float | None
    #: better / worse / no difference / inconclusive, and why when it is not plain.
    verdict: str
    why: str
    #: Minimum detectable difference at 80% power and the run's alpha, for the observed paired spread.
    mde: float
    #: Standard deviation of the paired differences (NaN below 2 pairs): what the planner sizes samples from.
    spread: float
    #: Counted in the score's direction: a win is a datum where the candidate is better.
    wins: int
    ties: int
    losses: int
    #: Per model, over the dataset's datums: scored + unscored + missing (no cell) = datums;
    #: empty counts rows with an empty prediction, whatever the metric made of them.
    scored_baseline: int
    unscored_baseline: int
    empty_baseline: int
    missing_baseline: int
    scored_candidate: int
    unscored_candidate: int
    empty_candidate: int
    missing_candidate: int
    #: Exact McNemar p of "has a score" (baseline against candidate, paired by datum).
    missingness_p: float
    #: The comparison over every datum with missing and unscored cells counted as the worst value.
    worst: float
    sensitivity_delta: float
    sensitivity_ci_low: float
    sensitivity_ci_high: float
    sensitivity_p: float
    #: Which test gave p_value: exact, Monte Carlo (with its draws) or normal approximation.
    test: str
    #: Why there is no interval ('' when there is one): the small-sample rule's reason.
    ci_note: str = ""
    #: Warnings that go wherever this row is shown (a judge that never varies, too few labels), '; '-joined.
    warnings: str = ""


COLUMNS = ["baseline", "candidate", *(f.name for f in fields(ComparisonRow))]
NAN = float("nan")


def compare_pairs(pairs: Pairs, *, score: str, direction: str, rng: np.random.Generator,
                  resamples: int = 2000, tie_tolerance: float = 1e-9, confidence: float = 0.95,
                  family: int = 1, worst: float = NAN,
                  bounds: tuple[float | None, float | None] | None = None) -> ComparisonRow:
    """The statistics of one paired sample; p_adjusted, the verdict and the counts are left to the caller.

    ``family`` is the number of comparisons the p-value must resolve (see
    :func:`.stats.permutation_test`). With a finite ``worst`` and datums that
    lack a score, the sensitivity fields repeat the comparison over every datum
    with the missing values counted as ``worst``. ``bounds``: the score's range, for the small-sample rule
    of the interval (None: a score without a bounded range).
    """
    diffs = pairs.diffs
    n = int(diffs.size)
    alpha = 1.0 - confidence
    #: Spread of the paired differences; NaN below 2 pairs. Zero spread says nothing about the next datums,
    #: so the mde and the planner stay empty then.
    spread = float(diffs.std(ddof=1)) if n >= 2 else NAN
    boot_rng, test_rng, sens_boot, sens_test = rng.spawn(4)
    interval = delta_interval(diffs, bounds=bounds, resamples=resamples, confidence=confidence, rng=boot_rng)
    p_value, test = permutation_test(diffs, resamples=resamples, rng=test_rng, zero_tolerance=tie_tolerance,
                                     family=family, alpha=alpha)
    wins, ties, losses = win_tie_loss(diffs, direction, tie_tolerance)
    lacking = pairs.baseline_all.size > n and math.isfinite(worst)
    sens = NAN, NAN, NAN, NAN
    if lacking:
        filled = pairs.filled(worst)
        around = delta_interval(filled, bounds=bounds, resamples=resamples, confidence=confidence, rng=sens_boot)
        low, high = around.low, around.high
        p, _ = permutation_test(filled, resamples=resamples, rng=sens_test, zero_tolerance=tie_tolerance,
                                family=family, alpha=alpha)
        sens = float(filled.mean()), low, high, p
    base_only, cand_only = pairs.scored_only_by()
    return ComparisonRow(
        score=score, direction=direction, family=HOLM if direction != "none" else APART, n=n,
        baseline_mean=float(pairs.baseline.mean()) if n else NAN,
        candidate_mean=float(pairs.candidate.mean()) if n else NAN,
        delta=float(diffs.mean()) if n else NAN, ci_low=interval.low, ci_high=interval.high, p_value=p_value,
        p_adjusted=None, verdict="", why="",
        mde=mde(spread, n, alpha) if spread > 0 else NAN,
        spread=spread,
        wins=wins, ties=ties, losses=losses,
        scored_baseline=int(np.count_nonzero(~np.isnan(pairs.baseline_all))), unscored_baseline=0,
        empty_baseline=0, missing_baseline=pairs.missing_baseline,
        scored_candidate=int(np.count_nonzero(~np.isnan(pairs.candidate_all))), unscored_candidate=0,
        empty_candidate=0, missing_candidate=pairs.missing_candidate,
        missingness_p=mcnemar_exact(base_only, cand_only), worst=worst if lacking else NAN,
        sensitivity_delta=sens[0], sensitivity_ci_low=sens[1], sensitivity_ci_high=sens[2], sensitivity_p=sens[3],
        test=test, ci_note=interval.why,
    )


def compare_models(store: Store, run_id: int, baseline: str, candidate: str | Sequence[str] | None = None, *,
                   scores: Sequence[str] | None = None, resamples: int = 2000, seed: int = 0,
                   tie_tolerance: float = 1e-9, holm: bool = True, confidence: float = 0.95,
                   directions: Mapping[str, str] | None = None, holm_undirected: bool = False,
                   plan: float | None = None) -> pd.DataFrame:
    """One row per (candidate, score): ``baseline``, ``candidate`` and the :class:`ComparisonRow` fields.

    Datums are paired by id; the delta, interval and test use the datums scored
    for both models, and the counts say what the others are. ``candidate``
    defaults to every other model of the run. With ``holm``, ``p_adjusted`` is
    Holm-adjusted over the rows of scores with a better direction (the family);
    scores without one are listed after them, tested alone, unless
    ``holm_undirected``. The verdict uses ``p_adjusted`` (``p_value`` without
    Holm) at alpha = 1 - ``confidence``. ``directions`` overrides the registry's
    direction of a score. With ``plan`` (a difference you care about), the
    ``n_needed`` column says how many datums would detect it at 80% power.
    Each (candidate, score) draws from its own seeded stream, so adding a score
    does not change the others. Settings, notes and warnings are in ``frame.attrs``.
    """
    check_settings(resamples, seed, tie_tolerance, confidence)
    data = load_run_scores(store, run_id, scores=scores)
    data.check_model(baseline)
    candidates = candidates_of(data, baseline, candidate)
    names = list(dict.fromkeys(scores)) if scores is not None else scores_of(data, [baseline, *candidates])
    counts = _counts(data)
    unscorable = _unscorable(data, names, counts)
    data.load([name for name in names if name not in unscorable])
    direction = {name: score_direction(name, directions) for name in names}
    in_family = [name for name in names if holm_undirected or direction[name] != "none"]
    family = len(candidates) * len(in_family) if holm else 1
    alpha = 1.0 - confidence
    rows: list[dict] = []
    warnings: list[str] = []
    for other in candidates:
        for name in names:
            if name in unscorable:
                rows.append({"baseline": baseline, "candidate": other, **asdict(replace(
                    _unscorable_row(name, direction[name], HOLM if name in in_family else APART),
                    **_count_fields(counts, baseline, other, name)))})
                continue
            pairs = pair(data, baseline, other, name)
            row = compare_pairs(pairs, score=name, direction=direction[name],
                                rng=rng_for(seed, baseline, other, name), resamples=resamples, tie_tolerance=tie_tolerance, confidence=confidence,
                                family=family if name in in_family else 1,
                                worst=_worst(data, name, direction[name]), bounds=value_range(name))
            row = replace(row, family=HOLM if name in in_family else APART,
                          **_count_fields(counts, baseline, other, name))
            differing = int(np.count_nonzero(np.abs(pairs.diffs) > tie_tolerance))
            limit = smallest_p(differing, resamples=resamples, family=family, alpha=alpha)
            if name in in_family and differing and limit * family >= alpha:
                warnings.append(f"{other} / {name}: only {differing} of {row.n} pairs differ, so the test cannot "
                                f"reach p < {alpha:g} across {family} comparisons (smallest possible p "
                                f"{limit:.2g}); more datums needed.")
            rows.append({"baseline": baseline, "candidate": other, **asdict(row)})
    frame = apart_rows_last(pd.DataFrame(rows, columns=COLUMNS))
    adjust_and_decide(frame, holm, alpha)
    frame.loc[frame["score"].isin(unscorable), "why"] = NO_SCORED_DATUMS
    labelled = label_counts(data) if any(is_judge(name) for name in names) else {}
    frame["warnings"] = [row_warnings(data, name, [baseline, other], labelled)
                         for name, other in zip(frame["score"], frame["candidate"])]
    if plan is not None:
        frame["n_needed"] = [needed(plan, spread, alpha) for spread in frame["spread"]]
    frame.attrs.update(
        run_id=run_id, baseline=baseline, candidates=candidates, scores=names, seed=seed, resamples=resamples,
        confidence=confidence, alpha=alpha, tie_tolerance=tie_tolerance, ci_method=CI_METHOD, holm=holm,
        family=family, plan=plan,
        note=_multiplicity_note(int(frame.loc[frame["family"] == HOLM, "p_value"].notna().sum()), holm),
        apart=[n for n in names if n not in in_family], undeclared=_undeclared(names, directions),
        warnings=warnings + sorted({w for w in frame["warnings"] if w}),
    )
    return frame


def apart_rows_last(frame: pd.DataFrame) -> pd.DataFrame:
    """The Holm family's rows first, then the rows tested apart (scores without a better direction)."""
    return pd.concat([frame[frame["family"] == HOLM], frame[frame["family"] == APART]], ignore_index=True)


def adjust_and_decide(frame: pd.DataFrame, holm: bool, alpha: float) -> None:
    """Holm over the family rows, then every row's verdict."""
    family = frame["family"] == HOLM
    frame["p_adjusted"] = np.nan
    if holm and family.any():
        frame.loc[family, "p_adjusted"] = holm_adjust(frame.loc[family, "p_value"].tolist())
    frame["p_adjusted"] = frame["p_adjusted"].astype(float)
    decided = [decide(direction=r.direction, family=r.family, n=r.n, delta=r.delta, p_value=r.p_value,
                      p_used=r.p_adjusted if holm else r.p_value, missingness_p=r.missingness_p, alpha=alpha)
               for r in frame.itertuples()]
    frame["verdict"] = [v for v, _ in decided]
    frame["why"] = [_not_significant(r, w, holm, alpha) if v == NOT_SIGNIFICANT else w
                    for r, (v, w) in zip(frame.itertuples(), decided)]


def _not_significant(row, why: str, holm: bool, alpha: float) -> str:
    """Why a row is not significant: its p and the interval of differences that are still possible."""
    p = row.p_value if row.family == APART or not holm else row.p_adjusted
    which = "p" if row.family == APART or not holm else "p (Holm)"
    if math.isnan(row.ci_low):
        room = f"too few for an interval ({row.ci_note})" if row.ci_note else "no interval"
    else:
        room = f"the difference may be anywhere in [{row.ci_low:+.4f}, {row.ci_high:+.4f}]"
    said = f"{which} {p:.2g} is not below {alpha:g}; {room}" if not math.isnan(p) else room
    return f"{why}; {said}" if why else said


def _counts(data: RunScores) -> dict[tuple[str, str], dict[str, int]]:
    """Per (model, score): scored, unscored, empty and missing datums (kept with the run's other reads)."""
    found = RUNS.lookup(data.store.path, data.run, ("counts",))
    if found is None:
        found = {(r.model, r.score): {"scored": int(r.n_scored), "unscored": int(r.n_unscored),
                                      "empty": int(r.n_empty), "missing": int(r.n_missing)}
                 for r in data.store.score_counts(data.run_id).itertuples()}
        RUNS.keep(data.store.path, data.run, ("counts",), found)
    return found


def _count_fields(counts: Mapping[tuple[str, str], Mapping[str, int]], baseline: str, candidate: str,
                  score: str) -> dict[str, int]:
    out = {}
    for role, model in (("baseline", baseline), ("candidate", candidate)):
        found = counts.get((model, score))
        if found is not None:
            out.update({f"{kind}_{role}": found[kind] for kind in COUNTS})
    return out


def _worst(data: RunScores, score: str, direction: str) -> float:
    """The worst value of a score for the sensitivity line; NaN for scores without a direction."""
    if direction == "none":
        return NAN
    values = data.array(score)
    if np.isnan(values).all():
        return NAN
    return worst_value(direction, value_range(score), (float(np.nanmin(values)), float(np.nanmax(values))))


def needed(difference: float, spread: float, alpha: float) -> float:
    """Datums that detect ``difference`` at 80% power for a row's ``spread``; NaN without one, inf beyond reach."""
    if not math.isfinite(spread) or spread == 0:
        return NAN
    try:
        return float(datums_needed(difference, spread, alpha))
    except ParameterError:
        if difference == 0 or not math.isfinite(difference):
            raise
        return math.inf


def paired_differences(store: Store, run_id: int, baseline: str, candidate: str, score: str) -> pd.DataFrame:
    """datum_id, baseline, candidate, diff (candidate - baseline) over datums scored for both, in dataset order.

    ``attrs`` holds the score's direction and how many datums each model is missing.
    """
    data = load_run_scores(store, run_id, scores=[score])
    data.check_model(baseline)
    data.check_model(candidate)
    data.check_scores([score])
    pairs = pair(data, baseline, candidate, score, with_ids=True)
    frame = pd.DataFrame({"datum_id": pd.Series(pairs.datum_ids, dtype=object), "baseline": pairs.baseline,
                          "candidate": pairs.candidate, "diff": pairs.diffs})
    frame.attrs.update(score=score, direction=score_direction(score, None), missing_baseline=pairs.missing_baseline,
                       missing_candidate=pairs.missing_candidate)
    return frame


def check_settings(resamples: int, seed: int, tie_tolerance: float, confidence: float) -> None:
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 1:
        raise ParameterError(f"resamples must be a whole number of at least 1, got {resamples!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ParameterError(f"seed must be a whole number of at least 0, got {seed!r}")
    if not (math.isfinite(tie_tolerance) and tie_tolerance >= 0):
        raise ParameterError(f"tie tolerance must be zero or a positive number, got {tie_tolerance!r}")
    if not 0.0 < confidence < 1.0:
        raise ParameterError(f"confidence must be between 0 and 1, got {confidence!r}")


def candidates_of(data: RunScores, baseline: str, candidate: str | Sequence[str] | None) -> list[str]:
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


def scores_of(data: RunScores, models: Sequence[str]) -> list[str]:
    """Every score of the run, scored or not, in score order; the pairwise preference is left out (it compares
    models itself). A score nobody could score is listed too, as inconclusive: a gate must see it."""
    wanted = set(models)
    scored = [name for name in dict.fromkeys(s for m, s in data.scored if m in wanted) if name != PAIRWISE]
    every = [name for name in dict.fromkeys(s for _m, s in _counts(data)) if name != PAIRWISE]
    found = sorted(set(scored) | set(every))
    if not scored:
        raise ParameterError(f"run {data.run_id} has no scored values for {', '.join(models)}"
                             + (f" (unscored: {', '.join(found)})" if found else ""))
    return found


def _unscorable(data: RunScores, names: Sequence[str], counts: Mapping[tuple[str, str], Mapping[str, int]]
                ) -> set[str]:
    """Requested scores without a single scored value; an error for a name the run has no cell of at all."""
    known = set(data.score_names)
    celled = {score for _model, score in counts}
    unknown = [name for name in names if name not in known and name not in celled]
    if unknown:
        raise ParameterError(f"run {data.run_id} has no scored values for {', '.join(map(repr, unknown))} "
                             "(no cell of it at all); "
                             f"scores: {', '.join(sorted(known | celled)) or 'none'}")
    return {name for name in names if name not in known}


def _unscorable_row(score: str, direction: str, family: str) -> ComparisonRow:
    """The row of a score no datum was scored for: every statistic empty, the verdict inconclusive."""
    return ComparisonRow(
        score=score, direction=direction, family=family, n=0, baseline_mean=NAN, candidate_mean=NAN, delta=NAN,
        ci_low=NAN, ci_high=NAN, p_value=NAN, p_adjusted=None, verdict="", why=NO_SCORED_DATUMS, mde=NAN,
        spread=NAN, wins=0, ties=0, losses=0, scored_baseline=0, unscored_baseline=0, empty_baseline=0,
        missing_baseline=0, scored_candidate=0, unscored_candidate=0, empty_candidate=0, missing_candidate=0,
        missingness_p=1.0, worst=NAN, sensitivity_delta=NAN, sensitivity_ci_low=NAN, sensitivity_ci_high=NAN,
        sensitivity_p=NAN, test="none: no scored datums")


def score_direction(score: str, overrides: Mapping[str, str] | None) -> str:
    """The score's direction: an override, else the registry; 'higher' if the registry cannot say."""
    if overrides and score in overrides:
        value = overrides[score]
        if value not in DIRECTIONS:
            raise ParameterError(f"direction of {score!r} must be one of {', '.join(DIRECTIONS)}, got {value!r}")
        return value
    try:
        from ..registry import direction_of

        value = direction_of(score)
    except Exception:  # the registry is optional here: a broken declaration must not stop a comparison
        return "higher"
    return value if value in DIRECTIONS else "higher"


def value_range(score: str) -> tuple[float | None, float | None]:
    """The declared range of a score; open on both sides when no metric declares it."""
    try:
        from ..registry import get_metric

        return get_metric(score).value_range
    except Exception:  # unknown to the registry, or the registry cannot load
        return None, None


def _undeclared(scores: Sequence[str], overrides: Mapping[str, str] | None) -> list[str]:
    """Scores whose direction neither an override nor the metric registry declares."""
    found = []
    for score in scores:
        if overrides and score in overrides:
            continue
        try:
            from ..registry import get_metric

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
