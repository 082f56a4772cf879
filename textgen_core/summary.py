"""Run summaries: SQL aggregates plus a 95% confidence interval of each mean."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from scipy import stats

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
    """Per (model, metric, score): n scored/unscored, mean, median, std, min, max and a t-interval of the mean."""
    frame = store.summary(run_id, models)
    n = frame["n_scored"].to_numpy(dtype=float)
    std = frame["std"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = stats.t.ppf(0.5 + confidence / 2, np.maximum(n - 1, 1))
        half = np.where(n >= 2, t * std / np.sqrt(n), np.nan)
    frame["ci_low"] = frame["mean"] - half
    frame["ci_high"] = frame["mean"] + half
    return frame


def summary_table(store: Store, run_id: int) -> pd.DataFrame:
    """Scores as rows, models as columns: 'mean [ci_low, ci_high] (n scored, k unscored)'."""
    frame = run_summary(store, run_id)
    if frame.empty:
        return pd.DataFrame()
    aggregates = store.aggregates(run_id)

    def cell(row: pd.Series) -> str:
        if row["n_scored"] == 0:
            return f"unscored ({row['n_unscored']})"
        text = f"{row['mean']:.4f}"
        if not np.isnan(row["ci_low"]):
            text += f" [{row['ci_low']:.4f}, {row['ci_high']:.4f}]"
        text += f" n={row['n_scored']}"
        if row["n_unscored"]:
            text += f" unscored={row['n_unscored']}"
        return text

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
