"""The ``scores`` and ``run_aggregates`` tables of a run: cells written and read.

A cell is one (datum, model, score) value of a run, or no value with the reason
it is unscored; reads that summarize cells count the unscored ones beside the
scored, never as 0. Every cell of every source reaches the ``scores`` table through
:meth:`Cells.write_cells`: the run loop's lexical and endpoint cells, the judge's
batches (with their verdicts, in the judge writer's transaction), a streamed run's
chunks and the Ray engine's blocks (with their data rows and the chunks they
finish, in one transaction).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import pandas as pd
import pyarrow as pa

from ..errors import StoreError
from .database import Part, insert_arrow, json_text, reads, writes
from .run_sql import require_run
from .score_writes import CellRecord, cell_table, write_scores
from .stream_sql import NewRows, insert_rows, mark_finished

_AGG_SCHEMA = pa.schema([
    ("run_id", pa.int32()), ("model", pa.string()), ("score", pa.string()),
    ("value", pa.float64()), ("details", pa.string()),
])


def _filter(values: Sequence[str] | None) -> list[Any]:
    """The two parameters of a ``(? IS NULL OR list_contains(?, column))`` filter (None: no filter)."""
    return [None if values is None else 1, list(values or [])]


class Cells(Part):
    """Score cells and corpus values of runs."""

    @writes
    def write_cells(self, run_id: int, cells: Iterable[CellRecord] | pa.Table | None, *, rows: NewRows | None = None,
                    finished: Sequence[str] = (), fresh: bool = False) -> int:
        """The one writer of score cells; one transaction; returns how many cells were written.

        ``cells``: records (datum_id, model, metric, score, value, details, reason), or an Arrow table in the
        ``scores`` layout (:data:`~.score_writes.SCORE_SCHEMA`, as a chunk or block is scored). ``rows``: the
        data rows they score, stored first (a streamed or Ray run reads its dataset as it scores it);
        ``finished``: the chunk or block keys of the run this write completes (skipped when it resumes).
        A cell already stored replaces its row unless ``fresh`` (a new run's chunk: appended, no lookup).
        """
        table = cells if isinstance(cells, pa.Table) or cells is None else cell_table(run_id, list(cells))
        if rows is None and not finished and (table is None or not table.num_rows):
            return 0
        cur = self.cur
        require_run(cur, run_id)
        if rows is not None:
            insert_rows(cur, rows)
        if table is not None and table.num_rows:
            write_scores(cur, table, replace=not fresh)
        mark_finished(cur, run_id, finished)
        return 0 if table is None else table.num_rows

    @writes
    def write_aggregates(self, run_id: int,
                         rows: Iterable[tuple[str, str, float | None, Mapping[str, Any] | None]]) -> None:
        """Corpus-level values (corpus BLEU, corpus WER, pass@k over problems) per (model, score)."""
        rows = list(rows)
        if not rows:
            return
        table = pa.Table.from_pydict({
            "run_id": [run_id] * len(rows), "model": [r[0] for r in rows], "score": [r[1] for r in rows],
            "value": [r[2] for r in rows], "details": [json_text(r[3]) for r in rows],
        }, schema=_AGG_SCHEMA)
        insert_arrow(self.cur, "run_aggregates", table, replace=True)

    @reads
    def finished_cells(self, run_id: int, *, with_unscored: bool = False) -> set[tuple[str, str, str]]:
        """(datum_id, model, metric) with a scored cell (or any cell, ``with_unscored``), for resuming."""
        rows = self.cur.execute(
            "SELECT DISTINCT datum_id, model, metric FROM scores WHERE run_id = ? AND (? OR value IS NOT NULL)",
            [run_id, with_unscored]).fetchall()
        return {(d, m, k) for d, m, k in rows}

    @reads
    def summary(self, run_id: int, models: Sequence[str] | None = None) -> pd.DataFrame:
        """Per (model, score): counts, mean, median, std, min, max — computed in SQL."""
        return self.cur.execute(
            "SELECT model, metric, score, count(value) AS n_scored, count(*) - count(value) AS n_unscored, "
            "avg(value) AS mean, median(value) AS median, stddev_samp(value) AS std, "
            "min(value) AS min, max(value) AS max FROM scores WHERE run_id = ? "
            "AND (? IS NULL OR list_contains(?, model)) GROUP BY model, metric, score ORDER BY metric, score, model",
            [run_id, *_filter(models)]).df()

    @reads
    def aggregates(self, run_id: int) -> pd.DataFrame:
        return self.cur.execute("SELECT model, score, value, details FROM run_aggregates WHERE run_id = ? "
                                "ORDER BY score, model", [run_id]).df()

    @reads
    def scores(self, run_id: int, *, models: Sequence[str] | None = None, scores: Sequence[str] | None = None,
               datum_id: str | None = None, limit: int | None = None) -> pd.DataFrame:
        """Long-format scores, filtered in SQL."""
        return self.cur.execute(
            "SELECT datum_id, model, metric, score, value, details, reason FROM scores WHERE run_id = ? "
            "AND (? IS NULL OR list_contains(?, model)) AND (? IS NULL OR list_contains(?, score)) "
            "AND (? IS NULL OR datum_id = ?) ORDER BY datum_id, model, score LIMIT ?",
            [run_id, *_filter(models), *_filter(scores), datum_id, datum_id,
             limit if limit is not None else 2**62]).df()

    @reads
    def datum_scores(self, dataset_id: int, datum_id: str) -> pd.DataFrame:
        """One datum's scores in every run of its dataset (run_id, model, score, value, reason), newest run first."""
        return self.cur.execute(
            "SELECT s.run_id, s.model, s.score, s.value, s.reason FROM scores s JOIN runs r USING (run_id) "
            "WHERE r.dataset_id = ? AND s.datum_id = ? ORDER BY s.run_id DESC, s.model, s.score",
            [dataset_id, datum_id]).df()

    @reads
    def wide_scores(self, run_id: int, order: Sequence[str] = ()) -> pd.DataFrame:
        """One row per (datum, model), one column per score (``order`` first); empty where unscored."""
        if self.cur.execute("SELECT 1 FROM runs WHERE run_id = ?", [run_id]).fetchone() is None:
            raise StoreError(f"no run with id {run_id}")
        present = [r[0] for r in self.cur.execute(
            "SELECT DISTINCT score FROM scores WHERE run_id = ? ORDER BY score", [run_id]).fetchall()]
        names = [n for n in order if n in present] + [n for n in present if n not in order]
        long = self.cur.execute(
            "SELECT s.datum_id, s.model, s.score, s.value, d.row_index FROM scores s "
            "JOIN data d ON d.dataset_id = (SELECT dataset_id FROM runs WHERE run_id = ?) "
            "AND d.datum_id = s.datum_id AND d.model = s.model WHERE s.run_id = ?", [run_id, run_id]).df()
        if long.empty:
            return pd.DataFrame(columns=["datum_id", "model", *names])
        wide = long.pivot(index=["row_index", "datum_id", "model"], columns="score", values="value").reset_index()
        wide = wide.sort_values("row_index").drop(columns="row_index")
        wide.columns.name = None
        for name in names:
            if name not in wide.columns:
                wide[name] = float("nan")
        return wide[["datum_id", "model", *names]].reset_index(drop=True)

    @reads
    def score_values(self, run_id: int, *, models: Sequence[str] | None = None,
                     scores: Sequence[str] | None = None) -> pd.DataFrame:
        """datum_id, model, score, value of scored cells only (no details), for pairing models."""
        return self.cur.execute(
            "SELECT datum_id, model, score, value FROM scores WHERE run_id = ? AND value IS NOT NULL "
            "AND (? IS NULL OR list_contains(?, model)) AND (? IS NULL OR list_contains(?, score)) "
            "ORDER BY score, datum_id, model", [run_id, *_filter(models), *_filter(scores)]).df()

    @reads
    def detail_reasons(self, run_id: int, key: str) -> pd.DataFrame:
        """score, reason, n: scored cells of a run whose details hold the text ``key`` (a weighted rating's
        ``weighted_unavailable``), grouped by that text, most frequent first."""
        return self.cur.execute(
            "SELECT score, reason, count(*) AS n FROM (SELECT score, json_extract_string(details, ?) AS reason "
            "FROM scores WHERE run_id = ? AND value IS NOT NULL AND details IS NOT NULL) WHERE reason IS NOT NULL "
            "GROUP BY score, reason ORDER BY score, n DESC, reason", [f"$.{key}", run_id]).df()

    @reads
    def unscored_reasons(self, run_id: int) -> pd.DataFrame:
        """score, model, reason, n: unscored cells of a run grouped by their exact reason, most frequent first."""
        return self.cur.execute(
            "SELECT score, model, coalesce(reason, '(no reason stored)') AS reason, count(*) AS n FROM scores "
            "WHERE run_id = ? AND value IS NULL GROUP BY score, model, reason ORDER BY score, n DESC, reason, model",
            [run_id]).df()
