"""Reads across runs of one named dataset (every version): per-run moments of a score, and the values themselves
keyed by datum so that runs can be paired. Numbers only (no frames of strings): a history of 200 runs x 20 scores
reads a million cells. A part of the store.

A datum is keyed by its id *and* its content (query and references): across versions, an id whose question
changed is another datum, so it pairs with nothing. ``id_code`` numbers the ids alone, so the callers can count
the datums left out because their content changed.
"""

from __future__ import annotations

from typing import Any, Sequence

import duckdb
import numpy as np
import pandas as pd

from .database import Part, reads
from .versions_sql import versions_table

#: The finished runs on any version of a family, with what a point of a history names.
_RUNS = ("SELECT r.run_id, r.created_at, r.dataset_id, v.version, json_extract_string(r.judge, '$.model') AS judge, "
         "r.signatures FROM runs r JOIN {versions} v USING (dataset_id) "
         "WHERE v.family = $family AND r.status = 'finished'")
_CONTENT = ("SELECT dataset_id, datum_id, md5(CAST(to_json(list_sort(list(DISTINCT struct_pack(q := query, "
            "r := refs)))) AS VARCHAR)) AS content FROM data WHERE dataset_id IN (SELECT dataset_id FROM runs_of) "
            "GROUP BY dataset_id, datum_id")


class OverTime(Part):
    """Reads of the runs of a dataset over time."""

    @reads
    def family_runs(self, family: str) -> pd.DataFrame:
        """run_id, created_at, dataset_id, version, judge (model), signatures (JSON) of a family's finished runs,
        oldest first, with each run's name and tags."""
        return self.cur.execute(
            f"SELECT f.*, n.name, coalesce(n.tags, []) AS tags FROM ({self._runs()}) f "
            f"LEFT JOIN {self._names()} n USING (run_id) ORDER BY f.created_at, f.run_id", {"family": family}).df()

    @reads
    def run_moments(self, family: str, scores: Sequence[str] | None = None,
                    models: Sequence[str] | None = None) -> pd.DataFrame:
        """run_id, model, score, metric, n (scored), mean, std, total, binary (every value 0 or 1), unscored,
        per (run, model, score) of a family's finished runs."""
        return self.cur.execute(
            f"WITH runs_of AS ({self._runs()}) SELECT s.run_id, s.model, s.score, any_value(s.metric) AS metric, "
            "count(s.value) AS n, avg(s.value) AS mean, stddev_samp(s.value) AS std, sum(s.value) AS total, "
            "coalesce(bool_and(s.value IN (0, 1)), false) AS binary, count(*) - count(s.value) AS unscored "
            "FROM scores s WHERE s.run_id IN (SELECT run_id FROM runs_of) "
            "AND ($all_scores OR list_contains($scores, s.score)) AND ($all_models OR list_contains($models, s.model)) "
            "GROUP BY s.run_id, s.model, s.score ORDER BY s.run_id, s.model, s.score",
            self._filters(family, scores, models)).df()

    @reads
    def keyed_values(self, family: str, scores: Sequence[str] | None = None, models: Sequence[str] | None = None,
                     runs: Sequence[int] | None = None) -> dict[str, Any]:
        """Every scored value of the family's finished runs (or of ``runs`` among them) as arrays: run_id,
        model_code, score_code, key (datum id and content, numbered), id_code (datum id, numbered), value; and the
        ``models`` and ``scores`` lists the codes index. Only datums of the runs' datasets (a cell whose datum id
        the dataset lacks has no content to pair by)."""
        params = self._filters(family, scores, models) | {"all_runs": runs is None, "runs": list(runs or [])}
        picked = ("s.value IS NOT NULL AND ($all_runs OR list_contains($runs, s.run_id)) "
                  "AND ($all_scores OR list_contains($scores, s.score)) "
                  "AND ($all_models OR list_contains($models, s.model))")
        head = f"WITH runs_of AS ({self._runs()}), content AS ({_CONTENT}) "
        names = self.cur.execute(
            head + "SELECT list(DISTINCT s.model ORDER BY s.model), list(DISTINCT s.score ORDER BY s.score) "
            f"FROM scores s JOIN runs_of r USING (run_id) WHERE {picked}", params).fetchone()
        model_list, score_list = list(names[0] or []), list(names[1] or [])
        found = self.cur.execute(  # datums numbered on the small content table, then joined: no window over cells
            head + ", keys AS (SELECT dataset_id, datum_id, "
            "CAST(dense_rank() OVER (ORDER BY datum_id, content) AS BIGINT) AS key, "
            "CAST(dense_rank() OVER (ORDER BY datum_id) AS BIGINT) AS id_code FROM content), "
            "pm AS (SELECT unnest($model_list) AS model, generate_subscripts($model_list, 1) - 1 AS m), "
            "ps AS (SELECT unnest($score_list) AS score, generate_subscripts($score_list, 1) - 1 AS k) "
            "SELECT s.run_id, CAST(pm.m AS INTEGER) AS model_code, CAST(ps.k AS INTEGER) AS score_code, "
            "keys.key, keys.id_code, s.value "
            "FROM scores s JOIN runs_of r USING (run_id) JOIN pm USING (model) JOIN ps USING (score) "
            f"JOIN keys ON keys.dataset_id = r.dataset_id AND keys.datum_id = s.datum_id WHERE {picked}",
            params | {"model_list": model_list or [""], "score_list": score_list or [""]}).fetchnumpy()
        out = {key: np.asarray(found[key]) for key in ("run_id", "model_code", "score_code", "key", "id_code")}
        out["value"] = np.asarray(found["value"], dtype=float)
        out.update(models=model_list, scores=score_list)
        return out

    def _runs(self) -> str:
        return _RUNS.replace("{versions}", versions_table(self.cur))

    def _names(self) -> str:
        """Run names, or none in an old file opened read-only."""
        try:
            self.cur.execute("SELECT 1 FROM run_names LIMIT 0")
            return "run_names"
        except duckdb.CatalogException:
            return "(SELECT NULL::INTEGER AS run_id, NULL::VARCHAR AS name, NULL::VARCHAR[] AS tags)"

    @staticmethod
    def _filters(family: str, scores: Sequence[str] | None, models: Sequence[str] | None) -> dict[str, Any]:
        return {"family": family, "all_scores": not scores, "scores": list(scores or []),
                "all_models": not models, "models": list(models or [])}
