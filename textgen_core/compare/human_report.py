"""Judge against people, per score: agreement with intervals, where they disagree, and bias-corrected means.

Numbers come from :mod:`.agreement_stats` (kappa, rank correlations, alpha) and
:mod:`.calibration` (PPI++); the labels and the judge's values from :mod:`.labels`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from ..errors import ParameterError
from ..store import Store
from . import agreement_stats as ag
from .calibration import labels_needed, ppi_mean
from .small_sample import MIN_AGREEMENT, MIN_LABELS, bounded, checked, delta_interval, mean_interval
from .labels import (RANDOM_KINDS, WEIGHTED, human_labels, judge_and_human, judge_values, sampling_note,
                     scale_of)
from .stats import rng_for

#: Disagreements listed at most.
DISAGREEMENTS = 200


@dataclass
class AgreementReport:
    """Judge against people on one score."""

    score: str
    #: 'binary' (yes/no), 'ordinal' (a few whole values) or 'continuous'.
    kind: str
    #: One row per model and one for all models: n, the statistics and their intervals.
    table: pd.DataFrame
    #: Judge value (rows) x human value (columns), counts of cells; binned for continuous scores.
    confusion: pd.DataFrame
    #: datum_id, model, judge, human, gap: largest gap first.
    disagreements: pd.DataFrame
    #: Krippendorff's alpha among the people (NaN without a cell labelled twice), its interval and what it used.
    alpha: float = float("nan")
    alpha_low: float = float("nan")
    alpha_high: float = float("nan")
    alpha_units: int = 0
    annotators: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def agreement_report(store: Store, run_id: int, score: str, *, human_column: str | None = None,
                     confidence: float = 0.95, resamples: int = ag.RESAMPLES, seed: int = 0) -> AgreementReport:
    """Agreement of the judge's ``score`` with the people's labels (and a human column, as one more annotator)."""
    cells = judge_and_human(store, run_id, score, human_column)
    labels = human_labels(store, run_id, score, human_column)
    observed = [*cells["judge"].tolist(), *labels["value"].tolist()]
    low, high, values = scale_of(score, observed)
    kind = "continuous" if values is None else "binary" if values == [0.0, 1.0] else "ordinal"
    if values is not None:  # the people's consensus on a scale of whole values is the nearest value
        cells = cells.assign(human=np.floor(cells["human"].to_numpy(dtype=float) + 0.5))
    rows, notes = [], []
    for model, part in [*cells.groupby("model", sort=False), ("all models", cells)]:
        found, said = _statistics(part, kind, values, confidence, resamples, rng_for(seed, score, str(model)))
        rows.append({"model": model, "n": len(part), **found})
        notes.extend(f"{model}: {line}" for line in said)
    table = pd.DataFrame(rows)
    report = AgreementReport(score, kind, table, _confusion(cells, values, low, high),
                             _disagreements(cells), annotators=sorted(set(labels["annotator"])), notes=notes)
    level = "nominal" if kind == "binary" else "ordinal" if kind == "ordinal" else "interval"
    grid = labels.pivot_table(index="annotator", columns=["datum_id", "model"], values="value", aggfunc="mean")
    if len(grid) >= 2:
        matrix = grid.to_numpy(dtype=float)
        report.alpha_units = int(np.count_nonzero((~np.isnan(matrix)).sum(axis=0) >= 2))
        if report.alpha_units:
            report.alpha = ag.krippendorff_alpha(matrix, level)
            low, high = ag.krippendorff_interval(
                matrix, level, confidence=confidence, resamples=resamples, rng=rng_for(seed, score, "alpha"))
            ruled = checked(low, high, "bootstrap", n=report.alpha_units, minimum=MIN_AGREEMENT,
                            what="cells labelled by two or more people")
            report.alpha_low, report.alpha_high = ruled.low, ruled.high
            if ruled.why:
                report.notes.append(f"Krippendorff's alpha has no interval: {ruled.why}")
    if cells.empty:
        report.notes.append(f"no labelled cell of {score} has a judge value yet")
    return report


def _statistics(part: pd.DataFrame, kind: str, values: list[float] | None, confidence: float, resamples: int,
                rng: np.random.Generator) -> tuple[dict[str, float], list[str]]:
    """The kind's statistics with their intervals, and what the small-sample rule says about them.

    A rater that gives every cell one value leaves agreement undefined (not 0): NaN with the reason. An
    interval needs :data:`.small_sample.MIN_AGREEMENT` cells and some width, else it is 'too few'.
    """
    judge, human = part["judge"].to_numpy(dtype=float), part["human"].to_numpy(dtype=float)
    out: dict[str, float] = {}
    said: list[str] = []
    constant = [f"the {who} gives every one of the {len(part)} cells {vals[0]:g}"
                for who, vals in (("judge", judge), ("people", human)) if vals.size and np.ptp(vals) == 0]
    if constant:
        said.append(f"agreement is undefined: {' and '.join(constant)} (a rater that never varies cannot agree "
                    "or disagree beyond chance)")
    shown: set[str] = set()

    def add(name: str, statistic, many=None) -> None:
        if constant:
            out[name] = out[f"{name}_low"] = out[f"{name}_high"] = float("nan")
            return
        out[name] = statistic(judge, human)
        low, high = ag.bootstrap_interval(statistic, judge, human, confidence=confidence, resamples=resamples,
                                          rng=rng, many=many)
        ruled = checked(low, high, "bootstrap", n=len(part), minimum=MIN_AGREEMENT, what="labelled cells")
        out[f"{name}_low"], out[f"{name}_high"] = ruled.low, ruled.high
        if ruled.why and ruled.why not in shown:
            shown.add(ruled.why)
            said.append(f"no interval: {ruled.why}")

    if kind == "binary":
        add("kappa", lambda a, b: ag.kappa(a, b, labels=values), lambda a, b: ag.kappa_rows(a, b, labels=values))
        out["agreement"] = float(np.mean(judge == human)) if judge.size else float("nan")
    elif kind == "ordinal":
        add("weighted_kappa", lambda a, b: ag.kappa(a, b, labels=values, weights="quadratic"),
            lambda a, b: ag.kappa_rows(a, b, labels=values, weights="quadratic"))
        add("kappa", lambda a, b: ag.kappa(a, b, labels=values), lambda a, b: ag.kappa_rows(a, b, labels=values))
        add("spearman", ag.spearman, ag.spearman_rows)
    else:
        add("spearman", ag.spearman, ag.spearman_rows)
        add("kendall", ag.kendall)
        out["mean_gap"] = float(np.mean(np.abs(judge - human))) if judge.size else float("nan")
    return out, said


def _confusion(cells: pd.DataFrame, values: list[float] | None, low: float, high: float | None) -> pd.DataFrame:
    """Counts of (judge value, people's value); every value of a scale of whole values is shown, even unused."""
    if cells.empty:
        return pd.DataFrame()
    judge, human = cells["judge"], cells["human"]
    if values is not None:
        table = pd.crosstab(judge.rename("judge"), human.rename("human"))
        return table.reindex(index=values, columns=values, fill_value=0).rename_axis(index="judge", columns="human")
    top = high if high is not None else float(max(judge.max(), human.max()))
    edges = np.unique(np.linspace(low, max(top, low + 1e-9), 6))
    judge = pd.cut(judge, edges, include_lowest=True)
    human = pd.cut(human, edges, include_lowest=True)
    return pd.crosstab(judge.rename("judge"), human.rename("human"), dropna=False)


def _disagreements(cells: pd.DataFrame) -> pd.DataFrame:
    gap = (cells["judge"] - cells["human"]).abs()
    found = cells.assign(gap=gap)[gap > 1e-12]
    return found.sort_values(["gap", "datum_id", "model"], ascending=[False, True, True], kind="stable").head(
        DISAGREEMENTS)[["datum_id", "model", "judge", "human", "gap", "annotators"]].reset_index(drop=True)


def calibrated_means(store: Store, run_id: int, scores: Sequence[str] | None = None, *,
                     human_column: str | None = None, confidence: float = 0.95) -> pd.DataFrame:
    """Per (model, score) with labels: the judge-only mean and the PPI++ mean, each with its interval.

    Labels picked by disagreement are left out (their probability is unknown);
    stratified labels are weighted by the inverse of their stratum's labelled
    share. ``note`` says what was left out or why there is no estimate.
    """
    chosen = list(scores) if scores is not None else sorted(set(store.labels(run_id)["score"]))
    _check_scores(store, run_id, chosen)
    rows = []
    for score in chosen:
        judged = judge_values(store, run_id, score)
        cells = judge_and_human(store, run_id, score, human_column)
        for model, population in judged.groupby("model", sort=False):
            rows.append({"model": model, "score": score,
                         **_calibrate(population, cells[cells["model"] == model], score, confidence)})
    columns = ["model", "score", "judge_mean", "judge_ci_low", "judge_ci_high", "calibrated", "ci_low", "ci_high",
               "lam", "n_labels", "n_judged", "method", "note"]
    return pd.DataFrame(rows, columns=columns)


def _calibrate(population: pd.DataFrame, labelled: pd.DataFrame, score: str, confidence: float) -> dict:
    note = sampling_note(labelled["sampling"].tolist())
    usable = labelled[labelled["sampling"].isin(RANDOM_KINDS)]
    stratified = usable["sampling"] == "stratified"
    weighted = usable["sampling"] == WEIGHTED
    probabilities = None
    if weighted.any():  # each label came with its own known inclusion probability
        if not weighted.all():
            note = "; ".join(filter(None, [note, "labels without a probability left out beside weighted ones"]))
        usable = usable[weighted]
        probabilities = usable["probability"].to_numpy(dtype=float)
    elif stratified.any():
        if not stratified.all():
            note = "; ".join(filter(None, [note, "random labels left out beside stratified ones"]))
        usable = usable[stratified]
        probabilities = _stratum_shares(population, usable, score)
    bounds = _bounds(score)
    judge = population["judge"].to_numpy(dtype=float)
    result = ppi_mean(usable["human"].to_numpy(dtype=float), usable["judge"].to_numpy(dtype=float), judge,
                      confidence=confidence, probabilities=probabilities, bounds=bounds)
    note = "; ".join(filter(None, [note, result.note]))
    model = str(population["model"].iloc[0]) if len(population) else ""
    # the judge-only mean with the interval the run's summary gives it (same rule, same seeded stream)
    alone = mean_interval(judge, bounds=bounds, confidence=confidence, rng=rng_for(0, model, score))
    return {"judge_mean": float(judge.mean()) if judge.size else float("nan"), "judge_ci_low": alone.low,
            "judge_ci_high": alone.high, "calibrated": result.estimate, "ci_low": result.ci_low,
            "ci_high": result.ci_high, "lam": result.lam, "n_labels": result.n_labels,
            "n_judged": result.n_judged, "method": result.method, "note": note}


def _stratum_shares(population: pd.DataFrame, labelled: pd.DataFrame, score: str) -> np.ndarray:
    """Each labelled cell's inclusion probability: labelled cells of its stratum over the stratum's cells."""
    _low, _high, values = scale_of(score, population["judge"].tolist())
    if values is not None or population["judge"].nunique() <= 5:
        key = population["judge"]
    else:
        key = pd.qcut(population["judge"].rank(method="first"), 5, labels=False)
    strata = dict(zip(zip(population["datum_id"], population["model"]), key))
    sizes = key.value_counts()
    mine = pd.Series([strata[(d, m)] for d, m in zip(labelled["datum_id"], labelled["model"])])
    taken = mine.value_counts()
    return np.array([taken[s] / sizes[s] for s in mine], dtype=float)


def calibrated_deltas(store: Store, run_id: int, baseline: str, candidates: Sequence[str],
                      scores: Sequence[str], *, human_column: str | None = None,
                      confidence: float = 0.95) -> pd.DataFrame:
    """Per (candidate, score): judge-only and PPI++ paired difference (candidate - baseline), with intervals.

    The labelled pairs are datums labelled for both models from a random sample;
    the population is every datum both models were judged on.
    """
    _check_scores(store, run_id, scores)
    rows = []
    for score in scores:
        judged = judge_values(store, run_id, score).pivot(index="datum_id", columns="model", values="judge")
        cells = judge_and_human(store, run_id, score, human_column)
        humans = cells.pivot(index="datum_id", columns="model", values="human")
        kinds = cells.groupby("datum_id")["sampling"].agg(lambda s: "random" if set(s) <= {
            "random", "import", "dataset"} else ",".join(sorted(set(s))))
        for candidate in candidates:
            if baseline not in judged or candidate not in judged:
                continue
            both = judged[[baseline, candidate]].dropna()
            diffs_all = both[candidate] - both[baseline]
            pairs = humans.reindex(columns=[baseline, candidate]).dropna().join(
                both.rename(columns={baseline: "jb", candidate: "jc"}), how="inner")
            odd = sorted(set(kinds.reindex(pairs.index)) - {"random"})
            pairs = pairs[kinds.reindex(pairs.index) == "random"]
            width = _width(score)
            result = ppi_mean((pairs[candidate] - pairs[baseline]).to_numpy(dtype=float),
                              (pairs["jc"] - pairs["jb"]).to_numpy(dtype=float), diffs_all.to_numpy(dtype=float),
                              confidence=confidence, bounds=None if width is None else (-width, width))
            note = "" if not odd else (f"pairs labelled by {', '.join(odd)} sampling left out: the paired estimate "
                                       "needs a uniformly random sample")
            note = "; ".join(filter(None, [note, result.note.replace(" labels", " labelled pairs")]))
            alone = delta_interval(diffs_all.to_numpy(dtype=float), bounds=_bounds(score), confidence=confidence,
                                   rng=rng_for(0, baseline, candidate, score))
            rows.append({"candidate": candidate, "score": score, "judge_delta": result.judge_mean,
                         "judge_ci_low": alone.low, "judge_ci_high": alone.high,
                         "calibrated_delta": result.estimate, "ci_low": result.ci_low, "ci_high": result.ci_high,
                         "lam": result.lam, "n_labels": result.n_labels, "n_judged": result.n_judged, "note": note})
    return pd.DataFrame(rows, columns=["candidate", "score", "judge_delta", "judge_ci_low", "judge_ci_high",
                                       "calibrated_delta", "ci_low", "ci_high", "lam", "n_labels", "n_judged",
                                       "note"])


def labels_plan(store: Store, run_id: int, score: str, half_width: float, *, human_column: str | None = None,
                confidence: float = 0.95) -> pd.DataFrame:
    """Per model: labels so far and labels needed for a calibrated interval of ± ``half_width``.

    From the observed spread of human - lam * judge over the labels so far and
    the judge's spread over all its cells, at the lambda in [0, 1] that needs the
    fewest labels (``lam_planned``). The planner answers only from
    :data:`.small_sample.MIN_LABELS` labels on, and only when human - lam x judge
    varies over them; otherwise ``labels_needed`` is NaN and ``why`` says what to
    do first. ``half_width_now`` is NaN where the calibrated mean has no interval.
    """
    if not (math.isfinite(half_width) and half_width > 0):
        raise ParameterError(f"the target half-width must be a positive number, got {half_width!r}")
    _check_scores(store, run_id, [score])
    judged = judge_values(store, run_id, score)
    cells = judge_and_human(store, run_id, score, human_column)
    rows = []
    for model, population in judged.groupby("model", sort=False):
        mine = cells[cells["model"] == model]
        mine = mine[mine["sampling"].isin(RANDOM_KINDS)]
        judge_all = population["judge"].to_numpy(dtype=float)
        human, judge = mine["human"].to_numpy(dtype=float), mine["judge"].to_numpy(dtype=float)
        result = ppi_mean(human, judge, judge_all, confidence=confidence, bounds=_bounds(score))
        needed, best, why = float("nan"), float("nan"), ""
        if len(mine) < MIN_LABELS:
            why = f"{len(mine)} random labels so far; label at least {MIN_LABELS - len(mine)} more first"
        else:  # the lambda that needs the fewest labels: a judge whose own term is too wide gets less
            judge_sd = float(np.std(judge_all, ddof=1)) if judge_all.size > 1 else 0.0
            plans = [(float(np.std(human - lam * judge, ddof=1)), float(lam)) for lam in np.linspace(0.0, 1.0, 101)]
            plans = [(spread, lam) for spread, lam in plans if spread > 0]
            if not plans:
                why = ("the labels so far do not vary (nor does human - lambda x judge): their spread is unknown; "
                       "label more cells, drawn at random")
            else:
                needed, best = min((labels_needed(spread, half_width, judge_sd=judge_sd, lam=lam,
                                                  n_judged=judge_all.size, confidence=confidence), lam)
                                   for spread, lam in plans)
                if math.isinf(needed):
                    why = "the judge's own spread alone is wider than the target: more judged cells are needed"
        rows.append({"model": model, "score": score, "n_labels": len(mine), "n_judged": judge_all.size,
                     "half_width_now": (result.ci_high - result.ci_low) / 2, "labels_needed": needed,
                     "lam_planned": best, "why": why})
    return pd.DataFrame(rows, columns=["model", "score", "n_labels", "n_judged", "half_width_now", "labels_needed",
                                       "lam_planned", "why"])


def _check_scores(store: Store, run_id: int, scores: Sequence[str]) -> None:
    """One clear error for a score the run does not have (a calibration or plan of it would be empty)."""
    known = list(dict.fromkeys(store.score_counts(run_id)["score"]))
    missing = [score for score in scores if score not in known]
    if missing:
        raise ParameterError(f"run {run_id} has no score {', '.join(map(repr, missing))}; its scores: "
                             f"{', '.join(known) or 'none'}")


def _bounds(score: str) -> tuple[float | None, float | None] | None:
    """The score's declared range, or None when it has none (or no metric declares it)."""
    try:
        from ..registry import get_metric

        found = get_metric(score).value_range
    except Exception:  # a score no metric declares (any more): no declared range
        return None
    return tuple(found) if bounded(found) else None  # type: ignore[return-value]


def _width(score: str) -> float | None:
    found = _bounds(score)
    return None if found is None else float(found[1]) - float(found[0])  # type: ignore[arg-type,operator]
