"""Agreement within a judge panel: Krippendorff's alpha per score, its bootstrap interval, and the split cells.

The units are the run's cells (datum x model) and the coders the panel's
members. A member that judged a cell several times (``--samples``) gives the
cell one value: the mean of its scored samples, or for a yes/no score the
majority (a tie gives no value). A label metric (its votes carry a ``label``)
is compared on the labels themselves, nominal, not on their pass value. An unscored vote is a missing value, never 0;
a cell with fewer than two members' values is not pairable and is left out of
alpha (Krippendorff 2011). Alpha is undefined, with a reason instead of a
number, when no cell is pairable or every pairable value is the same.

The interval is a percentile bootstrap over the pairable cells (cells drawn
with replacement, alpha recomputed, the 2.5th and 97.5th percentiles kept),
seeded by the run's score name so a report reads the same twice; it is NaN
under 3 pairable cells. A cell is **split** when its members' values are not
all the same (yes/no scores) or their range is above ``threshold`` times the
score's declared span (default :data:`SPLIT_SHARE`: on a 1-5 rating, members
two or more points apart).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import ParameterError
from ..judge.metrics.criteria import restore_run
from ..store import Store
from . import agreement_stats as ag
from .labels import scale_of
from .stats import rng_for

#: A cell is split when its members' range is above this share of the score's span.
SPLIT_SHARE = 0.25
#: The columns of a vote (as the votes table stores them; ``label`` may be absent).
VOTE_COLUMNS = ["datum_id", "model", "metric", "score", "judge", "sample", "value", "reason", "label"]
LEVELS = ("nominal", "ordinal", "interval", "ratio")
#: Columns of the split and member tables that a member's own column must not take (see member_column).
KEY_COLUMNS = frozenset({"datum_id", "model", "score", "spread", "panel"})
#: Split cells named in a summary line before the rest are counted.
SPLIT_SHOWN = 5


@dataclass
class PanelAgreement:
    """How much a judge panel agrees on one score."""

    score: str
    #: Level of measurement alpha used: nominal (yes/no), ordinal (a few whole values), interval, or ratio.
    level: str
    members: list[str]
    #: Cells with a vote, and cells with two or more members' values (the units alpha counts).
    n_cells: int
    n_units: int
    alpha: float = float("nan")
    low: float = float("nan")
    high: float = float("nan")
    #: Why alpha is undefined ('' when it is a number).
    reason: str = ""
    #: Range above which a numeric cell is split (0: any disagreement).
    threshold: float = 0.0
    #: datum_id, model, one column per member (its value or label; missing = no value; named by member_column),
    #: spread (the members' range; for nominal scores, how many different values beyond one): widest first.
    split: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: model, judge, mean (of the member's cell values: its samples' mean), n_scored, n_unscored (cells).
    by_member: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def n_split(self) -> int:
        return len(self.split)


def panel_report(store: Store, run_id: int, *, threshold: float = SPLIT_SHARE, confidence: float = 0.95,
                 resamples: int = ag.RESAMPLES, seed: int = 0) -> list[PanelAgreement]:
    """Agreement per score of a run judged by a panel (two or more members); [] for any other run."""
    votes = store.votes_for_run(run_id)
    if votes.empty or votes["judge"].nunique() < 2:
        return []
    restore_run(store.get_run(run_id))  # a custom metric's scale, as the run stored it
    return [agreement_of(votes, str(score), threshold=threshold, confidence=confidence, resamples=resamples,
                         seed=seed) for score in dict.fromkeys(votes["score"])]


def panel_lines(reports: list[PanelAgreement], shown: int = SPLIT_SHOWN) -> list[str]:
    """One line per score: alpha with its interval (or why it has none), the cells it counts, the split cells."""
    lines = []
    for r in reports:
        if r.reason:
            told = f"alpha undefined: {r.reason}"
        else:
            interval = "too few cells for an interval" if math.isnan(r.low) else f"[{r.low:.3f}, {r.high:.3f}]"
            told = f"alpha {r.alpha:.3f} {interval}"
        rule = "members not unanimous" if r.threshold == 0 else f"members more than {r.threshold:g} apart"
        named = [f"{d} ({m})" for d, m in zip(r.split["datum_id"].head(shown), r.split["model"].head(shown))]
        if r.n_split > shown:
            named.append(f"{r.n_split - shown} more")
        split = f"{r.n_split} split ({rule})" + (": " + ", ".join(named) if named else "")
        lines.append(f"panel agreement, {r.score} ({r.level}, {len(r.members)} members): {told}; "
                     f"{r.n_units} of {r.n_cells} cells judged by two or more members; {split}")
    return lines


#: What the panel lines mean, printed once under them.
PANEL_LEGEND = ("Alpha: Krippendorff's alpha among the judge panel's members over the cells (1 = they always "
                "agree, 0 = no better than chance), with a 95% bootstrap interval over cells; unscored votes are "
                "missing, not 0. 'textgen-eval summary RUN' prints this again; Explore shows each member's votes.")


def member_means(votes: pd.DataFrame) -> pd.DataFrame:
    """Per model and member: the mean of the member's cell values (each the mean of its scored samples) and how
    many cells it scored and left unscored; an unscored vote is never counted as 0."""
    grid = member_values(votes, "interval")
    long = grid.stack(future_stack=True).rename("value").reset_index()
    long.columns = ["datum_id", "model", "judge", "value"]
    out = long.groupby(["model", "judge"], sort=True).agg(
        mean=("value", "mean"), n_scored=("value", "count"), n_cells=("value", "size")).reset_index()
    out["n_unscored"] = out.pop("n_cells") - out["n_scored"]
    return out


def member_values(votes: pd.DataFrame, level: str) -> pd.DataFrame:
    """(datum_id, model) x member: each member's value of each cell, from its scored samples."""
    scored = votes.dropna(subset=["value"])
    keys = ["datum_id", "model", "judge"]
    if level == "nominal":
        counts = scored.groupby([*keys, "value"]).size().rename("n").reset_index()
        top = counts.groupby(keys)["n"].transform("max")
        winners = counts[counts["n"] == top]
        sole = winners.groupby(keys)["value"].agg(lambda v: v.iloc[0] if len(v) == 1 else np.nan)
        values = sole.reset_index()
    else:
        values = scored.groupby(keys)["value"].mean().reset_index()
    cells = votes[["datum_id", "model"]].drop_duplicates()
    grid = values.pivot(index=["datum_id", "model"], columns="judge", values="value")
    index = pd.MultiIndex.from_frame(cells)
    members = sorted(set(votes["judge"]))
    return grid.reindex(index=index, columns=members).sort_index()


