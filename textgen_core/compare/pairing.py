"""Pairing models' scores by datum id (never by text), with what each model is missing."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import ParameterError
from ..judge.metrics.criteria import restore_run
from ..store import Store
from ..store.pair_reads import ScoreArrays
from .run_cache import RUNS


@dataclass(frozen=True)
class RunScores:
    """Which models and scores of a run have values; the values themselves are read per score on demand.

    Reads of a finished run are kept in :data:`.run_cache.RUNS`, so comparing other models, scores
    or settings of the same run reads nothing again.
    """

    run_id: int
    models: list[str]
    #: (model, score) with a scored value, ordered by score.
    scored: list[tuple[str, str]]
    store: Store = field(compare=False, repr=False)
    #: The scores whose datum ids count as the run's datums (None: all).
    scope: Sequence[str] | None = None
    #: The run's record, read with ``scored`` (its status and stamp decide what may be cached).
    run: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    #: Per score, a (models x datums) array in datum order, NaN where unscored; filled by :meth:`load`.
    _arrays: dict[str, np.ndarray] = field(default_factory=dict, compare=False, repr=False)

    def load(self, scores: Sequence[str]) -> None:
        """Read the values of these scores (for every model) in one query, unless they are cached."""
        wanted = [s for s in dict.fromkeys(scores) if s not in self._arrays]
        if wanted and self._dataset_datums():
            for score in wanted:
                found = self._cached(("values", tuple(self.models), score))
                if found is not None:
                    self._arrays[score] = found
            wanted = [s for s in wanted if s not in self._arrays]
        if wanted:
            self._remember(wanted, self.store.score_arrays(self.run_id, wanted, self.models, scores=self.scope))

    def array(self, score: str) -> np.ndarray:
        """The score's values, a row per model (in ``models`` order), a column per datum; NaN where unscored."""
        self.load([score])
        return self._arrays[score]

    def array_with_ids(self, score: str) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`array` and the datum ids of its columns."""
        if self._dataset_datums():
            values = self.array(score)
            ids = self._cached(("datum ids",))
            if ids is None:
                ids = self.store.dataset_datum_ids(self.run_id)
                RUNS.keep(self.store.path, self.run, ("datum ids",), ids)
            return values, ids
        found = self.store.score_arrays(self.run_id, [score], self.models, scores=self.scope, with_ids=True)
        self._remember([score], found)
        if found.dataset_datums:
            RUNS.keep(self.store.path, self.run, ("datum ids",), found.datum_ids)
        return found.values[0], found.datum_ids

    def _cached(self, key: tuple[Any, ...]) -> Any | None:
        return RUNS.lookup(self.store.path, self.run, key)

    def _scope_names(self) -> list[str]:
        return list(self.scope) if self.scope is not None else self.score_names

    def _dataset_datums(self) -> bool:
        """Whether a read of this scope is known to number the dataset's datums alone (so cached arrays fit)."""
        return all(self._cached(("dataset datums", score)) for score in self._scope_names())

    def _remember(self, scores: Sequence[str], found: ScoreArrays) -> None:
        """Hold what was read; cache it when its datums are the dataset's, whatever the scope."""
        self._arrays.update(zip(scores, found.values))
        if not found.dataset_datums:
            return
        for score in self._scope_names():
            RUNS.keep(self.store.path, self.run, ("dataset datums", score), True)
        for score, values in zip(scores, found.values):
            RUNS.keep(self.store.path, self.run, ("values", tuple(self.models), score), values)

    @property
    def score_names(self) -> list[str]:
        return list(dict.fromkeys(score for _, score in self.scored))

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


def load_run_scores(store: Store, run_id: int, scores: Sequence[str] | None = None) -> RunScores:
    """What a run has scored (optionally only some scores); values are read when a score is paired."""
    run = store.get_run(run_id)
    restore_run(run)  # a custom judge metric's direction is the one the run stored
    every = RUNS.lookup(store.path, run, ("scored",))
    if every is None:
        every = tuple(store.scored_pairs(run_id))
        RUNS.keep(store.path, run, ("scored",), every)
    scored = [cell for cell in every if scores is None or cell[1] in scores]
    if len({model for model, _ in scored} - set(run["models"])) > 1:
        # Models the run does not declare follow it in order of their first (score, datum id).
        scored = store.scored_pairs(run_id, scores=scores, by_first_datum=True)
    models = list(dict.fromkeys([*run["models"], *(model for model, _ in scored)]))
    return RunScores(run_id, models, scored, store, None if scores is None else list(scores), run)


def pair(run_scores: RunScores, baseline: str, candidate: str, score: str, *, with_ids: bool = False) -> Pairs:
    """Pair two models' values of one score by datum id; count the datums each one lacks.

    ``with_ids`` also reads the datum ids of the pairs (the comparison itself does not need them).
    """
    values, ids = run_scores.array_with_ids(score) if with_ids else (run_scores.array(score), None)
    baseline_all = values[run_scores.models.index(baseline)]
    candidate_all = values[run_scores.models.index(candidate)]
    both = ~np.isnan(baseline_all) & ~np.isnan(candidate_all)
    universe = baseline_all.size
    return Pairs(
        datum_ids=ids[both].tolist() if ids is not None else [],
        baseline=baseline_all[both],
        candidate=candidate_all[both],
        missing_baseline=universe - int(np.count_nonzero(~np.isnan(baseline_all))),
        missing_candidate=universe - int(np.count_nonzero(~np.isnan(candidate_all))),
        baseline_all=baseline_all,
        candidate_all=candidate_all,
    )
