"""What an alignment starts from: the editable criterion, the labelled cells, and their fixed split.

The criterion is the run's own definition of a custom judge metric, or, for a built-in rating metric
(coherence, summary_coherence), an editable copy of it (named ``<score>_custom``; said so). The people's value
of a cell is the most common value its annotators gave (a tie: the one nearest their mean, then the lower).
The split is stratified by that value and seeded, stored the first time, and read back afterwards: the
held-out cells are never shown to a candidate.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..compare.labels import judge_values
from ..compare.stats import rng_for
from ..errors import ParameterError
from ..judge.metrics import BUILT_IN
from ..judge.metrics.criteria import Criterion, criterion, definition, restore_run
from ..model import Datum
from ..store import Store
from .candidates import TrainingCell

Key = tuple[str, str]
#: Fewest labelled cells an alignment starts from.
MIN_CELLS = 10


@dataclass
class Setup:
    """Everything an alignment reads before any judge call."""

    run_id: int
    score: str
    labels_run: int
    seed: int
    holdout: float
    base: Criterion
    #: The built-in metric the base copies (None: a custom criterion).
    copied_from: str | None
    categories: list[float]
    weighted: bool
    cells: dict[Key, TrainingCell]
    train: list[Key]
    held_out: list[Key]
    #: Every label of the labelled cells (datum_id, model, annotator, value), for the Alternative Annotator Test.
    labels: pd.DataFrame
    #: The judge's current value of every scored cell of the run.
    current: dict[Key, float]
    notes: list[str] = field(default_factory=list)

    @property
    def categorical(self) -> bool:
        return not self.weighted


def copy_of_builtin(name: str) -> Criterion:
    """An editable criterion with a built-in rating metric's words, inputs and scale."""
    made = BUILT_IN.get(name)
    steps = getattr(getattr(made, "plan", None), "steps", ()) if made is not None else ()
    low, high = made.value_range if made is not None else (0.0, None)
    if made is None or len(steps) != 1 or "score" not in (steps[0].schema.get("properties") or {}) \
            or high is None or not float(low).is_integer() or not float(high).is_integer():
        raise ParameterError(f"{name} is not a judge score that can be aligned: align works on custom judge "
                             "metrics and on built-in ratings (coherence, summary_coherence)")
    system = steps[0].messages[0]["content"].split("\n\nReply with JSON")[0].strip()
    return criterion({"name": f"{name}_custom", "title": f"{made.label} (editable copy)", "criteria": system,
                      "inputs": [n for n in ("query", "prediction", "references", "contexts") if n in made.needs],
                      "output": {"type": "rating", "min": int(low), "max": int(high)}, "direction": made.direction},
                     f"copy of the built-in {name}")


def base_criterion(store: Store, run: dict[str, Any], score: str) -> tuple[Criterion, str | None]:
    restore_run(run)
    stored = ((run.get("judge") or {}).get("fingerprint") or {}).get("criteria") or {}
    if score in stored:
        return criterion(stored[score], f"run {run['run_id']}'s definition of {score}"), None
    known = definition(score)
    if known is not None:
        return known, None
    return copy_of_builtin(score), score


def people_value(values: list[float]) -> float:
    """The annotators' most common value; a tie goes to the value nearest their mean, then the lower."""
    counts = Counter(values)  # a pandas Series here cost 2-6 ms a cell, most of prepare()'s time
    most = max(counts.values())
    top = sorted(v for v, n in counts.items() if n == most)
    mean = float(np.mean(values))
    return float(min(top, key=lambda v: (abs(v - mean), v)))


def prepare(store: Store, run_id: int, score: str, *, labels_from: int | None = None, holdout: float = 0.3,
            seed: int = 0) -> Setup:
    """Read the criterion, the labels and the split (making and storing it the first time)."""
    with store.session():  # one open of the file for every read (no judge call is made here)
        return _prepare(store, run_id, score, labels_from, holdout, seed)


