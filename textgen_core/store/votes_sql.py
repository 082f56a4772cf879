"""Votes of repeated judging and judge panels: the one write path of ``votes``, and its reads.

A run judged by several members (a panel) or several times (samples) keeps one
vote per member x sample x score of a cell; the cell in ``scores`` is their
aggregate (see :mod:`textgen_core.runs.jury`). A vote's verdicts and exchanges
go to the ``verdicts`` and ``exchanges`` tables with their step tagged by
:func:`vote_step`, so every member's and sample's items stay apart and the
primary keys of those tables did not change. A plain run writes no votes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Sequence

import duckdb
import pandas as pd
import pyarrow as pa

from .connection import registered
from .database import Database, Part, insert_arrow, reads, writes
from .judge_cache_sql import JudgeCache, cache_table
from .judge_sql import VERDICT_FIELDS, CellRows, add_batch_usage, write_results
from .run_sql import require_run

if TYPE_CHECKING:
    from .judge_cache_sql import CacheRow

#: Columns of ``votes`` as :func:`votes_for_run` returns them.
VOTE_COLUMNS = ("run_id", "datum_id", "model", "metric", "score", "judge", "sample", "value", "reason", "label")
_SCHEMA = pa.schema([("run_id", pa.int32()), ("datum_id", pa.string()), ("model", pa.string()),
                     ("metric", pa.string()), ("score", pa.string()), ("judge", pa.string()),
                     ("sample", pa.int32()), ("value", pa.float64()), ("reason", pa.string()),
                     ("label", pa.string())])
_CELLS = pa.schema([("datum_id", pa.string()), ("model", pa.string()), ("metric", pa.string())])


def vote_tag(judge: str, sample: int) -> str:
    """What ends the step of a vote's verdicts and exchanges: which member, which sample."""
    return f" | judge {judge}, sample {sample}"


def vote_step(step: str, judge: str, sample: int) -> str:
    """The step a vote's verdict or exchange is stored under (``claims | judge m1, sample 2``)."""
    return f"{step}{vote_tag(judge, sample)}"


def _insert_votes(cur: duckdb.DuckDBPyConnection, run_id: int, rows: Sequence[Sequence[Any]]) -> None:
    """The one statement that writes votes: rows of (datum_id, model, metric, score, judge, sample, value,
    reason[, label]), upserted (a vote judged again replaces its row)."""
    if not rows:
        return
    columns = {name: [row[i] if i < len(row) else None for row in rows] for i, name in enumerate(VOTE_COLUMNS[1:])}
    columns["sample"] = [int(s) for s in columns["sample"]]
    table = pa.Table.from_pydict({"run_id": [run_id] * len(rows), **columns}, schema=_SCHEMA)
    insert_arrow(cur, "votes", table, replace=True, by_name=True)


