"""SQL for datasets: store, list, find, load, rename, delete, search. Mixed into :class:`Store`.

A dataset is written whole in one transaction through a registered Arrow table.
A dataset (or the one a save would replace) that a run is still scoring is not
deleted: the run would write orphan rows and "finish" a run that is gone.
"""

from __future__ import annotations

import json
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa

from ..errors import StoreError
from ..model import Dataset, Datum
from .connection import registered
from .runner import live_runner
from .score_reads import like_pattern

_DATA_SCHEMA = pa.schema([
    ("dataset_id", pa.int32()), ("row_index", pa.int32()), ("datum_id", pa.string()),
    ("model", pa.string()), ("query", pa.string()), ("prediction", pa.string()),
    ("refs", pa.list_(pa.string())), ("contexts", pa.list_(pa.string())), ("metadata", pa.string()),
])


def json_text(value: Any) -> str | None:
    """``value`` as JSON text for a JSON column (None stays NULL)."""
    return None if value is None else json.dumps(value, ensure_ascii=False, default=str)


def stored_datum(datum_id: str, model: str, query: str | None, prediction: str | None, refs: Any, contexts: Any,
                 metadata: str | None) -> Datum:
    """A row of the data table (its columns in table order, metadata as JSON text) as a datum."""
    return Datum(datum_id, model, query, prediction, tuple(refs or ()), tuple(contexts or ()),
                 json.loads(metadata) if metadata else {})


def insert_arrow(cur: duckdb.DuckDBPyConnection, target: str, table: pa.Table, *, replace: bool = False,
                 by_name: bool = False) -> None:
    """Insert (or upsert) every row of an Arrow table into ``target``, a constant table name
    (``by_name``: columns matched by name, not position)."""
    view = f"incoming_{target}"
    with registered(cur, view, table):
        cur.execute(f"INSERT {'OR REPLACE ' if replace else ''}INTO {target} {'BY NAME ' if by_name else ''}"
                    f"SELECT * FROM {view}")