def _prepare(store: Store, run_id: int, score: str, labels_from: int | None, holdout: float, seed: int) -> Setup:
    if not isinstance(holdout, (int, float)) or isinstance(holdout, bool) or not 0.05 <= holdout <= 0.8:
        raise ParameterError(f"--holdout must be a share from 0.05 to 0.8 of the labelled cells, got {holdout!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ParameterError(f"--seed must be a whole number of 0 or more, got {seed!r}")
    run = store.get_run(run_id)
    if score not in run["metrics"]:
        raise ParameterError(f"run {run_id} has no score {score!r}; its metrics: {', '.join(run['metrics'])}")
    base, copied = base_criterion(store, run, score)
    out = base.output
    weighted = out.type == "rating"
    categories = [float(v) for v in range(out.min, out.max + 1)] if weighted else [0.0, 1.0]
    labels_run = run_id if labels_from is None else labels_from
    if labels_from is not None:
        store.get_run(labels_from)  # a StoreError naming the run when there is none
    labels = store.labels(labels_run, score=score)
    if labels.empty:
        raise ParameterError(f"run {labels_run} has no labels of {score}: label cells on the Label page or with "
                             f"'textgen-eval labels import {labels_run} FILE --score {score}'")
    off = labels[~labels["value"].isin(categories)]
    if len(off):
        first = off.iloc[0]
        raise ParameterError(f"label of {score} off its scale ({', '.join(f'{c:g}' for c in categories)}): "
                             f"{first['value']:g} by {first['annotator']!r} on datum {first['datum_id']!r}, model "
                             f"{first['model']!r} ({len(off)} such labels)")
    dataset = store.load_dataset(run["dataset_id"])
    rows = {(r.datum_id, r.model): r for r in dataset.rows if r.model in set(run["models"])}
    current = {(d, m): float(v) for d, m, v in judge_values(store, run_id, score).itertuples(index=False)}
    notes: list[str] = []
    off_scale = [k for k, v in current.items() if v not in categories]
    if off_scale:  # probability-weighted ratings (rating=weighted) are means between the levels
        current = {k: min(categories, key=lambda c: (abs(c - v), c)) for k, v in current.items()}
        notes.append(f"{len(off_scale)} of the run's values of {score} lie between the scale's levels (probability-"
                     "weighted ratings): kappa compares each with people at its nearest level")
    # each cell's labels in the order read (plain columns: a pandas group a cell cost ~0.5 ms, most of prepare())
    by_cell: dict[Key, tuple[list[float], list[str]]] = {}
    for datum, model, value, note in zip(labels["datum_id"].tolist(), labels["model"].tolist(),
                                         labels["value"].tolist(), labels["note"].tolist()):
        values, said = by_cell.setdefault((datum, model), ([], []))
        values.append(value)
        if isinstance(note, str) and note.strip():
            said.append(note)
    cells: dict[Key, TrainingCell] = {}
    for key in sorted(by_cell):
        row = rows.get(key)
        if row is None:
            continue
        values, said = by_cell[key]
        cells[key] = TrainingCell(row, people_value(values), current.get(key), " / ".join(said))
    missing = labels[["datum_id", "model"]].drop_duplicates().shape[0] - len(cells)
    if missing:
        notes.append(f"{missing} labelled cells are not cells of run {run_id} and are left out")
    if len(cells) < MIN_CELLS:
        raise ParameterError(f"{len(cells)} labelled cells of {score} in run {run_id}; an alignment needs at least "
                             f"{MIN_CELLS} (some to learn from, some to judge on)")
    train, held = split_cells(store, run_id, score, labels_run, seed, float(holdout), cells)
    used = labels[[(d, m) in cells for d, m in zip(labels["datum_id"], labels["model"])]]
    return Setup(run_id, score, labels_run, seed, float(holdout), base, copied, categories, weighted, cells, train,
                 held, used[["datum_id", "model", "annotator", "value"]].reset_index(drop=True), current, notes)


def stratified(keys: list[Key], values: dict[Key, float], holdout: float, seed: int, score: str) -> tuple[list, list]:
    """(train, held-out): each people's value's cells shuffled with a seeded generator, its share held out."""
    train: list[Key] = []
    held: list[Key] = []
    for value in sorted({values[k] for k in keys}):
        stratum = sorted(k for k in keys if values[k] == value)
        order = rng_for(seed, "align-split", score, f"{value:g}").permutation(len(stratum))
        take = int(math.floor(holdout * len(stratum) + 0.5))
        if len(stratum) >= 2:
            take = min(max(take, 1), len(stratum) - 1)
        held += [stratum[i] for i in order[:take]]
        train += [stratum[i] for i in order[take:]]
    return sorted(train), sorted(held)


def split_cells(store: Store, run_id: int, score: str, labels_run: int, seed: int, holdout: float,
                cells: dict[Key, TrainingCell]) -> tuple[list[Key], list[Key]]:
    """The stored split of this key, with cells labelled since then split among themselves and added."""
    stored = store.split(run_id, score, labels_run, seed, holdout) or {"train": [], "held_out": []}
    train = [tuple(k) for k in stored["train"] if tuple(k) in cells]
    held = [tuple(k) for k in stored["held_out"] if tuple(k) in cells]
    known = set(train) | set(held)
    new = [k for k in cells if k not in known]
    if new or not stored["train"]:
        more_train, more_held = stratified(new, {k: cells[k].people for k in new}, holdout, seed, score)
        train, held = sorted(train + more_train), sorted(held + more_held)
        every = {"train": [list(k) for k in sorted(set(train) | {tuple(k) for k in stored["train"]})],
                 "held_out": [list(k) for k in sorted(set(held) | {tuple(k) for k in stored["held_out"]})]}
        if not store.read_only:
            store.save_split(run_id, score, labels_run, seed, holdout, every)
    return train, held


def rows_of(setup: Setup, keys: list[Key]) -> list[Datum]:
    return [setup.cells[k].row for k in keys]
