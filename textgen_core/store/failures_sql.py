"""Failure modes of a run (textgen_core.failures): the one write path of ``failure_modes`` and ``failure_members``,
and the reads that gather a run's failing judgements.

A run's modes are written whole, replacing the modes it had: one row per mode
(its name, distinctive words, size, the method version and parameters that
made it) and one row per failing judgement that belongs to a mode (the cell
and verdict item it came from, and the text that was grouped). Results,
Compare, the report and ``export`` read them without grouping again.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

import duckdb
import pandas as pd
import pyarrow as pa

from ..errors import ParameterError
from .database import Part, insert_arrow, reads, writes
from .run_sql import require_run

#: DDL run by :class:`~textgen_core.store.Store` with the rest of the schema.
FAILURES_DDL: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS failure_modes (
        run_id INTEGER NOT NULL,
        mode INTEGER NOT NULL,
        name VARCHAR NOT NULL,
        words VARCHAR[],
        size INTEGER NOT NULL,
        judge_name VARCHAR,
        method VARCHAR NOT NULL,
        params JSON,
        created_at TIMESTAMP DEFAULT current_timestamp,
        PRIMARY KEY (run_id, mode))""",
    """CREATE TABLE IF NOT EXISTS failure_members (
        run_id INTEGER NOT NULL,
        mode INTEGER NOT NULL,
        datum_id VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        unit VARCHAR NOT NULL,
        step VARCHAR NOT NULL,
        item_index INTEGER NOT NULL,
        text VARCHAR,
        PRIMARY KEY (run_id, datum_id, model, unit, step, item_index))""",
)

#: Columns of a mode row as :meth:`FailureTables.write_failure_modes` takes them.
MODE_FIELDS = ("mode", "name", "words", "size", "judge_name")
#: Columns of a member row.
MEMBER_FIELDS = ("mode", "datum_id", "model", "unit", "step", "item_index", "text")

_MODE_SCHEMA = pa.schema([("run_id", pa.int32()), ("mode", pa.int32()), ("name", pa.string()),
                          ("words", pa.list_(pa.string())), ("size", pa.int32()), ("judge_name", pa.string()),
                          ("method", pa.string()), ("params", pa.string())])
_MEMBER_SCHEMA = pa.schema([("run_id", pa.int32()), ("mode", pa.int32()), ("datum_id", pa.string()),
                            ("model", pa.string()), ("unit", pa.string()), ("step", pa.string()),
                            ("item_index", pa.int32()), ("text", pa.string())])
_MODE_COLUMNS = ["mode", "name", "words", "size", "judge_name", "method", "params", "created_at"]
_MEMBER_COLUMNS = ["mode", "datum_id", "model", "unit", "step", "item_index", "text"]


