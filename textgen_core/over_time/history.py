"""The history of a named dataset: every finished run on any of its versions, per model and score, its mean with an
interval, in time order, and whether it differs from the previous run of that model (see :mod:`.changes`).

Datums pair across runs by id and content (query and references): across versions an id whose content changed
pairs with nothing, and the ``left_out`` column counts those. Unscored cells are not in the means; the ``unscored``
column counts them.

A point's interval follows the one small-sample rule (:mod:`textgen_core.compare.small_sample`,
docs/statistics.md), as ``summary RUN`` does (a bootstrapped point draws its resamples from another seed, so its
ends may differ from the summary's in the third decimal): never of zero width, wide enough at small n, and
"too few" with the reason where the rule gives none (one value of a bounded score; fewer than five, or values
without spread, of a score without a bounded range).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..compare.comparison import score_direction
from ..compare.intervals import BOOTSTRAP_MAX
from ..compare.small_sample import Interval, mean_intervals, moments_interval
from ..errors import ParameterError
from ..store import Store
from .changes import FALSE_ALARMS, TOO_FEW, holm, series_tests

NAN = float("nan")
COLUMNS = ["run_id", "run", "created_at", "version", "judge", "model", "score", "n", "mean", "ci_low", "ci_high",
           "interval", "unscored", "previous_run", "n_paired", "left_out", "delta", "p_value", "p_adjusted", "flag"]


def point_intervals(frame: pd.DataFrame, keyed: dict[str, Any], bounds: dict[str, tuple[float | None, float | None]],
                    confidence: float) -> list[Interval]:
    """The interval of each row's mean (run_id, model, score, n, mean, std, total, binary) under the one
    small-sample rule (:mod:`textgen_core.compare.small_sample`). From :data:`BOOTSTRAP_MAX` values on the rule
    needs only the moments; below, the values (``keyed``, from :meth:`OverTime.keyed_values`), all points at once
    (:func:`mean_intervals`: the points of one size share their bootstrap draws, seed 0)."""
    groups = _groups(keyed)
    rows = list(frame[["run_id", "model", "score", "n", "mean", "std", "total", "binary"]].itertuples(index=False))
    small = [i for i, row in enumerate(rows) if row.n < BOOTSTRAP_MAX]
    found: list[Interval | None] = [None] * len(rows)
    drawn = mean_intervals([groups.get((int(rows[i].run_id), rows[i].model, rows[i].score), np.empty(0))
                            for i in small], [bounds[rows[i].score] for i in small], confidence=confidence)
    for i, interval in zip(small, drawn):
        found[i] = interval
    for i, row in enumerate(rows):
        if found[i] is None:
            found[i] = moments_interval(int(row.n), float(row.mean), float(row.std), float(row.total),
                                        bool(row.binary), bounds=bounds[row.score], confidence=confidence)
    return found  # type: ignore[return-value]


def interval_columns(intervals: Sequence[Interval]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(ci_low, ci_high, interval) columns: the method, or 'too few (why)' with NaN ends."""
    low = np.array([i.low if i.given else NAN for i in intervals], dtype=float)
    high = np.array([i.high if i.given else NAN for i in intervals], dtype=float)
    return low, high, [i.method if i.given else i.text() for i in intervals]


def _groups(keyed: dict[str, Any]) -> dict[tuple[int, str, str], np.ndarray]:
    """The keyed values split by (run, model, score)."""
    if not keyed["value"].size:
        return {}
    run, model, score = keyed["run_id"].astype(np.int64), keyed["model_code"], keyed["score_code"]
    order = np.lexsort((score, model, run))
    run, model, score, value = run[order], model[order], score[order], keyed["value"][order]
    starts = np.flatnonzero((np.diff(run, prepend=-1) != 0) | (np.diff(model, prepend=-1) != 0)
                            | (np.diff(score, prepend=-1) != 0))
    stops = [*starts[1:], len(value)]
    return {(int(run[a]), keyed["models"][model[a]], keyed["scores"][score[a]]): value[a:b]
            for a, b in zip(starts, stops)}


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
    frame["ci_low"], frame["ci_high"], frame["interval"] = interval_columns(
        point_intervals(frame, keyed, bounds, confidence))
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
