"""Store methods for a dataset written in chunks while it is read (streamed runs, the Ray engine).

A streamed dataset is registered first, filled chunk by chunk, then finished
with its row count and models. When its rows turn out identical to a stored
dataset's, its runs move there and the copy is deleted, as a whole-file load
would have reused that dataset. A run scored in chunks or blocks records where
it reads its data and which chunks are stored, in the same transaction as their
rows and cells (written by :meth:`~.cells_sql.Cells.write_cells`, the one writer of
cells, with :class:`NewRows`), so that a stopped run resumes where it stopped.
"""

from __future__ import annotations

import json
import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Sequence

import duckdb
import pyarrow as pa

from ..errors import StoreError
from ..model import Datum
from .database import Part, reads, writes
from .versions_sql import forget_version, stamp_version

DATA_SCHEMA = pa.schema([
    ("dataset_id", pa.int32()), ("row_index", pa.int32()), ("datum_id", pa.string()),
    ("model", pa.string()), ("query", pa.string()), ("prediction", pa.string()),
    ("refs", pa.list_(pa.string())), ("contexts", pa.list_(pa.string())), ("metadata", pa.string()),
])


def _size(text: str) -> str:
    """A DuckDB size setting ('512MB', '1.5 GiB'), refused unless it is a number and a unit."""
    cleaned = str(text).strip()
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)? ?[KMGT]?i?B", cleaned, flags=re.IGNORECASE):
        raise StoreError(f"not a memory size: {text!r}")
    return cleaned


class DuplicateRow(StoreError):
    """A (datum id, model) pair already stored in this dataset, at ``existing_index``."""

    def __init__(self, datum_id: str, model: str, existing_index: int, new_index: int) -> None:
        self.datum_id, self.model = datum_id, model
        self.existing_index, self.new_index = existing_index, new_index
        super().__init__(f"datum id {datum_id!r} with model {model!r} is stored twice")


def data_table(dataset_id: int, first_index: int, rows: Sequence[Datum]) -> pa.Table:
    """Rows of the ``data`` table as Arrow, numbered from ``first_index``."""
    return pa.Table.from_pydict({
        "dataset_id": [dataset_id] * len(rows),
        "row_index": list(range(first_index, first_index + len(rows))),
        "datum_id": [r.datum_id for r in rows],
        "model": [r.model for r in rows],
        "query": [r.query for r in rows],
        "prediction": [r.prediction for r in rows],
        "refs": [r.references for r in rows],  # tuples: Arrow takes them as lists without a copy per row
        "contexts": [r.contexts for r in rows],
        "metadata": [json.dumps(dict(r.metadata), ensure_ascii=False, default=str) if r.metadata else None
                     for r in rows],
    }, schema=DATA_SCHEMA)


@dataclass(frozen=True)
class NewRows:
    """Rows of the ``data`` table to store with a write of cells (or alone: :meth:`StreamTables.append_rows`):
    ``table`` holds the data table's columns but dataset_id and row_index, numbered from ``first_index``.
    ``keep_stored``: rows a stopped run already stored are kept as they are (a resumed run reads them again)."""

    dataset_id: int
    first_index: int
    table: pa.Table
    keep_stored: bool = False


def insert_rows(cur: Any, rows: NewRows) -> None:
    """Inside the caller's transaction: the rows; a (datum id, model) already stored raises :class:`DuplicateRow`
    (nothing of the transaction stays)."""
    count = rows.table.num_rows
    block_rows = pa.table({"dataset_id": pa.array([rows.dataset_id] * count, pa.int32()),
                           "row_index": pa.array(range(rows.first_index, rows.first_index + count), pa.int32()),
                           **{c: rows.table.column(c) for c in DATA_SCHEMA.names[2:]}}).cast(DATA_SCHEMA)
    verb = "INSERT OR IGNORE" if rows.keep_stored else "INSERT"
    try:  # the Arrow table is read by its variable name; verb is a constant
        cur.execute(f"{verb} INTO data SELECT * FROM block_rows")
    except duckdb.ConstraintException:
        raise _duplicate(cur, rows.dataset_id, block_rows) from None