def choose_level(score: str, values: np.ndarray) -> str:
    """Nominal for a yes/no (0/1) score, ordinal for a scale of a few whole values, else interval."""
    _low, _high, whole = scale_of(score, values.tolist())
    if whole == [0.0, 1.0] or (whole is None and set(values.tolist()) <= {0.0, 1.0}):
        return "nominal"
    return "ordinal" if whole is not None else "interval"


def agreement_of(votes: pd.DataFrame, score: str, *, level: str | None = None, threshold: float = SPLIT_SHARE,
                 confidence: float = 0.95, resamples: int = ag.RESAMPLES, seed: int = 0) -> PanelAgreement:
    """Agreement of the panel on ``score`` from its votes (columns as :data:`VOTE_COLUMNS`)."""
    if level is not None and level not in LEVELS:
        raise ParameterError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    if not threshold >= 0:
        raise ParameterError(f"the split threshold must be zero or more, got {threshold!r}")
    mine = votes[votes["score"] == score]
    names = _labels(mine)
    if names is not None:  # a label metric: agreement on the labels themselves, not on pass / fail
        if level not in (None, "nominal"):
            raise ParameterError(f"{score} gives labels ({', '.join(names)}): its level is nominal, not {level}")
        mine = mine.assign(value=mine["label"].map({name: float(i) for i, name in enumerate(names)}))
        level = "nominal"
    raw = mine["value"].dropna().to_numpy(dtype=float)
    level = level or choose_level(score, raw)
    grid = member_values(mine, level)
    members = [str(m) for m in grid.columns]
    matrix = grid.to_numpy(dtype=float)
    pairable = (~np.isnan(matrix)).sum(axis=1) >= 2
    report = PanelAgreement(score, level, members, n_cells=len(grid), n_units=int(pairable.sum()))
    report.threshold = 0.0 if level == "nominal" else threshold * _span(score, raw)
    report.split = _split(grid, pairable, report.threshold, level, names)
    report.by_member = member_means(votes[votes["score"] == score])
    report.reason = _undefined(matrix[pairable], len(members), names)
    if not report.reason:
        report.alpha = alpha(matrix, level)
        report.low, report.high = interval(matrix, level, confidence=confidence, resamples=resamples,
                                           rng=rng_for(seed, score, "panel"))
    return report


def _labels(votes: pd.DataFrame) -> list[str] | None:
    """The labels a label metric's scored votes gave, sorted; None when the votes are numbers."""
    if "label" not in votes.columns:
        return None
    scored = votes[votes["value"].notna()]
    if scored.empty or scored["label"].isna().any():
        return None
    return sorted({str(label) for label in scored["label"]})


def alpha(matrix: np.ndarray, level: str) -> float:
    """Krippendorff's alpha of a (units x coders) matrix, NaN = missing; the interval level from moments."""
    if level != "interval":
        return ag.krippendorff_alpha(matrix.T, level)
    return _interval_alpha(*_unit_moments(matrix))


