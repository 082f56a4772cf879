"""The leaderboard of a named dataset: every model ever run on it (its latest finished run with the score, by
default), per score: the mean with its interval (the one small-sample rule, as in :mod:`.history`) and a rank
interval from a bootstrap over datums, so that "first" is said only where the data say so.

The bootstrap resamples datums (keyed by id and content, as in :mod:`.history`) with replacement, the same draw for
every model, and ranks the models' means in each resample (rank 1 is the best in the score's direction; ties share
the better rank). A model's rank interval holds the central ``confidence`` share of its ranks. A model is "first"
only when its rank interval is [1, 1]. Models that ran on different versions are ranked over the datums each
scored (``n`` says how many).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from ..compare.comparison import score_direction
from ..errors import ParameterError
from ..store import Store
from .history import interval_columns, point_intervals, value_range

COLUMNS = ["rank", "model", "run_id", "run", "version", "judge", "n", "mean", "ci_low", "ci_high", "interval",
           "rank_low", "rank_high", "standing"]
#: Resamples of the rank bootstrap.
RESAMPLES = 1000


def leaderboard(store: Store, dataset: str, score: str, *, models: Sequence[str] | None = None,
                runs: Sequence[int] | None = None, confidence: float = 0.95, resamples: int = RESAMPLES,
                seed: int = 0) -> pd.DataFrame:
    """One row per model, best first: its latest finished run on any version of ``dataset`` with ``score`` (or
    its latest among ``runs``), mean, interval, rank and rank interval; ``standing`` is 'first' only where the rank
    interval is [1, 1] (and 'tied first' where several models' are), else e.g. 'rank 1-3'. ``attrs``: family, score, direction, resamples, seed, notes."""
    if not 0.0 < confidence < 1.0:
        raise ParameterError(f"confidence must be between 0 and 1, got {confidence}")
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise ParameterError(f"resamples must be a whole number of at least 1, got {resamples!r}")
    with store.session():  # one open of the file for every read
        return _leaderboard(store, dataset, score, models, runs, confidence, resamples, seed)


def _leaderboard(store: Store, dataset: str, score: str, models: Sequence[str] | None, runs: Sequence[int] | None,
                 confidence: float, resamples: int, seed: int) -> pd.DataFrame:
    family = store.versions.family(dataset)
    every = store.over_time.family_runs(family)
    if runs is not None:
        unknown = sorted(set(runs) - set(every["run_id"]))
        if unknown:
            raise ParameterError(f"run(s) {', '.join(map(str, unknown))} are not finished runs of {family!r}")
        every = every[every["run_id"].isin(runs)]
    moments = store.over_time.run_moments(family, [score], models)
    moments = moments[moments["run_id"].isin(every["run_id"]) & (moments["n"] > 0)]
    if moments.empty:
        known = sorted(set(store.over_time.run_moments(family)["score"]))
        raise ParameterError(f"no finished run of {family!r} has scored values of {score!r}"
                             + (f" for {', '.join(models)}" if models else "") + f"; scores: {', '.join(known) or 'none'}")
    order = {run_id: i for i, run_id in enumerate(every["run_id"])}
    moments = moments.assign(_order=moments["run_id"].map(order)).sort_values("_order")
    latest = moments.groupby("model", sort=False).tail(1).merge(every, on="run_id")
    keyed = store.over_time.keyed_values(family, [score], list(latest["model"]), runs=list(latest["run_id"]))
    chosen = dict(zip(latest["model"], latest["run_id"]))
    code_of = {m: i for i, m in enumerate(keyed["models"])}
    keep = keyed["run_id"] == np.array([chosen[m] for m in keyed["models"]])[keyed["model_code"]]
    keys, column = np.unique(keyed["key"][keep], return_inverse=True)
    values = np.full((len(keyed["models"]), len(keys)), np.nan)
    values[keyed["model_code"][keep], column] = keyed["value"][keep]
    direction = score_direction(score, None)
    low, high, methods = interval_columns(point_intervals(latest.assign(score=score), keyed,
                                                          {score: value_range(score)}, confidence))
    names = latest["name"].astype(object)
    rows = pd.DataFrame({
        "model": latest["model"], "run_id": latest["run_id"].astype(int),
        "run": names.where(names.notna() & (names != ""), "run " + latest["run_id"].astype(str)),
        "version": latest["version"].astype(int), "judge": latest["judge"], "n": latest["n"].astype(int),
        "mean": latest["mean"].astype(float), "ci_low": low, "ci_high": high, "interval": methods})
    frame = rows.reset_index(drop=True)
    matrix = values[[code_of[m] for m in frame["model"]]]
    frame["rank"], frame["rank_low"], frame["rank_high"] = rank_intervals(
        matrix, direction, confidence=confidence, resamples=resamples, rng=np.random.default_rng(seed))
    alone = int(((frame["rank_low"] == 1) & (frame["rank_high"] == 1)).sum()) <= 1
    frame["standing"] = [_standing(lo, hi, direction, alone) for lo, hi in zip(frame["rank_low"], frame["rank_high"])]
    frame = frame.sort_values(["rank", "model"], kind="stable").reset_index(drop=True)[COLUMNS]
    notes = [] if direction != "none" else [f"{score!r} has no better direction: the models are not ranked"]
    if frame["n"].nunique() > 1:
        notes.append("the models scored different numbers of datums (n): each is ranked over its own")
    frame.attrs.update(family=family, score=score, direction=direction, resamples=resamples, seed=seed,
                       confidence=confidence, notes=notes)
    return frame


def _ranks(means: np.ndarray, direction: str) -> np.ndarray:
    """Rank of each column per row (1 = best; ties share the better rank; a NaN mean ranks last)."""
    from scipy.stats import rankdata

    signed = -means if direction == "higher" else means
    return rankdata(np.where(np.isnan(signed), np.inf, signed), axis=-1, method="min")


def rank_intervals(values: np.ndarray, direction: str, *, confidence: float, resamples: int,
                   rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rank, low, high) per row of ``values`` (models x datums, NaN where a model has no value): the observed
    rank and the central ``confidence`` interval of its ranks over resamples of the datums."""
    models, datums = values.shape
    if direction == "none" or datums == 0:
        empty = np.full(models, np.nan)
        return empty, empty, empty
    has = ~np.isnan(values)
    filled = np.where(has, values, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = _ranks(filled.sum(axis=1) / has.sum(axis=1), direction)
        ranks = np.empty((resamples, models))
        filled_t, has_t, complete = filled.T.astype(np.float32), has.T.astype(np.float32), bool(has.all())
        for start in range(0, resamples, 250):  # bounded memory: 250 resamples' weights at a time
            count = min(250, resamples - start)
            drawn = rng.integers(0, datums, size=(count, datums)) + (np.arange(count) * datums)[:, None]
            weights = np.bincount(drawn.ravel(), minlength=count * datums).reshape(count, datums).astype(np.float32)
            counts = float(datums) if complete else (weights @ has_t).astype(float)  # every model has every datum
            ranks[start:start + count] = _ranks((weights @ filled_t).astype(float) / counts, direction)
    tail = (1.0 - confidence) / 2.0
    low = np.quantile(ranks, tail, axis=0, method="lower")
    high = np.quantile(ranks, 1.0 - tail, axis=0, method="higher")
    return observed, low, high


def _standing(low: float, high: float, direction: str, alone: bool) -> str:
    if direction == "none" or not math.isfinite(low):
        return ""
    if low == high == 1:
        return "first" if alone else "tied first"  # equal means in every resample: first together, not alone
    return f"rank {int(low)}" if low == high else f"rank {int(low)}-{int(high)}"