def _duplicate(failed: Any, dataset_id: int, table: pa.Table) -> DuplicateRow:
    cur = failed.cursor()  # the failed insert's cursor is not reusable
    cur.register("incoming_rows", table)
    try:
        found = cur.execute(
            "SELECT i.datum_id, i.model, coalesce(d.row_index, (SELECT min(j.row_index) FROM incoming_rows j "
            "WHERE j.datum_id = i.datum_id AND j.model = i.model)), i.row_index FROM incoming_rows i "
            "LEFT JOIN data d ON d.dataset_id = ? AND d.datum_id = i.datum_id AND d.model = i.model "
            "WHERE d.row_index IS NOT NULL OR i.row_index > (SELECT min(j.row_index) FROM incoming_rows j "
            "WHERE j.datum_id = i.datum_id AND j.model = i.model) ORDER BY i.row_index LIMIT 1",
            [dataset_id]).fetchone()
    finally:
        cur.close()
    if found is None:  # pragma: no cover - the constraint named a key we cannot find
        raise StoreError("a (datum id, model) pair is stored twice")
    return DuplicateRow(found[0], found[1], int(found[2]), int(found[3]))


def mark_finished(cur: Any, run_id: int, keys: Sequence[str]) -> None:
    """Inside the caller's transaction: the chunks or blocks of ``run_id`` now stored (skipped on resume)."""
    for key in keys:
        cur.execute("INSERT OR REPLACE INTO run_blocks VALUES (?, ?)", [run_id, key])


