"""Slices of a run by a metadata column: each model's mean per slice, and the paired comparison per slice.

A datum belongs to the slice of its metadata value (the first non-empty value of its rows, in dataset order;
``(empty)`` when none has one). Means follow the small-sample rule of :mod:`.small_sample`; the per-slice
comparisons are one Holm family (slices x candidates x scores with a better direction), whose size is in
every row and in ``attrs['family']``, so a slice found 'better' has been paid for the slices looked at.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import ParameterError
from ..store import Store
from .comparison import (COLUMNS, adjust_and_decide, apart_rows_last, candidates_of, check_settings, compare_pairs,
                         score_direction, scores_of, value_range)
from .pairing import Pairs, load_run_scores
from .row_notes import is_judge, label_counts, row_warnings
from .small_sample import mean_interval
from .stats import rng_for
from .verdicts import APART, HOLM

#: The slice of a datum whose rows have no value in the column.
EMPTY = "(empty)"


def slice_of(store: Store, run_id: int, column: str) -> dict[str, str]:
    """datum_id -> its value of the metadata ``column``; one clear error naming the columns for an unknown one."""
    run = store.get_run(run_id)
    dataset = store.load_dataset(run["dataset_id"])
    if column not in dataset.metadata_columns:
        shown = ", ".join(dataset.metadata_columns) or "none (the file had no extra columns)"
        raise ParameterError(f"no metadata column {column!r} to slice run {run_id} by; its metadata columns: "
                             f"{shown}")
    found: dict[str, str] = {}
    for row in dataset.rows:
        value = row.metadata.get(column)
        text = "" if value is None or (isinstance(value, float) and value != value) else str(value).strip()
        if text and not found.get(row.datum_id):
            found[row.datum_id] = text
        else:
            found.setdefault(row.datum_id, "")
    return {datum: value or EMPTY for datum, value in found.items()}


def summary_by(store: Store, run_id: int, column: str, *, models: Sequence[str] | None = None,
               confidence: float = 0.95) -> pd.DataFrame:
    """Per (slice, model, score): scored cells, mean and its interval (``ci_method``, ``ci_note`` when none).

    Slices are in order of their size (largest first), then by value.
    """
    slices = slice_of(store, run_id, column)
    values = store.score_values(run_id, models=models)
    values = values.assign(slice=values["datum_id"].map(slices).fillna(EMPTY))
    order = _slice_order(slices)
    rows = []
    for (value, model, score), part in values.groupby(["slice", "model", "score"], sort=False):
        found = mean_interval(part["value"].to_numpy(dtype=float), bounds=value_range(str(score)),
                              confidence=confidence, rng=rng_for(0, str(model), str(score), "slice", str(value)))
        rows.append({"slice": value, "model": model, "score": score, "n_scored": len(part),
                     "mean": float(part["value"].mean()), "ci_low": found.low, "ci_high": found.high,
                     "ci_method": found.method, "ci_note": found.why})
    frame = pd.DataFrame(rows, columns=["slice", "model", "score", "n_scored", "mean", "ci_low", "ci_high",
                                        "ci_method", "ci_note"])
    frame["_o"] = frame["slice"].map({v: i for i, v in enumerate(order)})
    frame = frame.sort_values(["score", "_o", "model"], kind="stable").drop(columns="_o").reset_index(drop=True)
    frame.attrs.update(run_id=run_id, column=column, slices=order, confidence=confidence)
    return frame


def compare_by(store: Store, run_id: int, baseline: str, column: str, candidate: str | Sequence[str] | None = None,
               *, scores: Sequence[str] | None = None, resamples: int = 2000, seed: int = 0,
               tie_tolerance: float = 1e-9, holm: bool = True, confidence: float = 0.95,
               directions: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per (slice, candidate, score): the paired comparison over the slice's datums.

    Columns: ``slice`` and those of :func:`.comparison.compare_models`. With
    ``holm``, every row of a score with a better direction is in one Holm family
    of ``attrs['family']`` comparisons; scores without one are tested alone.
    """
    check_settings(resamples, seed, tie_tolerance, confidence)
    slices = slice_of(store, run_id, column)
    data = load_run_scores(store, run_id)
    data.check_model(baseline)
    others = candidates_of(data, baseline, candidate)
    if scores is not None:
        names, never = list(dict.fromkeys(scores)), []
        data.check_scores(names)
    else:  # a score nobody could score has no slice to compare: the whole-run comparison lists it as inconclusive
        every = scores_of(data, [baseline, *others])
        names = [name for name in every if name in set(data.score_names)]
        never = [name for name in every if name not in names]
    direction = {name: score_direction(name, directions) for name in names}
    in_family = [name for name in names if direction[name] != "none"]
    order = _slice_order(slices)
    family = len(order) * len(others) * len(in_family) if holm else 1
    rows = []
    for name in names:
        values, ids = data.array_with_ids(name)
        labels = np.array([slices.get(str(d), EMPTY) for d in ids], dtype=object)
        for other in others:
            base_all = values[data.models.index(baseline)]
            cand_all = values[data.models.index(other)]
            for value in order:
                inside = labels == value
                row = compare_pairs(_pairs(base_all[inside], cand_all[inside]), score=name,
                                    direction=direction[name], rng=rng_for(seed, baseline, other, name, "slice", value),
                                    resamples=resamples, tie_tolerance=tie_tolerance, confidence=confidence,
                                    family=family if name in in_family else 1, bounds=value_range(name))
                row = replace(row, family=HOLM if name in in_family else APART)
                rows.append({"slice": value, "baseline": baseline, "candidate": other, **asdict(row)})
    frame = pd.DataFrame(rows, columns=["slice", *COLUMNS])
    frame = apart_rows_last(frame)
    adjust_and_decide(frame, holm, 1.0 - confidence)
    labelled = label_counts(data) if any(is_judge(name) for name in names) else {}
    frame["warnings"] = [row_warnings(data, name, [baseline, other], labelled)
                         for name, other in zip(frame["score"], frame["candidate"])]
    frame["family_size"] = [family if f == HOLM else 1 for f in frame["family"]]
    frame.attrs.update(run_id=run_id, column=column, slices=order, baseline=baseline, candidates=others,
                       scores=names, never_scored=never, family=family, holm=holm, confidence=confidence,
                       alpha=1.0 - confidence, seed=seed, resamples=resamples)
    return frame


def _pairs(baseline_all: np.ndarray, candidate_all: np.ndarray) -> Pairs:
    both = ~np.isnan(baseline_all) & ~np.isnan(candidate_all)
    size = baseline_all.size
    return Pairs([], baseline_all[both], candidate_all[both], size - int(np.count_nonzero(~np.isnan(baseline_all))),
                 size - int(np.count_nonzero(~np.isnan(candidate_all))), baseline_all, candidate_all)


def _slice_order(slices: Mapping[str, str]) -> list[str]:
    """Slice values, largest first, then by value; the empty slice last."""
    sizes = pd.Series(list(slices.values()), dtype=object).value_counts()
    return sorted(sizes.index, key=lambda v: (v == EMPTY, -int(sizes[v]), str(v)))
