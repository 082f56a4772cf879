"""Pairing models' scores by datum id (never by text), with what each model is missing."""

from __future__ import annotations

from dataclasses import dataclass, field
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
    #: One datum x model table per score, built on first use.
    _wide: dict[str, pd.DataFrame] = field(default_factory=dict, compare=False, repr=False)

    def wide(self, score: str) -> pd.DataFrame:
        """The score's values, a row per datum id (dataset order), a column per model; NaN where unscored."""
        if score not in self._wide:
            rows = self.values[self.values["score"] == score]
            table = rows.pivot(index="datum_id", columns="model", values="value")
            self._wide[score] = table.reindex(index=self.datum_ids, columns=self.models)
        return self._wide[score]

    @property
    def score_names(self) -> list[str]:
        return [str(v) for v in pd.unique(self.values["score"])]

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
    #: Datums of the dataset without a scored value for that model (unscored or no cell).
    missing_baseline: int
    missing_candidate: int
    #: Both models' values over every datum of the dataset, NaN where a model has no score.
    baseline_all: np.ndarray = field(default_factory=lambda: np.empty(0))
    candidate_all: np.ndarray = field(default_factory=lambda: np.empty(0))

    @property
    def diffs(self) -> np.ndarray:
        return self.candidate - self.baseline

    def scored_only_by(self) -> tuple[int, int]:
        """(datums scored for the baseline only, datums scored for the candidate only): McNemar's discordant pairs."""
        has_base, has_cand = ~np.isnan(self.baseline_all), ~np.isnan(self.candidate_all)
        return int(np.count_nonzero(has_base & ~has_cand)), int(np.count_nonzero(has_cand & ~has_base))

    def filled(self, worst: float) -> np.ndarray:
        """candidate - baseline over every datum, a missing or unscored value counted as ``worst``."""
        return np.nan_to_num(self.candidate_all, nan=worst) - np.nan_to_num(self.baseline_all, nan=worst)


def load_run_scores(store: Store, run_id: int, models: Sequence[str] | None = None,
                    scores: Sequence[str] | None = None) -> RunScores:
    """Scored values of a run (optionally only some models and scores), read once."""
    run = store.get_run(run_id)
    values = store.score_values(run_id, models=models, scores=scores)
    all_models = list(dict.fromkeys([*run["models"], *pd.unique(values["model"])]))
    datum_ids = store.datum_ids(run["dataset_id"])
    known = set(datum_ids)
    datum_ids.extend(d for d in pd.unique(values["datum_id"]) if d not in known)
    return RunScores(run_id, all_models, datum_ids, values)


def pair(run_scores: RunScores, baseline: str, candidate: str, score: str) -> Pairs:
    """Pair two models' values of one score by datum id; count the datums each one lacks."""
    everything = run_scores.wide(score)[[baseline, candidate]]
    both = everything.dropna()
    universe = len(run_scores.datum_ids)
    baseline_all = everything[baseline].to_numpy(dtype=float)
    candidate_all = everything[candidate].to_numpy(dtype=float)
    return Pairs(
        datum_ids=both.index.tolist(),
        baseline=both[baseline].to_numpy(dtype=float),
        candidate=both[candidate].to_numpy(dtype=float),
        missing_baseline=universe - int(np.count_nonzero(~np.isnan(baseline_all))),
        missing_candidate=universe - int(np.count_nonzero(~np.isnan(candidate_all))),
        baseline_all=baseline_all,
        candidate_all=candidate_all,
    )