class StreamTables(Part):
    """Datasets filled chunk by chunk, and the records of runs scored in chunks or blocks."""

    @contextmanager
    def memory_limit(self, limit: str, threads: int | None = None) -> Iterator[None]:
        """DuckDB's memory limit (e.g. '512MB'), and its threads when given, while a long write runs in this
        session, then the previous ones.

        DuckDB otherwise caches up to 80% of the machine's memory; a streamed million rows does not need that.
        One thread suits a write beside pool workers that keep every core busy: DuckDB's own threads then only
        compete with them (measured: a fourth less CPU for the same rows). Used inside ``with store.session():``
        (the settings belong to the open file).
        """
        cur = self.cur
        before, threads_before = cur.execute(
            "SELECT current_setting('memory_limit'), current_setting('threads')").fetchone()
        cur.execute(f"SET memory_limit = '{_size(limit)}'")
        if threads is not None:
            cur.execute(f"SET threads = {max(1, int(threads))}")
        try:
            yield
        finally:
            cur.execute(f"SET memory_limit = '{_size(before)}'")
            if threads is not None:
                cur.execute(f"SET threads = {int(threads_before)}")

    @reads
    def free_dataset_names(self, name: str) -> tuple[str, list[str]]:
        """(the first free name among ``name``, ``name (2)``..., the taken ones before it)."""
        taken = {n for (n,) in self.cur.execute("SELECT name FROM datasets").fetchall()}
        before = []
        for candidate in [name] + [f"{name} ({i})" for i in range(2, len(taken) + 3)]:
            if candidate not in taken:
                return candidate, before
            before.append(candidate)
        raise AssertionError("unreachable: there is always a free name")  # pragma: no cover

    @writes
    def start_dataset(self, name: str, source: str, mapping: Mapping[str, Any]) -> int:
        """Register an empty dataset (no row count yet) to fill chunk by chunk (:class:`NewRows`)."""
        cur = self.cur
        return int(cur.execute(
            "INSERT INTO datasets (name, source, n_rows, models, mapping, metadata_columns) "
            "VALUES (?, ?, NULL, [], ?, []) RETURNING dataset_id",
            [name, source, json.dumps(dict(mapping), ensure_ascii=False, default=str)]).fetchone()[0])

    @writes
    def append_rows(self, rows: NewRows) -> None:
        """Rows of a dataset read in chunks without a run (a plain load); a run's rows come with its cells
        through :meth:`~.cells_sql.Cells.write_cells`. A (datum id, model) already stored raises
        :class:`DuplicateRow` and adds nothing."""
        insert_rows(self.cur, rows)

    @writes
    def finish_dataset(self, dataset_id: int, n_rows: int, models: Sequence[str],
                       metadata_columns: Sequence[str]) -> None:
        cur = self.cur
        cur.execute("UPDATE datasets SET n_rows = ?, models = ?, metadata_columns = ? WHERE dataset_id = ?",
                    [n_rows, list(models), list(metadata_columns), dataset_id])
        stamp_version(cur, dataset_id)  # its rows are all in: now it has a content hash and a version number

    @reads
    def same_rows(self, first: int, second: int) -> bool:
        """True when two datasets hold the same rows in the same order (compared in SQL)."""
        columns = "row_index, datum_id, model, query, prediction, refs, contexts, CAST(metadata AS VARCHAR)"
        counts = self.cur.execute(
            "SELECT count(*) FILTER (WHERE dataset_id = ?), count(*) FILTER (WHERE dataset_id = ?) FROM data "
            "WHERE dataset_id IN (?, ?)", [first, second, first, second]).fetchone()
        if counts[0] != counts[1]:
            return False
        differ = self.cur.execute(
            f"SELECT count(*) FROM (SELECT {columns} FROM data WHERE dataset_id = ? "  # columns: a constant
            f"EXCEPT ALL SELECT {columns} FROM data WHERE dataset_id = ?)", [first, second]).fetchone()[0]
        return differ == 0

    @writes
    def move_runs(self, from_dataset: int, to_dataset: int) -> None:
        """Give ``from_dataset``'s runs to ``to_dataset`` (same rows), then delete ``from_dataset``."""
        cur = self.cur
        cur.execute("UPDATE runs SET dataset_id = ? WHERE dataset_id = ?", [to_dataset, from_dataset])
        cur.execute("DELETE FROM data WHERE dataset_id = ?", [from_dataset])
        cur.execute("DELETE FROM datasets WHERE dataset_id = ?", [from_dataset])
        forget_version(cur, from_dataset)

    # -- runs scored in chunks or blocks (streamed runs, the Ray engine) --------
    @writes
    def record_block_run(self, run_id: int, source: str, mapping: Mapping[str, Any] | None, block_rows: int) -> None:
        """Remember where (and in blocks or chunks of how many rows) a run reads its data, to resume it."""
        cur = self.cur
        cur.execute("INSERT OR REPLACE INTO block_runs VALUES (?, ?, ?, ?)",
                    [run_id, source, None if mapping is None else json.dumps(dict(mapping), default=str),
                     block_rows])

    @reads
    def block_run(self, run_id: int) -> tuple[str, dict[str, Any] | None, int] | None:
        """(source, column mapping, rows per block) of a block-scored run, or None for any other run."""
        rows = self._block_rows("SELECT source, mapping, block_rows FROM block_runs WHERE run_id = ?", run_id)
        return None if not rows else (rows[0][0], json.loads(rows[0][1]) if rows[0][1] else None, int(rows[0][2]))

    @reads
    def finished_blocks(self, run_id: int) -> set[str]:
        return {key for (key,) in self._block_rows("SELECT block FROM run_blocks WHERE run_id = ?", run_id)}

    def _block_rows(self, sql: str, run_id: int) -> list[tuple]:
        """The rows of a query on one run's block records; none before a file holds any (read-only works too)."""
        try:
            return self.cur.execute(sql, [run_id]).fetchall()
        except duckdb.CatalogException:
            return []

    @reads
    def data_arrow(self, dataset_id: int, models: Sequence[str] | None = None) -> pa.Table:
        """A stored dataset's rows (of ``models``, default all) as Arrow, in row order."""
        return self.cur.sql(  # a relation: Arrow without an extra copy
            "SELECT datum_id, model, query, prediction, refs, contexts, CAST(metadata AS VARCHAR) AS metadata "
            "FROM data WHERE dataset_id = ? AND (? OR list_contains(?, model)) ORDER BY row_index",
            params=[dataset_id, not models, list(models or [])]).to_arrow_table()

    @reads
    def corpus_cells(self, run_id: int, dataset_id: int, metric: str, batch: int = 50_000, *,
                     below: int | None = None) -> Iterator[tuple[int, str, str, float | None, str | None]]:
        """(row index, model, score, value, details JSON) of one metric's cells in row order (of rows before row
        index ``below`` when given), read in batches."""
        result = self.cur.execute(  # a generator: the file stays open until it ends
            "SELECT d.row_index, s.model, s.score, s.value, CAST(s.details AS VARCHAR) FROM scores s JOIN data d "
            "ON d.dataset_id = ? AND d.datum_id = s.datum_id AND d.model = s.model "
            "WHERE s.run_id = ? AND s.metric = ? AND (? IS NULL OR d.row_index < ?) ORDER BY d.row_index, s.score",
            [dataset_id, run_id, metric, below, below])
        while True:
            rows = result.fetchmany(batch)
            if not rows:
                return
            yield from rows


BLOCK_DDL = (
    "CREATE TABLE IF NOT EXISTS block_runs (run_id INTEGER PRIMARY KEY, source VARCHAR, mapping JSON, "
    "block_rows INTEGER)",
    "CREATE TABLE IF NOT EXISTS run_blocks (run_id INTEGER NOT NULL, block VARCHAR NOT NULL, "
    "PRIMARY KEY (run_id, block))",
)
