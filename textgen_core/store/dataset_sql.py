"""SQL for datasets: store, list, find, load, rename, delete. The one write path of whole datasets.

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
from .database import Part, insert_arrow, json_text, reads, writes
from .run_sql import delete_run_rows, refuse_running
from .versions_sql import Stamp, forget_version, stamp_version

_DATA_SCHEMA = pa.schema([
    ("dataset_id", pa.int32()), ("row_index", pa.int32()), ("datum_id", pa.string()),
    ("model", pa.string()), ("query", pa.string()), ("prediction", pa.string()),
    ("refs", pa.list_(pa.string())), ("contexts", pa.list_(pa.string())), ("metadata", pa.string()),
])


def stored_datum(datum_id: str, model: str, query: str | None, prediction: str | None, refs: Any, contexts: Any,
                 metadata: str | None) -> Datum:
    """A row of the data table (its columns in table order, metadata as JSON text) as a datum."""
    return Datum(datum_id, model, query, prediction, tuple(refs or ()), tuple(contexts or ()),
                 json.loads(metadata) if metadata else {})


class Datasets(Part):
    """The ``datasets`` and ``data`` tables: a whole dataset stored, read, renamed or deleted."""

    @writes
    def save_dataset(self, dataset: Dataset, name: str | None = None, *, replace: bool = False,
                     family: str | None = None) -> int:
        """Store a whole dataset in one transaction as the next version of ``family`` (default: the family of
        its name, see :func:`.versions_sql.family_of`); returns its id."""
        return self._save(dataset, name, replace, family)[0]

    def _save(self, dataset: Dataset, name: str | None, replace: bool, family: str | None) -> tuple[int, Stamp]:
        name = name or dataset.name
        cur = self.cur
        existing = cur.execute("SELECT dataset_id FROM datasets WHERE name = ?", [name]).fetchone()
        if existing and not replace:
            raise StoreError(f"a dataset named {name!r} already exists; choose another name or replace it")
        if existing:
            refuse_running(cur, "SELECT run_id, runner FROM runs WHERE dataset_id = ? AND status = 'running'",
                           existing[0], "the dataset it would replace")
            _delete_dataset(cur, existing[0])
        dataset_id = cur.execute(
            "INSERT INTO datasets (name, source, n_rows, models, mapping, metadata_columns) "
            "VALUES (?, ?, ?, ?, ?, ?) RETURNING dataset_id",
            [name, dataset.source, len(dataset.rows), dataset.models, json_text(dict(dataset.mapping)),
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
        return int(dataset_id), stamp_version(cur, int(dataset_id), family or name)

    @reads
    def list_datasets(self) -> pd.DataFrame:
        return self.cur.execute(
            "SELECT d.dataset_id, d.name, d.source, d.created_at, d.n_rows, d.models, d.metadata_columns, "
            "(SELECT count(*) FROM runs r WHERE r.dataset_id = d.dataset_id) AS n_runs "
            "FROM datasets d ORDER BY d.dataset_id").df()

    @reads
    def dataset_id(self, name_or_id: str | int) -> int:
        row = self.cur.execute(
            "SELECT dataset_id FROM datasets WHERE name = ? OR CAST(dataset_id AS VARCHAR) = ? "
            "ORDER BY (name = ?) DESC LIMIT 1",
            [str(name_or_id), str(name_or_id), str(name_or_id)],
        ).fetchone()
        if row is None:
            raise StoreError(f"no dataset named {name_or_id!r}")
        return int(row[0])

    @reads
    def load_dataset(self, dataset_id: int) -> Dataset:
        head = self.cur.execute("SELECT name, source, mapping, metadata_columns FROM datasets WHERE dataset_id = ?",
                                [dataset_id]).fetchone()
        if head is None:
            raise StoreError(f"no dataset with id {dataset_id}")
        rows = self.cur.execute(
            "SELECT datum_id, model, query, prediction, refs, contexts, metadata FROM data "
            "WHERE dataset_id = ? ORDER BY row_index", [dataset_id]
        ).fetchall()
        return Dataset(
            name=head[0], source=head[1] or "", mapping=json.loads(head[2]) if head[2] else {},
            metadata_columns=tuple(head[3] or ()),
            rows=[stored_datum(*row) for row in rows],
        )

    @writes
    def rename_dataset(self, dataset_id: int, new_name: str) -> None:
        new_name = new_name.strip()
        if not new_name:
            raise StoreError("a dataset name cannot be empty")
        clash = self.cur.execute("SELECT 1 FROM datasets WHERE name = ? AND dataset_id <> ?",
                                 [new_name, dataset_id]).fetchone()
        if clash:
            raise StoreError(f"a dataset named {new_name!r} already exists")
        self.cur.execute("UPDATE datasets SET name = ? WHERE dataset_id = ?", [new_name, dataset_id])

    @writes
    def delete_dataset(self, dataset_id: int, *, force: bool = False) -> None:
        """Delete a dataset with its runs, scores and verdicts; refused while one of its runs is scoring.

        ``force`` deletes anyway (for a run left 'running' by a program that died).
        """
        if not force:
            refuse_running(self.cur, "SELECT run_id, runner FROM runs WHERE dataset_id = ? AND status = 'running'",
                           dataset_id, "this dataset")
        _delete_dataset(self.cur, dataset_id)

    @reads
    def dataset_fields(self, dataset_id: int) -> set[str]:
        """Normalized fields with at least one non-empty value, plus the metadata columns."""
        head = self.cur.execute("SELECT metadata_columns FROM datasets WHERE dataset_id = ?", [dataset_id]).fetchone()
        if head is None:
            raise StoreError(f"no dataset with id {dataset_id}")
        present = self.cur.execute(
            "SELECT bool_or(coalesce(query, '') <> ''), bool_or(coalesce(prediction, '') <> ''), "
            "bool_or(len(coalesce(refs, [])) > 0), bool_or(len(coalesce(contexts, [])) > 0) "
            "FROM data WHERE dataset_id = ?", [dataset_id]).fetchone()
        names = ("query", "prediction", "references", "contexts")
        return {name for name, flag in zip(names, present) if flag} | set(head[0] or ())

    @reads
    def datum(self, dataset_id: int, datum_id: str) -> list[Datum]:
        """Every model's row for one datum."""
        rows = self.cur.execute(
            "SELECT datum_id, model, query, prediction, refs, contexts, metadata FROM data "
            "WHERE dataset_id = ? AND datum_id = ? ORDER BY row_index", [dataset_id, datum_id]
        ).fetchall()
        return [stored_datum(*row) for row in rows]


def _delete_dataset(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> None:
    for (run_id,) in cur.execute("SELECT run_id FROM runs WHERE dataset_id = ?", [dataset_id]).fetchall():
        delete_run_rows(cur, run_id)
    cur.execute("DELETE FROM data WHERE dataset_id = ?", [dataset_id])
    cur.execute("DELETE FROM datasets WHERE dataset_id = ?", [dataset_id])
    forget_version(cur, dataset_id)