def interval(matrix: np.ndarray, level: str, *, confidence: float, resamples: int,
             rng: np.random.Generator) -> tuple[float, float]:
    """Percentile bootstrap interval of alpha over the pairable units (rows)."""
    if not 0.0 < confidence < 1.0:
        raise ParameterError(f"confidence must be between 0 and 1, got {confidence!r}")
    if level != "interval":  # a resample's coincidences: the units' own, weighted by how often each was drawn
        return ag.krippendorff_interval(matrix.T, level, confidence=confidence, resamples=resamples, rng=rng)
    # every resample of a block of draws at once (agreement_stats.bootstrap_interval: the same draws as one at a time)
    return ag.bootstrap_interval(_interval_alpha, *_unit_moments(matrix), confidence=confidence, resamples=resamples,
                                 rng=rng, many=_interval_alphas)


def _unit_moments(matrix: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per pairable unit: values m, their sum, sum of squares, and the within-unit term sum((vi-vj)^2)/(m-1)."""
    seen = ~np.isnan(matrix)
    m = seen.sum(axis=1)
    keep = m >= 2
    values = np.where(seen, matrix, 0.0)[keep]
    m = m[keep].astype(float)
    s1 = values.sum(axis=1)
    s2 = (values ** 2).sum(axis=1)
    within = 2.0 * (m * s2 - s1 ** 2) / (m - 1.0)  # ordered pairs i != j of the unit
    return m, s1, s2, within


def _interval_alpha(m: np.ndarray, s1: np.ndarray, s2: np.ndarray, within: np.ndarray) -> float:
    """1 - (n - 1) D_o / D_e with squared differences: D_e over every ordered pair of pairable values."""
    n = float(m.sum())
    expected = 2.0 * (n * float(s2.sum()) - float(s1.sum()) ** 2)
    if n <= 1 or expected <= 1e-12 * max(1.0, n * float(s2.sum())):
        return float("nan")
    return float(1.0 - (n - 1.0) * float(within.sum()) / expected)


def _interval_alphas(m: np.ndarray, s1: np.ndarray, s2: np.ndarray, within: np.ndarray) -> np.ndarray:
    """:func:`_interval_alpha` of each row of (resamples x units) moment arrays."""
    n, total1, total2 = m.sum(axis=1), s1.sum(axis=1), s2.sum(axis=1)
    expected = 2.0 * (n * total2 - total1 ** 2)
    undefined = (n <= 1) | (expected <= 1e-12 * np.maximum(1.0, n * total2))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(undefined, np.nan, 1.0 - (n - 1.0) * within.sum(axis=1) / expected)


def _undefined(pairable: np.ndarray, members: int, names: list[str] | None = None) -> str:
    if members < 2:
        return "one judge: agreement needs a panel of two or more members"
    if pairable.size == 0:
        return "no cell has values from two members (nothing to pair)"
    values = pairable[~np.isnan(pairable)]
    if np.ptp(values) == 0:
        same = f"the label {names[int(values[0])]!r}" if names else f"the same value ({values[0]:g})"
        return (f"every member gave every pairable cell {same}: alpha is undefined without variation (the members "
                "never disagreed)")
    return ""


def _span(score: str, raw: np.ndarray) -> float:
    low, high, _values = scale_of(score, raw.tolist())
    if high is not None:
        return float(high - low)
    return float(np.ptp(raw)) if raw.size else 0.0


def member_column(member: str) -> str:
    """A member's column in a table of cells: its name, unless a member is called like a key column."""
    return f"{member} (member)" if member in KEY_COLUMNS else member


def _split(grid: pd.DataFrame, pairable: np.ndarray, threshold: float, level: str,
           names: list[str] | None) -> pd.DataFrame:
    """Split cells: ``spread`` is the members' range, or for nominal scores how many values beyond one."""
    matrix = grid.to_numpy(dtype=float)
    spread = np.full(len(grid), np.nan)
    if pairable.any():
        rows = matrix[pairable]
        if level == "nominal":
            spread[pairable] = [np.unique(r[~np.isnan(r)]).size - 1 for r in rows]
        else:
            spread[pairable] = np.nanmax(rows, axis=1) - np.nanmin(rows, axis=1)
    grid = grid.rename(columns=member_column)
    out = grid.reset_index().assign(spread=spread)
    out.columns.name = None
    out = out[pairable & (spread > threshold)]
    if names is not None:  # show the labels the members gave
        out = out.assign(**{m: out[m].map(lambda v: None if pd.isna(v) else names[int(v)]) for m in grid.columns})
    return out.sort_values(["spread", "datum_id", "model"], ascending=[False, True, True],
                           kind="stable").reset_index(drop=True)
