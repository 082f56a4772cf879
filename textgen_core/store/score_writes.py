"""The one write path of score cells, lexical and judge alike.

Every cell reaches the ``scores`` table through :func:`insert_cells`, inside the
caller's transaction: :meth:`Store.write_cells` (lexical and endpoint scores) and
the judge's batches (cells with their verdicts, exchanges and usage) both use it.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import duckdb
import pyarrow as pa

from .dataset_sql import insert_arrow, json_text

#: One score cell as written: (datum_id, model, metric, score, value, details, reason).
CellRecord = tuple[str, str, str, str, float | None, Mapping[str, Any] | None, str | None]

SCORE_SCHEMA = pa.schema([
    ("run_id", pa.int32()), ("datum_id", pa.string()), ("model", pa.string()), ("metric", pa.string()),
    ("score", pa.string()), ("value", pa.float64()), ("details", pa.string()), ("reason", pa.string()),
])


def cell_table(run_id: int, cells: Sequence[Sequence[Any]]) -> pa.Table:
    """Cells as an Arrow table in the ``scores`` layout (details as JSON text)."""
    return pa.Table.from_pydict({
        "run_id": [run_id] * len(cells),
        "datum_id": [c[0] for c in cells],
        "model": [c[1] for c in cells],
        "metric": [c[2] for c in cells],
        "score": [c[3] for c in cells],
        "value": [c[4] for c in cells],
        "details": [json_text(c[5]) for c in cells],
        "reason": [c[6] for c in cells],
    }, schema=SCORE_SCHEMA)


def insert_cells(cur: duckdb.DuckDBPyConnection, run_id: int, cells: Sequence[Sequence[Any]]) -> None:
    """Upsert cells of one run inside the caller's transaction (a re-scored cell replaces its row)."""
    if cells:
        insert_arrow(cur, "scores", cell_table(run_id, cells), replace=True)
