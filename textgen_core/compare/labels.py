"""Human labels of a run: where they come from (the dashboard, a file, a human column), which cells to label next,
and the judge's value beside the people's for every labelled cell.

Sampling is kept with each label because the bias-corrected estimates depend on
it: ``random`` (uniform, probability n/N), ``stratified`` (by the judge's value,
probability n_h/N_h in its stratum), ``disagreement`` (cells where the judge is
least sure or people split first: no known probability), ``import`` (a file;
assumed uniform unless told otherwise) and ``dataset`` (a human column of the
uploaded file, which covers every datum that has a value).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..datasets import read_table
from ..errors import InputError, ParameterError
from ..export import FORMULA_PREFIXES
from ..store import Store
from .stats import rng_for

STRATEGIES = ("random", "stratified", "disagreement", "pairs")
#: Sampling kinds whose inclusion probabilities are known (or uniform), so the plain or weighted PPI++ applies.
#: ``pairs`` is a uniform sample of the datums every model was scored on, each with all its models' cells.
RANDOM_KINDS = ("random", "stratified", "import", "dataset", "weighted", "pairs")
#: Sampling of imported labels that each carry their inclusion probability (a ``probability`` column).
WEIGHTED = "weighted"
#: The annotator name of a human column of the dataset: 'column:NAME'.
COLUMN_ANNOTATOR = "column:{}"


def scale_of(score: str, observed: Sequence[float] | None = None) -> tuple[float, float | None, list[float] | None]:
    """(low, high, the allowed values when the scale is a few whole numbers, e.g. 0/1 or 1..5).

    A declared range of whole numbers at most 10 apart is a scale of whole
    values when the judge's ``observed`` values are all whole (faithfulness,
    0-1 with fractions, is continuous; qa_grade, 0 or 1, is a yes/no label).
    """
    try:
        from ..registry import get_metric

        low, high = get_metric(score).value_range
    except ParameterError:
        return 0.0, None, None
    whole = observed is None or all(float(v).is_integer() for v in observed)
    if high is not None and float(low).is_integer() and float(high).is_integer() and high - low <= 10 and whole:
        return float(low), float(high), [float(v) for v in range(int(low), int(high) + 1)]
    return float(low), None if high is None else float(high), None


def judge_values(store: Store, run_id: int, score: str) -> pd.DataFrame:
    """datum_id, model, judge: the score's scored cells of the run."""
    found = store.score_values(run_id, scores=[score])
    return found.rename(columns={"value": "judge"})[["datum_id", "model", "judge"]]


def human_labels(store: Store, run_id: int, score: str, human_column: str | None = None) -> pd.DataFrame:
    """datum_id, model, annotator, value, sampling, probability: stored labels plus a human column of the dataset."""
    stored = store.labels(run_id, score=score)[["datum_id", "model", "annotator", "value", "sampling", "probability"]]
    if human_column is None:
        return stored.reset_index(drop=True)
    run = store.get_run(run_id)
    dataset = store.load_dataset(run["dataset_id"])
    rows = column_labels(dataset, human_column)
    _check_scale(rows, score, human_column, judge_values(store, run_id, score)["judge"].tolist())
    column = pd.DataFrame(rows, columns=stored.columns)
    return pd.concat([stored, column], ignore_index=True) if not stored.empty else column


def column_labels(dataset: Any, column: str) -> list[tuple]:
    """(datum_id, model, annotator, value, 'dataset', None) of every row whose human ``column`` holds a number;
    a ParameterError names a column the dataset does not have, or one with text but no number."""
    if column not in dataset.metadata_columns:
        shown = ", ".join(dataset.metadata_columns) or "none"
        raise ParameterError(f"no human column {column!r} in the dataset; metadata columns: {shown}")
    rows = []
    filled = 0
    for row in dataset.rows:
        raw = row.metadata.get(column)
        filled += _text(raw) != ""
        number = _number(raw)
        if number is not None:
            rows.append((row.datum_id, row.model, COLUMN_ANNOTATOR.format(column), number, "dataset", None))
    if filled and not rows:
        raise ParameterError(f"the human column {column!r} holds no numbers (e.g. "
                             f"{_first_text(dataset.rows, column)!r}); a human column gives a value on the "
                             f"score's scale")
    return rows


