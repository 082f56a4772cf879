"""Run summaries: SQL aggregates, what is missing, and an interval of each mean that stays in range."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from .compare.intervals import BOOTSTRAP_MAX, TOO_FEW, interval_from_moments, mean_interval
from .compare.stats import rng_for
from .metrics.registry import get_metric
from .store import Store


def score_order(store: Store, run_id: int) -> list[str]:
    """The run's score names in the order its metrics were chosen and declare their outputs."""
    run = store.get_run(run_id)
    order: list[str] = []
    for metric in run["metrics"]:
        try:
            order.extend(get_metric(metric).outputs(run["params"].get(metric, {})))
        except Exception:  # a metric no longer declared still has its stored scores
            continue
    return order


def long_scores(store: Store, run_id: int) -> pd.DataFrame:
    """Every cell with its details, unscored reason and reproducibility signature."""
    signatures = store.get_run(run_id)["signatures"]
    frame = store.scores(run_id)
    frame["signature"] = frame["metric"].map(lambda m: signatures.get(m, ""))
    return frame


def wide_scores(store: Store, run_id: int) -> pd.DataFrame:
    """One row per (datum, model), one numeric column per score, in the run's metric order."""
    return store.wide_scores(run_id, score_order(store, run_id))


def run_summary(store: Store, run_id: int, models: Sequence[str] | None = None,
                confidence: float = 0.95) -> pd.DataFrame:
    """Per (model, metric, score): counts, mean, median, std, min, max and an interval of the mean.

    Counts: ``n_scored`` + ``n_unscored`` + ``n_missing`` (datums without a cell)
    is the dataset's datums; ``n_empty`` counts the model's empty predictions.
    The interval (``ci_method``) stays inside the score's range: Wilson for 0/1
    scores, else a bootstrap percentile interval (see :mod:`.compare.intervals`);
    below two scored values it is NaN ('too few').
    """
    frame = store.summary(run_id, models)
    counts = store.score_counts(run_id)[["model", "score", "n_empty", "n_missing"]]
    frame = frame.merge(counts, on=["model", "score"], how="left")
    frame[["n_empty", "n_missing"]] = frame[["n_empty", "n_missing"]].fillna(0).astype(int)
    # Large groups are summarized from SQL aggregates; only groups small enough to bootstrap fetch their values
    moments = {(m, s): row for m, s, *row in store.score_moments(run_id, models).itertuples(index=False)}
    small = sorted({s for (_m, s), row in moments.items() if row[0] < BOOTSTRAP_MAX})
    values = store.score_values(run_id, models=models, scores=small) if small else None
    groups = {} if values is None else {
        key: part["value"].to_numpy(dtype=float) for key, part in values.groupby(["model", "score"])}
    bounds = {}
    intervals = []
    for model, score in zip(frame["model"], frame["score"]):
        if score not in bounds:
            bounds[score] = _range(score)
        known = moments.get((model, score))
        if known is not None and known[0] >= BOOTSTRAP_MAX:
            n, mean, std, total, binary = known
            intervals.append(interval_from_moments(int(n), float(mean), float(std), float(total), bool(binary),
                                                   confidence=confidence, bounds=bounds[score]))
            continue
        intervals.append(mean_interval(groups.get((model, score), np.empty(0)), confidence=confidence,
                                       rng=rng_for(0, model, score), bounds=bounds[score]))
    frame["ci_low"] = [i[0] for i in intervals]
    frame["ci_high"] = [i[1] for i in intervals]
    frame["ci_method"] = [i[2] for i in intervals]
    return frame


def _range(score: str) -> tuple[float | None, float | None]:
    try:
        return get_metric(score).value_range
    except Exception:  # a score no metric declares any more still has its stored values
        return None, None


def summary_table(store: Store, run_id: int) -> pd.DataFrame:
    """Scores as rows, models as columns: 'mean [ci_low, ci_high] scored/unscored/empty/missing'."""
    frame = run_summary(store, run_id)
    if frame.empty:
        return pd.DataFrame()
    aggregates = store.aggregates(run_id)

    def cell(row: pd.Series) -> str:
        counts = f"{row['n_scored']}/{row['n_unscored']}/{row['n_empty']}/{row['n_missing']}"
        if row["n_scored"] == 0:
            return f"no mean {counts}"
        interval = TOO_FEW if np.isnan(row["ci_low"]) else f"[{row['ci_low']:.4f}, {row['ci_high']:.4f}]"
        return f"{row['mean']:.4f} {interval} {counts}"

    frame["cell"] = frame.apply(cell, axis=1)
    table = frame.pivot(index="score", columns="model", values="cell")
    present = set(frame["score"])
    order = [s for s in score_order(store, run_id) if s in present]
    table = table.reindex(order + sorted(present - set(order)))
    if not aggregates.empty:
        corpus = aggregates.pivot(index="score", columns="model", values="value")
        corpus.index = [f"{score} (corpus)" for score in corpus.index]
        table = pd.concat([table, corpus.map(lambda v: "" if pd.isna(v) else f"{v:.4f}")])
    table.columns.name = None
    return table
