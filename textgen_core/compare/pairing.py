"""Pairing models' scores by datum id (never by text), with what each model is missing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ..errors import ParameterError
from ..store import Store


@dataclass(frozen=True)
class RunScores:
    """The scored values of a run, with the datum ids and models they are paired over."""

    run_id: int
    models: list[str]
    datum_ids: list[str]
    values: pd.DataFrame  # datum_id, model, score, value (scored cells only)

    @property
    def score_names(self) -> list[str]:
        return list(dict.fromkeys(self.values["score"]))

    def check_model(self, model: str) -> None:
        if model not in self.models:
            raise ParameterError(f"model {model!r} is not in run {self.run_id}; models: {', '.join(self.models)}")

    def check_scores(self, scores: Sequence[str]) -> None:
        known = set(self.score_names)
        unknown = [s for s in scores if s not in known]
        if unknown:
            raise ParameterError(f"run {self.run_id} has no scored values for {', '.join(map(repr, unknown))}; "
                                 f"scores: {', '.join(self.score_names) or 'none'}")


@dataclass(frozen=True)
class Pairs:
    """One score of two models over the datums scored for both, in dataset order."""

    datum_ids: list[str]
    baseline: np.ndarray
    candidate: np.ndarray
    #: Datums of the dataset without a scored value for that model.
    missing_baseline: int
    missing_candidate: int

    @property
    def diffs(self) -> np.ndarray:
        return self.candidate - self.baseline


def load_run_scores(store: Store, run_id: int, models: Sequence[str] | None = None,
                    scores: Sequence[str] | None = None) -> RunScores:
    """Scored values of a run (optionally only some models and scores), read once."""
    run = store.get_run(run_id)
    values = store.score_values(run_id, models=models, scores=scores)
    all_models = list(dict.fromkeys([*run["models"], *values["model"]]))
    datum_ids = store.datum_ids(run["dataset_id"])
    known = set(datum_ids)
    datum_ids.extend(d for d in dict.fromkeys(values["datum_id"]) if d not in known)
    return RunScores(run_id, all_models, datum_ids, values)


def pair(run_scores: RunScores, baseline: str, candidate: str, score: str) -> Pairs:
    """Pair two models' values of one score by datum id; count the datums each one lacks."""
    frame = run_scores.values
    rows = frame[(frame["score"] == score) & frame["model"].isin([baseline, candidate])]
    wide = rows.pivot(index="datum_id", columns="model", values="value")
    for model in (baseline, candidate):
        if model not in wide.columns:
            wide[model] = np.nan
    order = [d for d in run_scores.datum_ids if d in wide.index]
    wide = wide.reindex(order)
    both = wide[[baseline, candidate]].dropna()
    universe = len(run_scores.datum_ids)
    return Pairs(
        datum_ids=both.index.tolist(),
        baseline=both[baseline].to_numpy(dtype=float),
        candidate=both[candidate].to_numpy(dtype=float),
        missing_baseline=universe - int(wide[baseline].notna().sum()),
        missing_candidate=universe - int(wide[candidate].notna().sum()),
    )
