"""The history of a named dataset: every finished run on any of its versions, per model and score, its mean with an
interval, in time order, and whether it differs from the previous run of that model (see :mod:`.changes`).

Datums pair across runs by id and content (query and references): across versions an id whose content changed
pairs with nothing, and the ``left_out`` column counts those. Unscored cells are not in the means; the ``unscored``
column counts them.

A point's interval comes from the run's moments, read in SQL: Wilson for 0/1 scores of a [0, 1] metric, else the t
interval clipped to the score's declared range. A point of fewer than two values, or of values without spread
(a zero-width interval would claim certainty the sample does not have), shows "too few" and why.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..compare.comparison import score_direction
from ..compare.intervals import t_interval, wilson_interval
from ..errors import ParameterError
from ..store import Store
from .changes import FALSE_ALARMS, TOO_FEW, holm, series_tests

NAN = float("nan")
COLUMNS = ["run_id", "run", "created_at", "version", "judge", "model", "score", "n", "mean", "ci_low", "ci_high",
           "interval", "unscored", "previous_run", "n_paired", "left_out", "delta", "p_value", "p_adjusted", "flag"]


def point_interval(n: int, mean: float, std: float, total: float, binary: bool,
                   bounds: tuple[float | None, float | None], confidence: float) -> tuple[float, float, str]:
    """(low, high, method) of one run's mean from its moments; NaN ends and 'too few: why' when it cannot say."""
    if n < 2:
        return NAN, NAN, f"too few: {n} scored value{'s' if n != 1 else ''}"
    if binary and tuple(bounds) == (0.0, 1.0):
        low, high = wilson_interval(int(round(total)), n, confidence)
        return low, high, "Wilson"
    if not (isinstance(std, float) and math.isfinite(std) and std > 0):
        return NAN, NAN, f"too few: {n} values without spread"
    low, high = t_interval(mean, std, n, confidence)
    floor, ceiling = bounds
    return (low if floor is None else max(floor, low)), (high if ceiling is None else min(ceiling, high)), "t"


def value_range(score: str) -> tuple[float | None, float | None]:
    """The declared range of a score (open when no metric declares it)."""
    from ..registry import get_metric

    try:
        return get_metric(score).value_range
    except Exception:  # a score no registered metric declares (a custom judge metric of an old run)
        return None, None


def history(store: Store, dataset: str, *, scores: Sequence[str] | None = None, models: Sequence[str] | None = None,
            confidence: float = 0.95, alpha: float = FALSE_ALARMS) -> pd.DataFrame:
    """One row per (run, model, score) of the finished runs on any version of ``dataset``, oldest run first.

    ``previous_run`` .. ``flag`` compare the run with the previous run of that model that has the score: the paired
    t test on the datums both scored, its p-value Holm-adjusted over every test of that model's history (all its
    scores and runs shown); ``flag`` is 'worse', 'better' (by the score's direction) or 'changed' (no direction)
    where the adjusted p is below ``alpha``. ``attrs``: family, alpha, confidence, tests per model, notes.
    """
    if not 0.0 < confidence < 1.0 or not 0.0 < alpha < 1.0:
        raise ParameterError(f"confidence and alpha must be between 0 and 1, got {confidence} and {alpha}")
    with store.session():  # one open of the file for every read
        family = store.versions.family(dataset)
        runs = store.over_time.family_runs(family)
        if runs.empty:
            raise ParameterError(f"dataset {family!r} has no finished run yet")
        moments = store.over_time.run_moments(family, scores, models)
        _check_found(moments, family, scores, models, store)
        keyed = store.over_time.keyed_values(family, scores, models)
    order = {run_id: i for i, run_id in enumerate(runs["run_id"])}
    frame = moments.merge(runs, on="run_id")
    frame["_order"] = frame["run_id"].map(order)
    frame = frame.sort_values(["_order", "model", "score"]).reset_index(drop=True)
    bounds = {score: value_range(score) for score in frame["score"].unique()}
    frame["ci_low"], frame["ci_high"], frame["interval"] = moment_intervals(frame, bounds, confidence)
    names = frame["name"].astype(object)
    frame["run"] = names.where(names.notna() & (names != ""), "run " + frame["run_id"].astype(str))
    tests = _changes(keyed, order)
    frame = frame.merge(tests, on=["run_id", "model", "score"], how="left") if len(tests) else \
        frame.assign(**{c: NAN for c in ("previous_run", "n_paired", "left_out", "delta", "p_value")})
    frame["p_adjusted"] = NAN
    counts = {}
    for model, rows in frame.groupby("model").groups.items():
        frame.loc[rows, "p_adjusted"] = holm(frame.loc[rows, "p_value"].to_numpy(dtype=float))
        counts[model] = int(frame.loc[rows, "p_value"].notna().sum())
    frame["flag"] = [_flag(r, alpha) for r in frame.itertuples()]
    out = frame[COLUMNS].copy()
    out.attrs.update(family=family, alpha=alpha, confidence=confidence, tests=counts, notes=_notes(out, counts, alpha))
    return out


def _check_found(moments: pd.DataFrame, family: str, scores: Sequence[str] | None, models: Sequence[str] | None,
                 store: Store) -> None:
    if not moments.empty:
        missing = [s for s in scores or [] if s not in set(moments["score"])]
        missing += [m for m in models or [] if m not in set(moments["model"])]
        if not missing:
            return
    every = store.over_time.run_moments(family)
    asked = missing if not moments.empty else [*(scores or []), *(models or [])]
    raise ParameterError(f"no finished run of {family!r} has {', '.join(map(repr, asked))}; scores: "
                         f"{', '.join(sorted(set(every['score']))) or 'none'}; models: "
                         f"{', '.join(sorted(set(every['model']))) or 'none'}")