class Votes(Part):
    """Writes and reads of ``votes``; a batch's cache entries go through ``cache``."""

    def __init__(self, db: Database, cache: JudgeCache) -> None:
        super().__init__(db)
        self.cache = cache

    @writes
    def write_votes(self, run_id: int, rows: Iterable[Sequence[Any]]) -> int:
        """Upsert votes, tuples of (datum_id, model, metric, score, judge, sample, value, reason[, label]), in
        one transaction (``label``: the label a label or yes/no vote gave). Returns how many were written."""
        rows = [tuple(r) for r in rows]
        if rows:
            require_run(self.cur, run_id)
            _insert_votes(self.cur, run_id, rows)
        return len(rows)

    @writes
    def write_vote_batch(self, entries: Sequence["CacheRow"], judge: str, sample: int,
                         cells: Sequence[CellRows], labels: Sequence[str | None] = (),
                         usage: Sequence[tuple[int, tuple[int, int, int, float | None]]] = ()) -> None:
        """Reply-cache entries and the judge's finished cells of one member and sample, as votes, in one
        transaction (entries first): each cell becomes a vote (``labels``: each one's label, if any), its
        verdicts and exchanges are stored under
        :func:`vote_step`, its usage is added to its run, as is ``usage`` ((run id, (calls, prompt tokens,
        completion tokens, cost or None)) of requests that ended). A vote judged again first loses its old items."""
        if not entries and not cells and not usage:
            return
        spent: dict[int, list[tuple]] = {}
        for run_id, used in usage:
            spent.setdefault(run_id, []).append(used)
        runs: dict[int, list[tuple[CellRows, str | None]]] = {}
        for i, write in enumerate(cells):
            runs.setdefault(write.run_id, []).append((write, labels[i] if i < len(labels) else None))
        tag = vote_tag(judge, sample)
        step = VERDICT_FIELDS.index("step")
        cur = self.cur
        if entries:
            self.cache.keys_added(e.cache_key for e in entries)
            insert_arrow(cur, "judge_cache", cache_table(entries), replace=True, by_name=True)
        for run_id, labelled in runs.items():
            judged = [w for w, _ in labelled]
            again = [w.cell[:3] for w in judged if w.rewritten]
            if again:
                stale = pa.Table.from_pydict({name: [c[i] for c in again] for i, name in
                                              enumerate(_CELLS.names)}, schema=_CELLS)
                with registered(cur, "stale_votes", stale):
                    for table in ("verdicts", "exchanges"):  # constants
                        cur.execute(f"DELETE FROM {table} WHERE run_id = ? AND ends_with(step, ?) AND "
                                    "(datum_id, model, metric) IN (SELECT datum_id, model, metric "
                                    "FROM stale_votes)", [run_id, tag])
            verdicts = [tuple(v[:step]) + (f"{v[step]}{tag}",) + tuple(v[step + 1:])
                        for w in judged for v in w.verdicts]
            exchanges = [{**e, "step": f"{e.get('step') or ''}{tag}"} for w in judged for e in w.exchanges]
            write_results(cur, run_id, verdicts, exchanges, [])
            _insert_votes(cur, run_id, [(*w.cell[:4], judge, sample, w.cell[4], w.cell[6], label)
                                        for w, label in labelled])
        for run_id in dict.fromkeys([*runs, *spent]):
            add_batch_usage(cur, run_id, [w.usage for w, _ in runs.get(run_id, ())] + spent.get(run_id, []))

    @reads
    def votes_for_run(self, run_id: int, score: str | None = None, datum_id: str | None = None) -> pd.DataFrame:
        """Every vote of a run (optionally of one score, of one datum), by datum, model, score, judge, sample.

        A file written before votes existed, opened read-only, has no table yet: no votes.
        """
        sql = ("SELECT {} FROM votes WHERE run_id = ? AND (? IS NULL OR score = ?) AND (? IS NULL OR datum_id = ?) "
               "ORDER BY datum_id, model, score, judge, sample")
        params = [run_id, score, score, datum_id, datum_id]
        try:
            try:
                columns = ", ".join(VOTE_COLUMNS)
                return self.cur.execute(sql.format(columns), params).df()
            except duckdb.BinderException:  # a schema-4 file opened read-only: votes without labels
                return self.cur.execute(sql.format(", ".join(VOTE_COLUMNS[:-1]) + ", NULL::VARCHAR AS label"),
                                           params).df()
        except duckdb.CatalogException:
            return pd.DataFrame({c: pd.Series(dtype="float64" if c == "value" else "object") for c in VOTE_COLUMNS})

    @reads
    def vote_cells(self, run_id: int, judge: str, sample: int, *, scored: bool) -> set[tuple[str, str, str]]:
        """(datum_id, model, metric) with a vote of this member and sample: a scored one (``scored``, what a
        resume skips) or an unscored one (what it judges again)."""
        rows = self.cur.execute(
            "SELECT DISTINCT datum_id, model, metric FROM votes WHERE run_id = ? AND judge = ? AND sample = ? "
            "AND (value IS NOT NULL) = ?", [run_id, judge, sample, scored]).fetchall()
        return {(d, m, k) for d, m, k in rows}