class FailureTables(Part):
    """Writes and reads of a run's failure modes, and the reads that find its failing judgements."""

    @writes
    def write_failure_modes(self, run_id: int, method: str, params: Mapping[str, Any],
                            modes: Sequence[Sequence[Any]], members: Sequence[Sequence[Any]]) -> int:
        """Replace the run's failure modes (tuples in :data:`MODE_FIELDS` order) and their members
        (:data:`MEMBER_FIELDS`) in one transaction; returns the number of modes written."""
        cur = self.cur
        require_run(cur, run_id)
        for table in ("failure_members", "failure_modes"):  # constants
            cur.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
        text = json.dumps(dict(params), sort_keys=True, default=str)
        if modes:
            columns = {name: [row[i] for row in modes] for i, name in enumerate(MODE_FIELDS)}
            insert_arrow(cur, "failure_modes", pa.Table.from_pydict(
                {"run_id": [run_id] * len(modes), **columns, "method": [method] * len(modes),
                 "params": [text] * len(modes)}, schema=_MODE_SCHEMA), by_name=True)
        if members:
            columns = {name: [row[i] for row in members] for i, name in enumerate(MEMBER_FIELDS)}
            insert_arrow(cur, "failure_members", pa.Table.from_pydict(
                {"run_id": [run_id] * len(members), **columns}, schema=_MEMBER_SCHEMA), by_name=True)
        return len(modes)

    @reads
    def failure_modes(self, run_id: int) -> pd.DataFrame:
        """The stored modes of a run by mode number (none stored, or a file from before the table: empty)."""
        try:
            return self.cur.execute(
                "SELECT mode, name, words, size, judge_name, method, params, created_at FROM failure_modes "
                "WHERE run_id = ? ORDER BY mode", [run_id]).df()
        except duckdb.CatalogException:
            return pd.DataFrame(columns=_MODE_COLUMNS)

    @reads
    def failure_members(self, run_id: int, mode: int | None = None, *, text: bool = True) -> pd.DataFrame:
        """The failing judgements of a run's modes (optionally one mode), in a stable order; ``text=False`` leaves
        the grouped text out (all a rate or a comparison needs)."""
        columns = _MEMBER_COLUMNS if text else _MEMBER_COLUMNS[:-1]
        try:
            return self.cur.execute(
                f"SELECT {', '.join(columns)} FROM failure_members "  # constant column names
                "WHERE run_id = ? AND (? IS NULL OR mode = ?) ORDER BY mode, datum_id, model, unit, step, item_index",
                [run_id, mode, mode]).df()
        except duckdb.CatalogException:
            return pd.DataFrame(columns=columns)

    @reads
    def failure_examples(self, run_id: int, per_model: int) -> pd.DataFrame:
        """The first ``per_model`` members of each (mode, model), with their text, in the members' order."""
        try:
            return self.cur.execute(
                "SELECT mode, datum_id, model, unit, step, item_index, text FROM failure_members WHERE run_id = ? "
                "QUALIFY row_number() OVER (PARTITION BY mode, model ORDER BY datum_id, unit, step, item_index) <= ? "
                "ORDER BY mode, datum_id, model, unit, step, item_index", [run_id, per_model]).df()
        except duckdb.CatalogException:
            return pd.DataFrame(columns=_MEMBER_COLUMNS)

    @reads
    def scored_units(self, run_id: int, units: Sequence[str]) -> pd.DataFrame:
        """datum_id, model, unit: the scored cells of the run whose metric or score is one of ``units``
        (a cell counts once per unit name; unscored cells are not units: they can neither fail nor pass)."""
        names = list(units)
        return self.cur.execute(
            "SELECT DISTINCT datum_id, model, CASE WHEN list_contains(?, metric) THEN metric ELSE score END AS unit "
            "FROM scores WHERE run_id = ? AND value IS NOT NULL AND (list_contains(?, metric) OR "
            "list_contains(?, score)) ORDER BY unit, datum_id, model", [names, run_id, names, names]).df()

    @reads
    def judged_items(self, run_id: int, metrics: Sequence[str] | None = None) -> pd.DataFrame:
        """datum_id, model, metric, step, item_index, verdict, reason of every verdict that carries one, in scored
        cells only (a verdict of an unscored cell is never a failure)."""
        return self.cur.execute(
            "SELECT v.datum_id, v.model, v.metric, v.step, v.item_index, v.verdict, v.reason FROM verdicts v "
            "WHERE v.run_id = ? AND v.verdict IS NOT NULL AND (? IS NULL OR list_contains(?, v.metric)) "
            "AND EXISTS (SELECT 1 FROM scores s WHERE s.run_id = v.run_id AND s.datum_id = v.datum_id "
            "AND s.model = v.model AND s.metric = v.metric AND s.value IS NOT NULL) "
            "ORDER BY v.metric, v.datum_id, v.model, v.step, v.item_index",
            [run_id, None if metrics is None else list(metrics), None if metrics is None else list(metrics)]).df()

    @reads
    def scored_predictions(self, run_id: int, score: str) -> pd.DataFrame:
        """datum_id, model, value, prediction of the scored cells of one score (for the lowest-scoring cells)."""
        return self.cur.execute(
            "SELECT s.datum_id, s.model, s.value, d.prediction FROM scores s JOIN data d "
            "ON d.dataset_id = (SELECT dataset_id FROM runs WHERE run_id = ?) AND d.datum_id = s.datum_id "
            "AND d.model = s.model WHERE s.run_id = ? AND s.score = ? AND s.value IS NOT NULL "
            "ORDER BY s.datum_id, s.model", [run_id, run_id, score]).df()

    @reads
    def judged_metrics(self, run_id: int) -> list[str]:
        """The metrics of a run that stored verdicts, by name."""
        return [r[0] for r in self.cur.execute(
            "SELECT DISTINCT metric FROM verdicts WHERE run_id = ? ORDER BY metric", [run_id]).fetchall()]

    @reads
    def datum_slices(self, run_id: int, column: str) -> pd.DataFrame:
        """datum_id, model, slice: each row's value of one metadata column of the run's dataset (as text; missing:
        NULL). Raises ParameterError naming the metadata columns when the dataset has no such column."""
        head = self.cur.execute("SELECT d.metadata_columns FROM datasets d JOIN runs r ON r.dataset_id = d.dataset_id "
                                "WHERE r.run_id = ?", [run_id]).fetchone()
        columns = list(head[0] or ()) if head else []
        if column not in columns:
            raise ParameterError(f"--by {column!r}: the run's dataset has no such metadata column; its metadata "
                                 f"columns: {', '.join(columns) or 'none'}")
        return self.cur.execute(
            "SELECT datum_id, model, json_extract_string(metadata, ?) AS slice FROM data "
            "WHERE dataset_id = (SELECT dataset_id FROM runs WHERE run_id = ?) ORDER BY datum_id, model",
            ["$." + json.dumps(column), run_id]).df()
