"""Reads behind a report's per-datum section: which cells to show, and everything stored about them.

A part of the store. A run small enough is shown whole; a larger one shows the
lowest and highest scored cells of each score and a sample of datums picked by a
stable hash of their id (the same datums for every model). Then the chosen
(datum, model) rows come back with their text, every score of the row and every
judge verdict, in three reads keyed by a registered table of the chosen keys.
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd
import pyarrow as pa

from .connection import registered
from .database import Part, reads

_DATASET = "(SELECT dataset_id FROM runs WHERE run_id = $run)"
_KEYS = pa.schema([("datum_id", pa.string()), ("model", pa.string())])


class ReportReads(Part):
    """The per-datum section of a report: its selection and its rows."""

    @reads
    def row_count(self, run_id: int) -> int:
        """Rows (datum x model) of the run's dataset, over the run's models."""
        return int(self.cur.execute(
            f"SELECT count(*) FROM data d WHERE d.dataset_id = {_DATASET} "
            "AND list_contains((SELECT models FROM runs WHERE run_id = $run), d.model)", {"run": run_id}).fetchone()[0])

    @reads
    def all_keys(self, run_id: int) -> pd.DataFrame:
        """datum_id, model of every row of the run, in dataset order."""
        return self.cur.execute(
            f"SELECT d.datum_id, d.model FROM data d WHERE d.dataset_id = {_DATASET} "
            "AND list_contains((SELECT models FROM runs WHERE run_id = $run), d.model) ORDER BY d.row_index",
            {"run": run_id}).df()

    @reads
    def extreme_keys(self, run_id: int, n: int) -> pd.DataFrame:
        """score, side ('low' or 'high'), rank (from 1), datum_id, model: the ``n`` lowest and ``n`` highest
        scored cells of each score (ties by datum id, then model)."""
        return self.cur.execute(
            "WITH r AS (SELECT score, datum_id, model, "
            "row_number() OVER (PARTITION BY score ORDER BY value, datum_id, model) AS lo, "
            "row_number() OVER (PARTITION BY score ORDER BY value DESC, datum_id, model) AS hi "
            "FROM scores WHERE run_id = $run AND value IS NOT NULL) "
            "SELECT score, 'low' AS side, lo AS rank, datum_id, model FROM r WHERE lo <= $n UNION ALL "
            "SELECT score, 'high' AS side, hi AS rank, datum_id, model FROM r WHERE hi <= $n "
            "ORDER BY score, side DESC, rank", {"run": run_id, "n": int(n)}).df()

    @reads
    def sample_keys(self, run_id: int, n_datums: int) -> pd.DataFrame:
        """datum_id, model of ``n_datums`` datums picked by a stable hash of their id, every model of each."""
        return self.cur.execute(
            f"WITH u AS (SELECT DISTINCT datum_id FROM data WHERE dataset_id = {_DATASET}), "
            "p AS (SELECT datum_id FROM u ORDER BY hash(datum_id), datum_id LIMIT $n) "
            f"SELECT d.datum_id, d.model FROM data d JOIN p USING (datum_id) WHERE d.dataset_id = {_DATASET} "
            "AND list_contains((SELECT models FROM runs WHERE run_id = $run), d.model) ORDER BY d.row_index",
            {"run": run_id, "n": int(n_datums)}).df()

    @reads
    def rows(self, run_id: int, keys: Sequence[tuple[str, str]]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        """(data, scores, verdicts) of the chosen (datum_id, model) rows.

        data: datum_id, model, query, prediction, refs, metadata (JSON text), in dataset order;
        scores: datum_id, model, metric, score, value, reason; verdicts: datum_id, model, metric, step,
        item_index, item, verdict, reason (the judge's, in step and item order).
        """
        table = pa.Table.from_pydict({"datum_id": [str(k[0]) for k in keys], "model": [str(k[1]) for k in keys]},
                                     schema=_KEYS)
        cur = self.cur
        with registered(cur, "report_keys", table):
            data = cur.execute(
                "SELECT d.datum_id, d.model, d.query, d.prediction, d.refs, CAST(d.metadata AS VARCHAR) AS metadata "
                f"FROM data d JOIN report_keys k USING (datum_id, model) WHERE d.dataset_id = {_DATASET} "
                "ORDER BY d.row_index", {"run": run_id}).df()
            scores = cur.execute(
                "SELECT s.datum_id, s.model, s.metric, s.score, s.value, s.reason FROM scores s "
                "JOIN report_keys k USING (datum_id, model) WHERE s.run_id = $run "
                "ORDER BY s.datum_id, s.model, s.score", {"run": run_id}).df()
            verdicts = cur.execute(
                "SELECT v.datum_id, v.model, v.metric, v.step, v.item_index, v.item, v.verdict, v.reason "
                "FROM verdicts v JOIN report_keys k USING (datum_id, model) WHERE v.run_id = $run "
                "ORDER BY v.datum_id, v.model, v.metric, v.step, v.item_index", {"run": run_id}).df()
        return data, scores, verdicts