def check_human_column(dataset: Any, score: str, column: str, scores: Sequence[str]) -> None:
    """The preflight of a calibration from a human ``column`` of ``dataset``, before anything is scored: the run
    will have ``score`` (one of ``scores``), the column exists, holds numbers, and they are on the score's
    declared scale (whole values on a scale of a few whole numbers when the column's values are all whole).
    A ParameterError says what is wrong; the check after scoring also knows the judge's values."""
    if score not in scores:
        raise ParameterError(f"this run has no score {score!r}; its scores: {', '.join(scores) or 'none'}")
    rows = column_labels(dataset, column)
    _check_scale(rows, score, column, [r[3] for r in rows])


def _first_text(rows, column: str) -> str:
    return next(_text(r.metadata.get(column)) for r in rows if _text(r.metadata.get(column)))


def _check_scale(rows: list[tuple], score: str, column: str, observed: Sequence[float]) -> None:
    """Refuse a human column whose values are not on the score's scale (as `labels import` refuses a file):
    calibrating a 0-1 score with 1-5 stars would print an impossible mean. ``observed``: the values that tell a
    scale of whole numbers from a continuous one (the judge's, or before scoring the column's own)."""
    low, high, values = scale_of(score, observed)
    bad = [(d, m, v) for d, m, _a, v, _s, _p in rows
           if v < low or (high is not None and v > high) or (values is not None and v not in values)]
    if bad:
        scale = (", ".join(f"{v:g}" for v in values) if values is not None
                 else f"{low:g} to {high:g}" if high is not None else f"{low:g} or more")
        datum, model, value = bad[0]
        raise ParameterError(f"the human column {column!r} is not on the scale of {score} ({scale}): {len(bad)} of "
                             f"{len(rows)} values are off it, the first {value:g} (datum {datum!r}, model "
                             f"{model!r}); rescale the column or pick the score it rates")


def judge_and_human(store: Store, run_id: int, score: str, human_column: str | None = None) -> pd.DataFrame:
    """One row per labelled cell with a judge value: datum_id, model, judge, human (the annotators' mean),
    annotators, sampling, probability. Cells the judge left unscored are not here (they have no judge value)."""
    labels = human_labels(store, run_id, score, human_column)
    columns = ["datum_id", "model", "judge", "human", "annotators", "sampling", "probability"]
    if labels.empty:
        return pd.DataFrame(columns=columns)
    grouped = labels.groupby(["datum_id", "model"], sort=False).agg(
        human=("value", "mean"), annotators=("annotator", "nunique"), sampling=("sampling", "first"),
        probability=("probability", "first")).reset_index()
    return grouped.merge(judge_values(store, run_id, score), on=["datum_id", "model"], how="inner")[columns]


def sampling_note(sampling: Sequence[str]) -> str:
    """'' when every label came from a random or known-probability sample; else why the plain estimate is off."""
    odd = sorted(set(sampling) - set(RANDOM_KINDS))
    if not odd:
        return ""
    return (f"some labels were not sampled at random ({', '.join(odd)}): cells picked because the judge seemed "
            "unsure or people disagreed are not like the rest, so no bias-corrected estimate is given from them; "
            "label a random or stratified sample")


