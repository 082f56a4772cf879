"""One schema with numbered migrations: a file written before runs kept their runner and kind is brought up to
SCHEMA_VERSION on its first read-write open, read as it is when opened read-only, and its runs resume by what
they are (told by their records when no kind was kept)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from textgen_core.evaluate import evaluate
from textgen_core.model import Dataset, Datum
from textgen_core.progress import Progress
from textgen_core.store import Store
from textgen_core.store.schema import MIGRATIONS, SCHEMA_VERSION, SCORE_COLUMNS
from textgen_core.streaming import stream_file
from streamed_files import write_csv


def _as_version_one(db: Path) -> None:
    with duckdb.connect(str(db)) as con:
        for column in ("kind", "runner"):
            con.execute(f"ALTER TABLE runs DROP COLUMN {column}")
        con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")


def test_an_old_file_is_migrated_once_and_read_as_it_is_read_only(tmp_path: Path) -> None:
    assert SCHEMA_VERSION == 1 + len(MIGRATIONS) >= 3
    db = tmp_path / "old.duckdb"
    store = Store(db)
    run_id = evaluate(store, store.save_dataset(Dataset("d", [Datum("a", "m", "q", "x", ("x",))])), ["exact_match"])
    assert store.get_run(run_id)["kind"] == "stored"
    store.close()
    _as_version_one(db)
    other_process_view = Store(db, read_only=True)  # a read-only program never migrates: it reads what is there
    assert other_process_view.get_run(run_id)["kind"] is None
    with duckdb.connect(str(db), read_only=True) as con:  # nothing written by the read-only open
        assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("1",)


def test_runs_resume_by_their_kind_and_older_runs_by_their_records(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_csv(tmp_path / "outputs.csv", 200)
    db = tmp_path / "kinds.duckdb"
    store = Store(db)
    monkeypatch.setattr("textgen_core.streaming.run.ROWS_PER_WRITE", 80)

    def stop(progress: Progress) -> None:
        if progress.done >= 100:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        stream_file(store, path, ["bleu"], chunk_rows=40, workers=1, progress=stop)
    assert store.get_run(1)["kind"] == "streamed"
    store.close()
    _as_version_one(db)  # as if written before kinds were kept: the chunk record tells what it is
    assert Store(db, read_only=True).get_run(1)["kind"] is None
    done = subprocess.run([sys.executable, "-m", "textgen_core.cli.main", "--db", str(db), "resume", "1",
                           "--workers", "1"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)  # a new program: it migrates
    assert done.returncode == 0 and "finished" in done.stdout, done.stderr
    migrated = Store(db, read_only=True)
    assert migrated.get_run(1)["status"] == "finished" and len(migrated.scores(1)) == 200
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
        assert {"runner", "kind"} <= {c[0] for c in con.execute("DESCRIBE runs").fetchall()}


def _open_once(db: Path) -> None:
    store = Store(db)
    store.check()
    store.close()


def _schema(db: Path) -> tuple[list[tuple], list[tuple], list[tuple]]:
    """Every column (in order, with type, default and nullability), constraint and sequence of the file."""
    with duckdb.connect(str(db), read_only=True) as con:
        here = "WHERE database_name = current_database() ORDER BY ALL"
        return (con.execute("SELECT table_name, column_index, column_name, data_type, column_default, is_nullable "
                            f"FROM duckdb_columns() {here}").fetchall(),
                con.execute("SELECT table_name, constraint_type, constraint_column_names "
                            f"FROM duckdb_constraints() {here}").fetchall(),
                con.execute(f"SELECT sequence_name FROM duckdb_sequences() {here}").fetchall())


def test_a_new_file_has_the_schema_an_old_file_is_migrated_to(tmp_path: Path) -> None:
    """A new file gets today's tables at once (no migration runs on it): the same columns, in the same order, and
    the same constraints as a file of version 1 brought up by every migration."""
    new, made, old = tmp_path / "new.duckdb", tmp_path / "made.duckdb", tmp_path / "old.duckdb"
    _open_once(new)
    store = Store(made)
    dataset_id = store.save_dataset(Dataset("d", [Datum("a", "m", "q", "x", ("x",))]))
    store.close()
    with duckdb.connect(str(made)) as con:  # as version 1 left it: no later column or table, scores keyed
        for column in ("kind", "runner"):
            con.execute(f"ALTER TABLE runs DROP COLUMN {column}")
        for table in ("votes", "dataset_versions", "run_names"):
            con.execute(f"DROP TABLE {table}")
        con.execute(f"CREATE OR REPLACE TABLE scores ({SCORE_COLUMNS}, PRIMARY KEY (run_id, datum_id, model, score))")
        con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    shutil.copyfile(made, old)  # a file this process has not opened: its first open here migrates it
    assert _schema(old) != _schema(new)
    _open_once(old)  # the first read-write open migrates
    assert _schema(old) == _schema(new)
    with duckdb.connect(str(old), read_only=True) as con:  # and the data migrations ran: the dataset got its version
        assert con.execute("SELECT dataset_id, version FROM dataset_versions").fetchall() == [(dataset_id, 1)]
        assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
