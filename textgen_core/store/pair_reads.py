"""Reads for pairing models' scores by datum id: numpy arrays straight from DuckDB, no frames of strings.

A run's datums are the dataset's distinct datum ids in the order they first appear,
then any datum id that only the scores know (ordered by its first score name, then id).
A part of the store.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np
import pandas as pd

from .database import Part, reads

_DATASET = "(SELECT dataset_id FROM runs WHERE run_id = $run)"
_SCORED = "run_id = $run AND value IS NOT NULL AND ($all_scores OR list_contains($scores, score))"
#: The run's datums as u(datum_id, i), numbered 0.. in the order of the module docstring.
_DATUMS_OF_DATASET = (
    "WITH u AS (SELECT datum_id, row_number() OVER (ORDER BY min(row_index)) - 1 AS i FROM data "
    f"WHERE dataset_id = {_DATASET} GROUP BY datum_id) "
)
_DATUMS = (
    f"WITH d AS (SELECT datum_id, min(row_index) AS first FROM data WHERE dataset_id = {_DATASET} GROUP BY datum_id), "
    f"x AS (SELECT datum_id, min(score) AS first_score FROM scores WHERE {_SCORED} "
    "AND datum_id NOT IN (SELECT datum_id FROM d) GROUP BY datum_id), "
    "u AS (SELECT datum_id, row_number() OVER (ORDER BY first) - 1 AS i FROM d UNION ALL "
    "SELECT datum_id, (SELECT count(*) FROM d) + row_number() OVER (ORDER BY first_score, datum_id) - 1 FROM x) "
)
#: The picked scores and models, numbered k and m from 0 in the order given.
_PICKED = (
    ", pk AS (SELECT unnest($pick) AS score, generate_subscripts($pick, 1) - 1 AS k), "
    "pm AS (SELECT unnest($models) AS model, generate_subscripts($models, 1) - 1 AS m) "
)


class ScoreArrays(NamedTuple):
    """Score values as (scores, models, datums) and, when asked for, the datum ids of the last axis."""

    values: np.ndarray
    datum_ids: np.ndarray | None
    #: Whether the datums are the dataset's alone: no scored cell in scope has a datum id the dataset lacks.
    dataset_datums: bool = True


class PairReads(Part):
    """Which models and scores a run has values for, and those values as datum-aligned arrays."""

    def _datum_params(self, run_id: int, scores: Sequence[str] | None) -> dict[str, Any]:
        return {"run": run_id, "all_scores": scores is None, "scores": list(scores or [])}

    @reads
    def scored_pairs(self, run_id: int, scores: Sequence[str] | None = None, *,
                     by_first_datum: bool = False) -> list[tuple[str, str]]:
        """(model, score) with at least one scored value, by score, then model name.

        ``by_first_datum`` orders a score's models by their smallest datum id first (slower: it reads every id).
        """
        rows = self.cur.execute(
            "SELECT model, score FROM scores WHERE run_id = $run AND value IS NOT NULL "
            "AND ($all_scores OR list_contains($scores, score)) GROUP BY model, score "
            f"ORDER BY score, {'min(datum_id), ' if by_first_datum else ''}model",
            self._datum_params(run_id, scores)).fetchall()
        return [(str(m), str(s)) for m, s in rows]

    @reads
    def scored_counts(self, run_id: int) -> pd.DataFrame:
        """model, metric, score, n_scored, mean of every (model, metric, score) with a scored value, by metric,
        score, model.

        The counts and means of :meth:`summary` without its other statistics (a median of millions of values
        costs seconds); the means rank a run of many models (:func:`textgen_core.summary.ranked_models`).
        """
        return self.cur.execute(
            "SELECT model, metric, score, count(*) AS n_scored, avg(value) AS mean FROM scores "
            "WHERE run_id = $run AND value IS NOT NULL "
            "GROUP BY model, metric, score ORDER BY metric, score, model", {"run": run_id}).df()

    @reads
    def dataset_datum_ids(self, run_id: int) -> np.ndarray:
        """The distinct datum ids of the run's dataset, in the order they first appear."""
        return self.cur.execute(_DATUMS_OF_DATASET + "SELECT datum_id FROM u ORDER BY i",
                                   {"run": run_id}).fetchnumpy()["datum_id"]

    @reads
    def score_arrays(self, run_id: int, pick: Sequence[str], models: Sequence[str],
                     scores: Sequence[str] | None = None, *, with_ids: bool = False) -> ScoreArrays:
        """Values of the ``pick`` scores, shape (scores, models, datums), NaN where a model has no scored value.

        Datums follow the run's datum order, counted over the ``scores`` (None: all of them);
        ``with_ids`` also reads their datum ids.
        """
        params = self._datum_params(run_id, scores) | {"pick": list(pick), "models": list(models), "nm": len(models)}
        # Every picked cell in scope as (datum number i, row km = score x model, value). A cell with a NULL i has
        # a datum id only the scores know (rare, and it changes the numbering whatever its score or model): only
        # then is the slower numbering with those ids needed.
        cells = ("SELECT CAST(u.i AS INTEGER) AS i, CAST(pk.k * $nm + pm.m AS INTEGER) AS km, s.value FROM scores s "
                 "LEFT JOIN u USING (datum_id) LEFT JOIN pk USING (score) LEFT JOIN pm USING (model) WHERE " + _SCORED)
        found = self.cur.execute(
            _DATUMS_OF_DATASET + _PICKED + cells + " AND (u.i IS NULL OR (pk.k IS NOT NULL AND pm.m IS NOT NULL))",
            params).fetchnumpy()
        dataset = not np.ma.getmaskarray(found["i"]).any()
        if dataset:
            datums, numbering = _DATUMS_OF_DATASET, {"run": run_id}
        else:
            datums, numbering = _DATUMS, self._datum_params(run_id, scores)
            found = self.cur.execute(
                _DATUMS + _PICKED + cells + " AND pk.k IS NOT NULL AND pm.m IS NOT NULL", params).fetchnumpy()
        ids = (self.cur.execute(datums + "SELECT datum_id FROM u ORDER BY i", numbering).fetchnumpy()["datum_id"]
               if with_ids else None)
        n = len(ids) if ids is not None else self.cur.execute(datums + "SELECT count(*) FROM u", numbering).fetchone()[0]
        cube = np.full((len(pick) * len(models), int(n)), np.nan)
        cube[np.asarray(found["km"]), np.asarray(found["i"])] = np.asarray(found["value"], dtype=float)
        return ScoreArrays(cube.reshape(len(pick), len(models), int(n)), ids, dataset)