def moment_intervals(frame: pd.DataFrame, bounds: dict[str, tuple[float | None, float | None]],
                     confidence: float) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """:func:`point_interval` of every row of a frame of moments (n, mean, std, total, binary, score) at once."""
    from scipy import stats

    n = frame["n"].to_numpy(dtype=float)
    mean, total = frame["mean"].to_numpy(dtype=float), frame["total"].fillna(0).to_numpy(dtype=float)
    std = frame["std"].astype(float).fillna(NAN).to_numpy(dtype=float)
    floor = np.array([bounds[s][0] if bounds[s][0] is not None else -np.inf for s in frame["score"]], dtype=float)
    ceiling = np.array([bounds[s][1] if bounds[s][1] is not None else np.inf for s in frame["score"]], dtype=float)
    wilson = frame["binary"].to_numpy(dtype=bool) & (floor == 0.0) & (ceiling == 1.0)
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.round(total) / n
        centre = (share + z * z / (2 * n)) / (1 + z * z / n)
        spread = z / (1 + z * z / n) * np.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
        half = stats.t.ppf(0.5 + confidence / 2, np.maximum(n - 1, 1)) * std / np.sqrt(n)
    low = np.where(wilson, np.maximum(0.0, centre - spread), np.maximum(floor, mean - half))
    high = np.where(wilson, np.minimum(1.0, centre + spread), np.minimum(ceiling, mean + half))
    spreadless = ~(std > 0)
    methods = np.where(wilson, "Wilson", "t").astype(object)
    methods[~wilson & spreadless] = [f"too few: {int(k)} values without spread" for k in n[~wilson & spreadless]]
    few = n < 2
    methods[few] = [f"too few: {int(k)} scored value{'s' if k != 1 else ''}" for k in n[few]]
    blank = few | (~wilson & spreadless)
    return np.where(blank, NAN, low), np.where(blank, NAN, high), list(methods)


def _changes(keyed: dict[str, Any], order: dict[int, int]) -> pd.DataFrame:
    """Per (run, model, score): the test against the previous run of that model and score."""
    if not keyed["value"].size:
        return pd.DataFrame()
    run_pos = np.array([order[int(r)] for r in np.unique(keyed["run_id"])])
    run_ids = np.unique(keyed["run_id"])
    position = run_pos[np.searchsorted(run_ids, keyed["run_id"])]
    sort = np.lexsort((position, keyed["score_code"], keyed["model_code"]))
    model, score, pos = keyed["model_code"][sort], keyed["score_code"][sort], position[sort]
    key, ident, value, run = keyed["key"][sort], keyed["id_code"][sort], keyed["value"][sort], keyed["run_id"][sort]
    group = np.flatnonzero(np.diff(model.astype(np.int64) * (1 << 20) + score, prepend=-1) != 0)
    contents_changed = key.max() != ident.max()  # dense numbers: some id names two contents somewhere
    found = []
    for start, stop in zip(group, [*group[1:], len(model)]):
        series = np.flatnonzero(np.diff(pos[start:stop], prepend=-1) != 0) + start
        if len(series) < 2:
            continue
        keys, column = np.unique(key[start:stop], return_inverse=True)
        cube = np.full((len(series), len(keys)), NAN)
        row = np.searchsorted(series, np.arange(start, stop), side="right") - 1
        cube[row, column] = value[start:stop]
        n, delta, p = series_tests(cube)
        bounds = [*series, stop]
        names = (keyed["models"][model[start]], keyed["scores"][score[start]])
        for i in range(1, len(series)):
            left_out = 0
            if contents_changed:
                before, after = slice(bounds[i - 1], bounds[i]), slice(bounds[i], bounds[i + 1])
                left_out = np.intersect1d(ident[before], ident[after]).size - np.intersect1d(key[before], key[after]).size
            found.append((int(run[series[i]]), *names, int(run[series[i - 1]]), int(n[i - 1]), int(left_out),
                          float(delta[i - 1]), float(p[i - 1])))
    return pd.DataFrame(found, columns=["run_id", "model", "score", "previous_run", "n_paired", "left_out", "delta",
                                        "p_value"])


def _flag(row: Any, alpha: float) -> str:
    if not (isinstance(row.p_adjusted, float) and row.p_adjusted < alpha):
        return ""
    direction = score_direction(row.score, None)
    if direction == "none":
        return "changed"
    return "better" if (row.delta > 0) == (direction == "higher") else "worse"


def _notes(frame: pd.DataFrame, counts: dict[str, int], alpha: float) -> list[str]:
    notes = []
    few = frame[frame["previous_run"].notna() & frame["p_value"].isna()]
    if len(few):
        notes.append(f"{len(few)} run(s) not tested against the previous one: {TOO_FEW}")
    left = frame["left_out"].fillna(0)
    if (left > 0).any():
        notes.append(f"{int(left.sum())} datum pair(s) left out: same id, changed query or references across versions")
    for model, tests in counts.items():
        if tests:
            notes.append(f"{model}: {tests} test(s) against the previous run, Holm-adjusted together "
                         f"(false alarms across this history held at {alpha:g})")
    return notes