def select_cells(store: Store, run_id: int, score: str, strategy: str, n: int, *, seed: int = 0,
                 models: Sequence[str] | None = None, annotator: str | None = None,
                 viewer: str | None = None) -> pd.DataFrame:
    """datum_id, model, judge, probability: up to ``n`` judge-scored cells to label, in labelling order.

    Cells this ``annotator`` already labelled are skipped (their probability
    still counts them: the sample is drawn from every scored cell, then the done
    ones are left out). ``random``: a uniform sample; ``stratified``: an equal
    share from each judge value (or each fifth of the range for a continuous
    score), each with its stratum's probability; ``pairs``: whole datums at random with every model's cell
    (what a calibrated comparison of models needs); ``disagreement``: cells where
    people already split or disagree with the judge first, then those whose judge
    value is nearest the middle of the range (no known probability); the
    ``viewer``'s own labels do not reorder it, so a queue holds still while
    someone works through it.
    """
    if strategy not in STRATEGIES:
        raise ParameterError(f"selection must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ParameterError(f"the number of cells to label must be a whole number of at least 1, got {n!r}")
    cells = judge_values(store, run_id, score)
    if models is not None:
        cells = cells[cells["model"].isin(models)]
    cells = cells.sort_values(["datum_id", "model"], kind="stable").reset_index(drop=True)
    rng = rng_for(seed, "labels", score, strategy)
    cells["_key"] = rng.permutation(len(cells))
    total = len(cells)
    if strategy == "random":
        chosen = cells.sort_values("_key").head(n).assign(probability=min(n, total) / max(total, 1))
    elif strategy == "stratified":
        chosen = _stratified(cells, score, n)
    elif strategy == "pairs":
        chosen = _pairs(cells, n)
    else:
        chosen = _unsure_first(store, run_id, score, cells, viewer).head(n).assign(probability=float("nan"))
    if annotator is not None:
        done = store.labels(run_id, score=score, annotator=annotator)
        seen = set(zip(done["datum_id"], done["model"]))
        chosen = chosen[[(d, m) not in seen for d, m in zip(chosen["datum_id"], chosen["model"])]]
    return chosen[["datum_id", "model", "judge", "probability"]].reset_index(drop=True)


def _pairs(cells: pd.DataFrame, n: int) -> pd.DataFrame:
    """Whole datums at random, each with the cells of every model: about ``n`` cells, a datum never split.

    Only datums scored for every model are drawn (a paired comparison needs both sides); each cell's
    probability is the share of those datums drawn."""
    models = cells["model"].nunique()
    complete = cells.groupby("datum_id")["model"].transform("nunique") == models
    eligible = cells[complete]
    datums = eligible.groupby("datum_id", sort=True)["_key"].min().sort_values()
    take = datums.index[:max(1, -(-n // max(models, 1)))] if len(datums) else datums.index
    order = {datum: i for i, datum in enumerate(take)}
    chosen = eligible[eligible["datum_id"].isin(order)].assign(_order=lambda f: f["datum_id"].map(order))
    probability = len(take) / len(datums) if len(datums) else float("nan")
    return chosen.sort_values(["_order", "model"], kind="stable").assign(probability=probability)


def _stratified(cells: pd.DataFrame, score: str, n: int) -> pd.DataFrame:
    _low, _high, values = scale_of(score, cells["judge"].tolist())
    if values is not None or cells["judge"].nunique() <= 5:
        strata = cells["judge"]
    else:
        strata = pd.qcut(cells["judge"].rank(method="first"), 5, labels=False)
    groups = [part.sort_values("_key") for _, part in cells.groupby(strata, sort=True)]
    share, left = divmod(n, max(len(groups), 1))
    picked = []
    for i, part in enumerate(groups):
        take = min(len(part), share + (1 if i < left else 0))
        picked.append(part.head(take).assign(probability=take / len(part), _order=range(take)))
    if not picked:
        return cells.assign(probability=[])
    out = pd.concat(picked)
    return out.sort_values(["_order", "_key"], kind="stable")  # interleave the strata: any prefix is balanced


def _unsure_first(store: Store, run_id: int, score: str, cells: pd.DataFrame, viewer: str | None) -> pd.DataFrame:
    low, high, _ = scale_of(score)
    middle = (low + high) / 2 if high is not None else float(cells["judge"].median()) if len(cells) else 0.0
    width = (high - low) if high is not None and high > low else 1.0
    labels = store.labels(run_id, score=score)
    labels = labels[labels["annotator"] != viewer] if viewer is not None else labels
    split = set()
    if not labels.empty:
        merged = labels.merge(cells[["datum_id", "model", "judge"]], on=["datum_id", "model"])
        spread = merged.groupby(["datum_id", "model"]).agg(lo=("value", "min"), hi=("value", "max"),
                                                             judge=("judge", "first"))
        split = set(spread.index[(spread["hi"] > spread["lo"]) | (spread["lo"] != spread["judge"])
                                 | (spread["hi"] != spread["judge"])])
    order = cells.assign(_split=[(d, m) not in split for d, m in zip(cells["datum_id"], cells["model"])],
                         _unsure=(cells["judge"] - middle).abs() / width)
    return order.sort_values(["_split", "_unsure", "_key"], kind="stable")


#: Every sampling kind a stored label may carry (a labels file's ``sampling`` column is checked against it).
SAMPLINGS = ("random", "stratified", "disagreement", "import", "dataset", WEIGHTED)


@dataclass(frozen=True)
class Imported:
    """What a labels file stored: how many labels, per score and per sampling kind."""

    count: int
    scores: dict[str, int]
    samplings: dict[str, int]


def import_labels(store: Store, run_id: int, path: str | Path, score: str | None = None, *,
                  annotator: str | None = None, sampling: str | None = None) -> Imported:
    """Read a labels file (columns ``datum_id`` (or ``id``), ``model``, ``value``; optional ``score``,
    ``annotator``, ``note``, ``sampling`` and ``probability``) and store it.

    A file written by :func:`export_labels` comes back as it was: each row's
    ``score`` and ``sampling`` are kept (``score`` and ``sampling`` given here
    fill the rows whose cell is empty, or the whole file without the column),
    and a CSV's formula guard (a ``'`` before ``= + - @``) is taken off the ids
    and texts it was put on. A ``probability`` (0 < p <= 1, how likely the cell
    was to be drawn) makes a label ``weighted`` unless its sampling says
    ``stratified`` or ``random``; an empty one means a uniformly random draw.
    Every row is checked first (its datum and model exist in the run, its score
    is the run's, its value is on the score's scale), so a bad row stores nothing
    and is named by file, row and column.
    """
    name = Path(path).name
    frame = read_table(Path(path))
    key = "datum_id" if "datum_id" in frame.columns else "id"  # the key every export writes; 'id' as files had
    missing = [c for c in (key, "model", "value") if c not in frame.columns]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}; a labels file has datum_id, model, value "
                         "(and optionally score, annotator, note, sampling, probability)", file=name)
    if annotator is None and "annotator" not in frame.columns:
        raise InputError("no annotator column: add one, or name the annotator (--annotator)", file=name)
    if score is None and "score" not in frame.columns:
        raise InputError("no score column: add one, or name the score the labels are on (--score)", file=name)
    if sampling is not None and sampling not in SAMPLINGS:
        raise ParameterError(f"sampling must be one of {', '.join(SAMPLINGS)}, got {sampling!r}")
    run = store.get_run(run_id)
    run_scores = list(dict.fromkeys(store.score_counts(run_id)["score"]))
    if score is not None and score not in run_scores:
        raise ParameterError(f"run {run_id} has no score {score!r}; its scores: {', '.join(run_scores) or 'none'}")
    dataset = store.load_dataset(run["dataset_id"])
    known = {(r.datum_id, r.model) for r in dataset.rows}
    ids, models = {d for d, _ in known}, {m for _, m in known}
    guarded = Path(path).suffix.lower() == ".csv"
    scales: dict[str, tuple] = {}
    rows: list[tuple[Any, ...]] = []
    seen: dict[tuple[str, str, str, str], int] = {}
    for number, record in frame.iterrows():
        row = int(number)
        datum_id = _unguarded(_text(record[key]), ids, guarded)
        model = _unguarded(_text(record["model"]), models, guarded)
        if (datum_id, model) not in known:
            column = key if datum_id not in ids else "model"
            raise InputError(f"no datum {datum_id!r} of model {model!r} in run {run_id}", file=name, row=row,
                             column=column)
        which = _text(record.get("score")) if "score" in frame.columns else ""
        which = which or (score or "")
        if which not in run_scores:
            raise InputError(f"run {run_id} has no score {which!r} (its scores: {', '.join(run_scores)})"
                             if which else "empty score (name it here, or with --score)", file=name, row=row,
                             column="score")
        if which not in scales:
            scales[which] = scale_of(which, judge_values(store, run_id, which)["judge"].tolist())
        low, high, values = scales[which]
        value = _number(record["value"])
        if value is None or value < low or (high is not None and value > high) or \
                (values is not None and value not in values):
            scale = (", ".join(f"{v:g}" for v in values) if values is not None
                     else f"{low:g} to {high:g}" if high is not None else f"{low:g} or more")
            raise InputError(f"{record['value']!r} is not a value of {which} ({scale})", file=name, row=row,
                             column="value")
        who = annotator or _unformula(_text(record.get("annotator")), guarded)
        if not who:
            raise InputError("empty annotator", file=name, row=row, column="annotator")
        note = _unformula(_text(record.get("note")), guarded) if "note" in frame.columns else ""
        earlier = seen.setdefault((datum_id, model, which, who), row)
        if earlier != row:
            raise InputError(f"datum {datum_id!r} of model {model!r} is labelled twice by {who!r} on {which} (also "
                             f"row {earlier}); keep one label per annotator and cell", file=name, row=row,
                             column=key)
        probability = None
        if "probability" in frame.columns and _text(record["probability"]):
            probability = _number(record["probability"])
            if probability is None or not 0.0 < probability <= 1.0:
                raise InputError(f"{record['probability']!r} is not an inclusion probability (0 < p <= 1)",
                                 file=name, row=row, column="probability")
        kind = _text(record.get("sampling")) if "sampling" in frame.columns else ""
        if kind and kind not in SAMPLINGS:
            raise InputError(f"{kind!r} is not a sampling ({', '.join(SAMPLINGS)})", file=name, row=row,
                             column="sampling")
        kind = kind or sampling or "import"
        if probability is not None and kind not in ("stratified", "random", WEIGHTED):
            kind = WEIGHTED
        rows.append((datum_id, model, which, who, value, note or None, kind, probability))
    count = store.write_labels(run_id, rows)
    return Imported(count, dict(Counter(r[2] for r in rows)), dict(Counter(r[6] for r in rows)))


def _unguarded(text: str, known: set[str], guarded: bool) -> str:
    """An id or model name as the run has it: a CSV's formula guard (a leading ') taken off when it was put on."""
    if guarded and text not in known and text.startswith("'") and text[1:2] in FORMULA_PREFIXES \
            and text[1:] in known:
        return text[1:]
    return text


def _unformula(text: str, guarded: bool) -> str:
    """A text cell of a CSV written by the export, with the formula guard (' before = + - @ at a line start)
    taken off."""
    return _GUARD.sub(lambda m: m.group(1), text) if guarded else text


_GUARD = re.compile("(^|\r\n|\r|\n)'(?=[" + re.escape("".join(FORMULA_PREFIXES)) + "])")


def export_labels(store: Store, run_id: int) -> pd.DataFrame:
    """Every label of a run as a table: datum_id, model, score, value, annotator, note, sampling, probability,
    time (keyed as every export is; :func:`import_labels` reads it back)."""
    store.get_run(run_id)
    frame = store.labels(run_id)
    return frame.rename(columns={"created_at": "labelled_at"})[
        ["datum_id", "model", "score", "value", "annotator", "note", "sampling", "probability", "labelled_at"]]


def _text(value: Any) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value).strip()


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None if value is None else float(value)
    try:
        number = float(str(value).strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None
