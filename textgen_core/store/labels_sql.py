"""Human labels of a run's cells: one row per (datum, model, score, annotator), the one write path of ``labels``.

A label is a person's value for a score on the score's own scale. How the cell
came to be labelled is kept with it (``sampling``: random, stratified,
disagreement, import, dataset) with its inclusion probability when the
sampling knows it, because the bias-corrected estimates need a random or
known-probability subset.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import duckdb
import pandas as pd
import pyarrow as pa

from .database import Part, insert_arrow, reads, writes
from .run_sql import require_run

#: DDL run by :class:`~textgen_core.store.Store` with the rest of the schema.
LABELS_DDL: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS labels (
        run_id INTEGER NOT NULL,
        datum_id VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        score VARCHAR NOT NULL,
        annotator VARCHAR NOT NULL,
        value DOUBLE NOT NULL,
        note VARCHAR,
        sampling VARCHAR NOT NULL,
        probability DOUBLE,
        created_at TIMESTAMP DEFAULT current_timestamp,
        PRIMARY KEY (run_id, datum_id, model, score, annotator))""",
)

#: Columns of one label as :meth:`Labels.write_labels` takes them.
LABEL_FIELDS = ("datum_id", "model", "score", "annotator", "value", "note", "sampling", "probability")
_SCHEMA = pa.schema([("run_id", pa.int32()), ("datum_id", pa.string()), ("model", pa.string()),
                     ("score", pa.string()), ("annotator", pa.string()), ("value", pa.float64()),
                     ("note", pa.string()), ("sampling", pa.string()), ("probability", pa.float64())])


class Labels(Part):
    """Writes and reads of ``labels``."""

    @writes
    def write_labels(self, run_id: int, labels: Iterable[Sequence[Any]]) -> int:
        """Upsert labels (tuples in :data:`LABEL_FIELDS` order) in one transaction; a newer label of the same
        (datum, model, score, annotator) replaces the older one. Returns how many were written."""
        latest = {(row[0], row[1], row[2], row[3]): tuple(row) for row in labels}  # the last of a cell wins
        rows = list(latest.values())
        if not rows:
            return 0
        columns = {name: [row[i] for row in rows] for i, name in enumerate(LABEL_FIELDS)}
        table = pa.Table.from_pydict({"run_id": [run_id] * len(rows), **columns}, schema=_SCHEMA)
        cur = self.cur
        require_run(cur, run_id)
        insert_arrow(cur, "labels", table, replace=True, by_name=True)
        return len(rows)

    @reads
    def labels(self, run_id: int, *, score: str | None = None, annotator: str | None = None) -> pd.DataFrame:
        """Labels of a run (optionally one score, one annotator), in the order they were given.

        A file written before labels existed, opened read-only, has no table yet: no labels.
        """
        try:
            return self.cur.execute(
                "SELECT datum_id, model, score, annotator, value, note, sampling, probability, created_at "
                "FROM labels WHERE run_id = ? AND (? IS NULL OR score = ?) AND (? IS NULL OR annotator = ?) "
                "ORDER BY created_at, datum_id, model, score, annotator",
                [run_id, score, score, annotator, annotator]).df()
        except duckdb.CatalogException:
            return pd.DataFrame(columns=["datum_id", "model", "score", "annotator", "value", "note", "sampling",
                                         "probability", "created_at"])
