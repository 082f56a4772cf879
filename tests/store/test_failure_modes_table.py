"""The failure modes tables: one writer that replaces a run's modes whole; reads; a deleted run takes its modes."""

from __future__ import annotations

import duckdb
import pytest

from textgen_core.errors import StoreError
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store


def _run(store: Store) -> int:
    dataset = store.save_dataset(Dataset("d", [Datum("a", "m", prediction="x", metadata={"topic": "tax"}),
                                               Datum("b", "m", prediction="y")], metadata_columns=("topic",)))
    run = store.create_run(dataset, ["qa_grade"], {}, {}, ["m"])
    store.set_run_status(run, "finished")
    return run


def test_write_replaces_the_runs_modes_and_reads_them_back(tmp_path) -> None:
    store = Store(tmp_path / "f.duckdb")
    run = _run(store)
    store.failures.write_failure_modes(run, "failures/1", {"seed": 0},
                                       [(0, "refund / policy", ["refund", "policy"], 2, None), (-1, "unsorted", [], 1, None)],
                                       [(0, "a", "m", "qa_grade", "qa_grade", 0, "invents a refund"),
                                        (0, "b", "m", "qa_grade", "qa_grade", 0, "a refund again"),
                                        (-1, "b", "m", "faithfulness", "faithfulness", 2, "odd")])
    modes = store.failures.failure_modes(run)
    assert modes["mode"].tolist() == [-1, 0] and list(modes.loc[1, "words"]) == ["refund", "policy"]
    assert modes["params"].iloc[0] == '{"seed": 0}' and set(modes["method"]) == {"failures/1"}
    assert len(store.failures.failure_members(run)) == 3
    assert store.failures.failure_members(run, 0)["datum_id"].tolist() == ["a", "b"]
    store.failures.write_failure_modes(run, "failures/1", {"seed": 1}, [(0, "other", [], 1, None)],
                                       [(0, "a", "m", "qa_grade", "qa_grade", 0, "t")])
    assert store.failures.failure_modes(run)["name"].tolist() == ["other"]
    assert len(store.failures.failure_members(run)) == 1


def test_slices_of_a_metadata_column(tmp_path) -> None:
    store = Store(tmp_path / "f.duckdb")
    run = _run(store)
    slices = store.failures.datum_slices(run, "topic")
    assert slices[["datum_id", "model"]].values.tolist() == [["a", "m"], ["b", "m"]]
    assert slices["slice"].iloc[0] == "tax" and slices["slice"].isna().iloc[1]  # a missing value stays missing


def test_a_deleted_run_takes_its_modes_and_refuses_new_ones(tmp_path) -> None:
    store = Store(tmp_path / "f.duckdb")
    run = _run(store)
    store.failures.write_failure_modes(run, "failures/1", {}, [(0, "n", [], 1, None)],
                                       [(0, "a", "m", "qa_grade", "qa_grade", 0, "t")])
    store.delete_run(run)
    assert store.failures.failure_modes(run).empty and store.failures.failure_members(run).empty
    with pytest.raises(StoreError, match="no longer exists"):
        store.failures.write_failure_modes(run, "failures/1", {}, [], [])


def test_a_file_from_before_the_tables_reads_as_no_modes(tmp_path) -> None:
    path = tmp_path / "old.duckdb"
    Store(path).check()
    con = duckdb.connect(str(path))
    con.execute("DROP TABLE failure_members")
    con.execute("DROP TABLE failure_modes")
    con.close()
    old = Store(path, read_only=True)
    assert old.failures.failure_modes(1).empty and old.failures.failure_members(1).empty
