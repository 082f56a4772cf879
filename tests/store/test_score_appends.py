"""The scores table without an index: a fresh run appends, a re-scored cell replaces its row, a run is finished
only with one cell per (datum, model, score), and a file of schema 5 (scores under a primary key) keeps its rows."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from textgen_core.errors import StoreError
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store
from textgen_core.store.schema import SCHEMA_VERSION
from textgen_core.store.score_writes import cell_table
from textgen_core.store.stream_sql import NewRows


def _run(store: Store) -> int:
    rows = [Datum(f"d{i}", "m", "q", "p", ("r",)) for i in range(3)]
    dataset_id = store.save_dataset(Dataset("d", rows))
    return store.create_run(dataset_id, ["exact_match"], {}, {}, ["m"])


def _cells(store: Store, run_id: int) -> list[tuple]:
    """(datum, score, value or None, reason) of a run's cells."""
    frame = store.scores(run_id)
    return [(d, s, None if v != v else v, r if isinstance(r, str) else None) for d, s, v, r in
            frame[["datum_id", "score", "value", "reason"]].itertuples(index=False, name=None)]


def test_a_rescored_cell_replaces_its_row_and_no_other(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.duckdb")
    run_id = _run(store)
    other = store.create_run(1, ["exact_match"], {}, {}, ["m"])
    cell = ("d0", "m", "exact_match", "exact_match")
    store.write_cells(run_id, [(*cell, 1.0, None, None), ("d1", "m", "exact_match", "exact_match", 0.0, None, None)])
    store.write_cells(other, [(*cell, 0.5, None, None)])
    store.write_cells(run_id, [(*cell, None, None, "judge timed out")])  # the same cell, scored again
    store.write_cells(run_id, [(*cell, 0.0, {"k": "v"}, None)])
    assert _cells(store, run_id) == [("d0", "exact_match", 0.0, None), ("d1", "exact_match", 0.0, None)]
    assert _cells(store, other) == [("d0", "exact_match", 0.5, None)]  # another run's cell is untouched
    store.set_run_status(run_id, "finished")
    assert store.get_run(run_id)["status"] == "finished"


def test_a_run_with_a_cell_stored_twice_is_not_marked_finished(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.duckdb")
    run_id = _run(store)
    dataset_id = store.get_run(run_id)["dataset_id"]
    cells = cell_table(run_id, [("d0", "m", "exact_match", "exact_match", 1.0, None, None)])
    rows = pa.table({"datum_id": ["x1"], "model": ["m"], "query": ["q"], "prediction": ["p"], "refs": [["r"]],
                     "contexts": [[]], "metadata": pa.array([None], pa.string())})
    store.write_cells(run_id, cells, rows=NewRows(dataset_id, 3, rows), finished=["0"], fresh=True)  # appended,
    # as a fresh run's chunk is; then a wrong writer repeating the cell as fresh
    store.write_cells(run_id, cells, rows=NewRows(dataset_id, 4, rows.set_column(0, "datum_id", pa.array(["x2"]))),
                      finished=["1"], fresh=True)
    with pytest.raises(StoreError, match=r"stored 1 cell\(s\) twice.*not marked finished"):
        store.set_run_status(run_id, "finished")
    assert store.get_run(run_id)["status"] == "running"
    store.set_run_status(run_id, "failed", error="bad writer")  # any other end is recorded
    assert store.get_run(run_id)["status"] == "failed"


def test_a_file_of_schema_5_keeps_its_cells_and_loses_the_index(tmp_path: Path) -> None:
    db = tmp_path / "old.duckdb"
    store = Store(db)
    run_id = _run(store)
    store.write_cells(run_id, [("d0", "m", "exact_match", "exact_match", 1.0, {"n": 1}, None),
                               ("d1", "m", "exact_match", "exact_match", None, None, "empty prediction")])
    before = _cells(store, run_id)
    store.close()
    with duckdb.connect(str(db)) as con:  # as schema 5 left it: the same rows under a primary key
        con.execute("CREATE TABLE keyed AS SELECT * FROM scores")
        con.execute("DROP TABLE scores")
        con.execute("CREATE TABLE scores (run_id INTEGER NOT NULL, datum_id VARCHAR NOT NULL, model VARCHAR NOT NULL, "
                    "metric VARCHAR NOT NULL, score VARCHAR NOT NULL, value DOUBLE, details JSON, reason VARCHAR, "
                    "PRIMARY KEY (run_id, datum_id, model, score))")
        con.execute("INSERT INTO scores SELECT * FROM keyed")
        con.execute("DROP TABLE keyed")
        con.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    assert _cells(Store(db, read_only=True), run_id) == before  # read-only: read as it is
    # the file under a name this process never opened: its first read-write open here migrates it, as a new
    # program's does (a second interpreter cost ~1.5 CPU-s)
    moved = db.with_name("moved.duckdb")
    shutil.copyfile(db, moved)
    store = Store(moved)
    store.write_cells(run_id, [("d1", "m", "exact_match", "exact_match", 0.0, None, None)])
    assert _cells(store, run_id) == [before[0], ("d1", "exact_match", 0.0, None)]
    store.close()
    with duckdb.connect(str(moved), read_only=True) as con:
        assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
        assert con.execute("SELECT count(*) FROM duckdb_constraints() WHERE table_name = 'scores' "
                           "AND constraint_type = 'PRIMARY KEY'").fetchone() == (0,)
        assert con.execute("SELECT count(*) FROM duckdb_indexes() WHERE table_name = 'scores'").fetchone() == (0,)