class DatasetTablesMixin:
    """Dataset reads and writes; uses the owning Store's ``transaction()``, ``_cur()``, ``_frame()``, ``_one()``
    and its ``_delete_run``."""

    def save_dataset(self, dataset: Dataset, name: str | None = None, *, replace: bool = False) -> int:
        """Store a whole dataset in one transaction; returns its id."""
        name = name or dataset.name
        models = dataset.models
        with self.transaction() as cur:
            existing = cur.execute("SELECT dataset_id FROM datasets WHERE name = ?", [name]).fetchone()
            if existing and not replace:
                raise StoreError(f"a dataset named {name!r} already exists; choose another name or replace it")
            if existing:
                self._refuse_running(cur, "SELECT run_id, runner FROM runs WHERE dataset_id = ? AND status = 'running'",
                                     existing[0], "the dataset it would replace")
                self._delete_dataset(cur, existing[0])
            dataset_id = cur.execute(
                "INSERT INTO datasets (name, source, n_rows, models, mapping, metadata_columns) "
                "VALUES (?, ?, ?, ?, ?, ?) RETURNING dataset_id",
                [name, dataset.source, len(dataset.rows), models, json_text(dict(dataset.mapping)),
                 list(dataset.metadata_columns)],
            ).fetchone()[0]
            table = pa.Table.from_pydict({
                "dataset_id": [dataset_id] * len(dataset.rows),
                "row_index": list(range(len(dataset.rows))),
                "datum_id": [r.datum_id for r in dataset.rows],
                "model": [r.model for r in dataset.rows],
                "query": [r.query for r in dataset.rows],
                "prediction": [r.prediction for r in dataset.rows],
                "refs": [list(r.references) for r in dataset.rows],
                "contexts": [list(r.contexts) for r in dataset.rows],
                "metadata": [json_text(dict(r.metadata)) if r.metadata else None for r in dataset.rows],
            }, schema=_DATA_SCHEMA)
            insert_arrow(cur, "data", table)
        return int(dataset_id)

    def list_datasets(self) -> pd.DataFrame:
        return self._frame(
            "SELECT d.dataset_id, d.name, d.source, d.created_at, d.n_rows, d.models, d.metadata_columns, "
            "(SELECT count(*) FROM runs r WHERE r.dataset_id = d.dataset_id) AS n_runs "
            "FROM datasets d ORDER BY d.dataset_id"
        )

    def dataset_id(self, name_or_id: str | int) -> int:
        row = self._one(
            "SELECT dataset_id FROM datasets WHERE name = ? OR CAST(dataset_id AS VARCHAR) = ? "
            "ORDER BY (name = ?) DESC LIMIT 1",
            [str(name_or_id), str(name_or_id), str(name_or_id)],
        )
        if row is None:
            raise StoreError(f"no dataset named {name_or_id!r}")
        return int(row[0])

    def load_dataset(self, dataset_id: int) -> Dataset:
        head = self._one("SELECT name, source, mapping, metadata_columns FROM datasets WHERE dataset_id = ?", [dataset_id])
        if head is None:
            raise StoreError(f"no dataset with id {dataset_id}")
        rows = self._cur().execute(
            "SELECT datum_id, model, query, prediction, refs, contexts, metadata FROM data "
            "WHERE dataset_id = ? ORDER BY row_index", [dataset_id]
        ).fetchall()
        return Dataset(
            name=head[0], source=head[1] or "", mapping=json.loads(head[2]) if head[2] else {},
            metadata_columns=tuple(head[3] or ()),
            rows=[stored_datum(*row) for row in rows],
        )

    def rename_dataset(self, dataset_id: int, new_name: str) -> None:
        new_name = new_name.strip()
        if not new_name:
            raise StoreError("a dataset name cannot be empty")
        with self.transaction() as cur:
            clash = cur.execute("SELECT 1 FROM datasets WHERE name = ? AND dataset_id <> ?", [new_name, dataset_id]).fetchone()
            if clash:
                raise StoreError(f"a dataset named {new_name!r} already exists")
            cur.execute("UPDATE datasets SET name = ? WHERE dataset_id = ?", [new_name, dataset_id])

    def delete_dataset(self, dataset_id: int, *, force: bool = False) -> None:
        """Delete a dataset with its runs, scores and verdicts; refused while one of its runs is scoring.

        ``force`` deletes anyway (for a run left 'running' by a program that died).
        """
        with self.transaction() as cur:
            if not force:
                self._refuse_running(cur, "SELECT run_id, runner FROM runs WHERE dataset_id = ? AND status = 'running'",
                                     dataset_id, "this dataset")
            self._delete_dataset(cur, dataset_id)

    def _refuse_running(self, cur: duckdb.DuckDBPyConnection, sql: str, key: int, what: str) -> None:
        """Refuse while a run (``sql``: run_id, runner of 'running' runs) has a live program or an unknown one;
        a run whose program died is deleted like any other."""
        running = [(run_id, live_runner(runner, this_process=True) if runner else "an unknown program")
                   for run_id, runner in cur.execute(sql, [key]).fetchall()]
        running = [(run_id, holder) for run_id, holder in running if holder]
        if running:
            runs = ", ".join(str(run_id) for run_id, _ in running)
            holders = ", ".join(dict.fromkeys(holder for _, holder in running))
            raise StoreError(f"run {runs} is still scoring {what} (by {holders}): cancel it (or let it finish) "
                             "before deleting. "
                             "Nothing was deleted. If the program that ran it has stopped, resume the run "
                             f"or delete it anyway: 'textgen-eval delete-run {runs.split(', ')[0]} --force'.")

    def _delete_dataset(self, cur: duckdb.DuckDBPyConnection, dataset_id: int) -> None:
        for (run_id,) in cur.execute("SELECT run_id FROM runs WHERE dataset_id = ?", [dataset_id]).fetchall():
            self._delete_run(cur, run_id)
        cur.execute("DELETE FROM data WHERE dataset_id = ?", [dataset_id])
        cur.execute("DELETE FROM datasets WHERE dataset_id = ?", [dataset_id])

    def dataset_fields(self, dataset_id: int) -> set[str]:
        """Normalized fields with at least one non-empty value, plus the metadata columns."""
        head = self._one("SELECT metadata_columns FROM datasets WHERE dataset_id = ?", [dataset_id])
        if head is None:
            raise StoreError(f"no dataset with id {dataset_id}")
        present = self._one(
            "SELECT bool_or(coalesce(query, '') <> ''), bool_or(coalesce(prediction, '') <> ''), "
            "bool_or(len(coalesce(refs, [])) > 0), bool_or(len(coalesce(contexts, [])) > 0) "
            "FROM data WHERE dataset_id = ?", [dataset_id])
        names = ("query", "prediction", "references", "contexts")
        return {name for name, flag in zip(names, present) if flag} | set(head[0] or ())

    def search_data(self, dataset_id: int, text: str = "", limit: int = 200) -> pd.DataFrame:
        """Datums whose id, query, prediction or references contain ``text`` (case-insensitive)."""
        pattern = like_pattern(text)
        return self._frame(
            "SELECT datum_id, model, query, prediction FROM data WHERE dataset_id = ? AND "
            "(? = '' OR datum_id ILIKE ? ESCAPE '\\' OR query ILIKE ? ESCAPE '\\' OR prediction ILIKE ? ESCAPE '\\' "
            "OR array_to_string(refs, ' ') ILIKE ? ESCAPE '\\') "
            "ORDER BY row_index LIMIT ?",
            [dataset_id, text, pattern, pattern, pattern, pattern, limit],
        )

    def datum(self, dataset_id: int, datum_id: str) -> list[Datum]:
        """Every model's row for one datum."""
        rows = self._cur().execute(
            "SELECT datum_id, model, query, prediction, refs, contexts, metadata FROM data "
            "WHERE dataset_id = ? AND datum_id = ? ORDER BY row_index", [dataset_id, datum_id]
        ).fetchall()
        return [Datum(d, m, q, p, tuple(r or ()), tuple(c or ()), json.loads(meta) if meta else {})
                for d, m, q, p, r, c, meta in rows]

    def datum_ids(self, dataset_id: int) -> list[str]:
        """Distinct datum ids of a dataset, in the order they first appear."""
        rows = self._cur().execute(
            "SELECT datum_id FROM data WHERE dataset_id = ? GROUP BY datum_id ORDER BY min(row_index)",
            [dataset_id]).fetchall()
        return [r[0] for r in rows]
