"""The alignment tables: a split stored and read back by its key, alignments recorded, a deleted run's rows gone,
and a file from before the tables read as having none."""

from __future__ import annotations

import duckdb

from textgen_core.model import Dataset, Datum
from textgen_core.store import Store


def test_splits_and_alignments_round_trip_and_go_with_their_run(tmp_path):
    store = Store(tmp_path / "a.duckdb")
    dataset = store.save_dataset(Dataset("d", [Datum("a", "m", "q", "p")]), "d")
    run = store.create_run(dataset, ["exact_match"], {"exact_match": {}}, {"exact_match": "sig"}, ["m"])
    store.set_run_status(run, "finished")
    cells = {"train": [["a", "m"]], "held_out": [["b", "m"]]}
    store.save_split(run, "s", run, 3, 0.3, cells)
    assert store.split(run, "s", run, 3, 0.3) == cells
    assert store.split(run, "s", run, 4, 0.3) is None and store.split(run, "s", run, 3, 0.5) is None
    store.save_split(run, "s", run, 3, 0.3, {"train": [], "held_out": [["a", "m"]]})  # replaced, one row
    assert store.split(run, "s", run, 3, 0.3)["held_out"] == [["a", "m"]]
    first = store.record_alignment(run, "s", run, 3, 0.3, "s", None, {"accepted": None})
    second = store.record_alignment(run, "s", run, 3, 0.3, "s", 2, {"accepted": "few-shot", "version": 2})
    found = store.alignments(run)
    assert found["alignment_id"].tolist() == [second, first] and found["accepted_version"].iloc[0] == 2
    store.delete_run(run)
    assert store.alignments().empty and store.split(run, "s", run, 3, 0.3) is None


def test_a_file_without_the_tables_reads_as_none(tmp_path):
    path = tmp_path / "old.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
    store = Store(path, read_only=True)
    assert store.split(1, "s", 1, 0, 0.3) is None and store.alignments().empty
