"""The one write path of score cells, lexical and judge alike, on every engine.

Every cell reaches the ``scores`` table as an Arrow table in one layout
(:data:`SCORE_SCHEMA`) through :func:`write_scores`, the one statement that
writes it, called by one store operation, :meth:`~.cells_sql.Cells.write_cells`:
lexical and endpoint scores as records, the judge's batches (inside the judge
writer's transaction, beside their verdicts), a streamed run's chunks (built
by :func:`column_table`) and the Ray engine's blocks (their nested cells
flattened by :func:`block_scores`). A new run's cells are appended; cells that
may already be stored (a resumed run, a re-scored judge cell) replace theirs.
"""

from __future__ import annotations

from json import encoder as json_encoder
from typing import Any, Mapping, Sequence

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .connection import registered
from .database import insert_arrow, json_text

#: One score cell as written: (datum_id, model, metric, score, value, details, reason).
CellRecord = tuple[str, str, str, str, float | None, Mapping[str, Any] | None, str | None]

SCORE_SCHEMA = pa.schema([
    ("run_id", pa.int32()), ("datum_id", pa.string()), ("model", pa.string()), ("metric", pa.string()),
    ("score", pa.string()), ("value", pa.float64()), ("details", pa.string()), ("reason", pa.string()),
])


def cell_table(run_id: int, cells: Sequence[Sequence[Any]]) -> pa.Table:
    """Cells (datum_id, model, metric, score, value, details, reason) as an Arrow table in the ``scores`` layout
    (details as JSON text): :func:`column_table` of their columns."""
    return column_table(run_id, {name: [c[i] for c in cells] for i, name in enumerate(CELL_COLUMNS)})


#: A cell record's fields, in order (:class:`~textgen_core.store.CellRecord`).
CELL_COLUMNS = ("datum_id", "model", "metric", "score", "value", "details", "reason")


def _details_encoder() -> Any:
    """One C JSON encoder that writes what :func:`json_text` writes (``ensure_ascii=False``, ``default=str``),
    built once: ``json.dumps`` builds one per call, which is most of the time of a small dict's JSON."""
    make = json_encoder.c_make_encoder
    if make is None:  # pragma: no cover - a Python without the _json accelerator
        return None
    return make(None, str, json_encoder.encode_basestring, None, ": ", ", ", False, False, True)


_DETAILS = _details_encoder()


def details_texts(details: Sequence[Mapping[str, Any] | None]) -> list[str | None]:
    """Each cell's details as JSON text (None stays NULL); details shared by several cells (ROUGE-L and
    ROUGE-Lsum of one row) are encoded once."""
    if _DETAILS is None:  # pragma: no cover
        return [json_text(d) for d in details]
    encode, join = _DETAILS, "".join
    done: dict[int, str] = {}
    out: list[str | None] = []
    for value in details:
        if value is None:
            out.append(None)
            continue
        text = done.get(id(value))
        if text is None:
            text = done[id(value)] = join(encode(value, 0)) if type(value) is dict else json_text(value)
        out.append(text)
    return out


def column_table(run_id: int, columns: Mapping[str, list[Any]]) -> pa.Table:
    """Cells given column by column (details as dicts, as :func:`~textgen_core.run_rules.cell_columns` gathers
    them) as an Arrow table in the ``scores`` layout."""
    return pa.Table.from_pydict({
        "run_id": pa.array(np.full(len(columns["datum_id"]), run_id, dtype=np.int32)),
        **{name: columns[name] for name in ("datum_id", "model", "metric", "score", "value")},
        "details": details_texts(columns["details"]),
        "reason": columns["reason"],
    }, schema=SCORE_SCHEMA)


def write_scores(cur: duckdb.DuckDBPyConnection, table: pa.Table, *, replace: bool) -> None:
    """Write cells in the :data:`SCORE_SCHEMA` layout: appended, or replacing stored ones (``replace``).

    The table keeps no index (one costs more than scoring): a cell that may already be stored (a resumed run,
    a re-scored judge cell) is written with ``replace``, which first deletes the stored cells of the same
    (run, datum, model, score); a fresh run's cells are appended, and :func:`duplicate_cells` checks it once.
    """
    table = table.select(SCORE_SCHEMA.names).cast(SCORE_SCHEMA)
    if replace and table.num_rows:
        with registered(cur, "replacing_cells", table.select(["run_id", "datum_id", "model", "score"])):
            for run_id in pc.unique(table.column("run_id")).to_pylist():  # a constant run: its row groups alone
                cur.execute("DELETE FROM scores WHERE run_id = ? AND (datum_id, model, score) IN "
                            "(SELECT datum_id, model, score FROM replacing_cells WHERE run_id = ?)", [run_id, run_id])
    insert_arrow(cur, "scores", table)


def duplicate_cells(cur: duckdb.DuckDBPyConnection, run_id: int) -> int:
    """How many cells of a run repeat a (datum, model, score) already stored (0 unless a write path is wrong)."""
    return int(cur.execute("SELECT count(*) - count(DISTINCT (datum_id, model, score)) FROM scores "
                           "WHERE run_id = ?", [run_id]).fetchone()[0])


def block_scores(run_id: int, block: pa.Table) -> pa.Table:
    """A Ray block's cells (``cells``: a list of metric, score, value, details, reason structs per row, beside
    ``datum_id`` and ``model``) in the :data:`SCORE_SCHEMA` layout."""
    lists = block.column("cells").combine_chunks()
    rows = pc.list_parent_indices(lists)
    cells = pc.list_flatten(lists)
    return pa.Table.from_arrays(
        [pa.array([run_id] * len(cells), pa.int32()), pc.take(block.column("datum_id"), rows),
         pc.take(block.column("model"), rows)] + [cells.field(name) for name in
                                                  ("metric", "score", "value", "details", "reason")],
        schema=SCORE_SCHEMA)
