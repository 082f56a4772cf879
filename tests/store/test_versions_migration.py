"""A database made by the code before dataset versions and run names (schema 6) keeps opening: the migration
numbers its datasets in their families, hashes them as a new save would, pins its runs, and leaves every row.

The file is rebuilt from tests/store/data/schema6/, which DuckDB's EXPORT DATABASE wrote from a file that
commit 9358415 (main before this change) made: two runs of `textgen-eval run FILE --name pairs`, the second on an
edited file, which that code stored as an unrelated dataset 'pairs (2)'.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from textgen_core.catalog import store_version
from textgen_core.errors import StoreError
from textgen_core.store import Store
from textgen_core.store.schema import SCHEMA_VERSION

FIXTURE = Path(__file__).parent / "data" / "schema6"


def old_file(tmp_path: Path) -> Path:
    """The schema-6 database, rebuilt from its export (the export's absolute paths pointed at its first home)."""
    folder = tmp_path / "schema6"
    shutil.copytree(FIXTURE, folder)
    db = tmp_path / "old.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute((folder / "schema.sql").read_text())
        for line in (folder / "load.sql").read_text().splitlines():
            if line.strip():
                con.execute(line.replace("/tmp/history/fx/schema6/", f"{folder}/"))
        assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("6",)
    return db


def test_an_old_file_read_only_shows_versions_without_changing(tmp_path: Path) -> None:
    db = old_file(tmp_path)
    reader = Store(db, read_only=True)
    versions = reader.versions.versions()
    assert versions[["name", "family", "version"]].values.tolist() == [["pairs", "pairs", 1],
                                                                       ["pairs (2)", "pairs", 2]]
    assert reader.run_names.run_labels()["name"].isna().all()
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("6",)
        assert not con.execute("SELECT * FROM information_schema.tables WHERE table_name = 'dataset_versions'"
                               ).fetchall()


def test_the_migration_numbers_hashes_and_pins_and_keeps_every_row(tmp_path: Path) -> None:
    db = old_file(tmp_path)
    with duckdb.connect(str(db), read_only=True) as con:
        before = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("data", "scores", "runs")}
    store = Store(db)
    versions = store.versions.versions("pairs")
    assert versions[["dataset_id", "version", "n_runs"]].values.tolist() == [[1, 1, 1], [2, 2, 1]]
    assert versions["content_hash"].str.fullmatch("[0-9a-f]{32}").all()
    assert versions["content_hash"].nunique() == 2
    store.close()  # this process holds the file read-write for a moment after an operation (LINGER)
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
        assert {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in before} == before
    # The same content saved by the new code is recognised as the migrated version: the hash is the same rule.
    first = store.load_dataset(1)
    again = store_version(store, first, "another name")
    assert (again.dataset_id, again.reused, again.family, again.version) == (1, True, "pairs", 1)
    assert store.versions.version_diff(1, 2) == {"added": [], "removed": [], "changed": ["q2", "q3"],
                                                 "models_added": [], "models_removed": []}
    assert store.versions.changed_content(1, 2) == {"q3"}  # q2 changed a prediction only: same question
    # An edited file now becomes version 3 of the same family, and runs of the old file can be named.
    edited = type(first)(first.name, first.rows[:-1], first.source, first.mapping, first.metadata_columns)
    third = store_version(store, edited, "pairs")
    assert (third.family, third.version, third.reused, third.diff["removed"]) == ("pairs", 3, False, [])
    store.run_names.label_run(1, name="baseline", add_tags=["prod"])
    assert store.run_names.run_id("baseline") == 1
    with pytest.raises(StoreError, match="already named 'baseline'"):
        store.run_names.label_run(2, name="baseline")
