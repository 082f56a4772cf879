"""Paired label sampling: whole datums at random, both models' cells together, never a datum split."""

from __future__ import annotations

import pytest

from textgen_core.compare.labels import select_cells
from textgen_core.datasets import load_dataset
from textgen_core.errors import ParameterError
from textgen_core.store import Store


@pytest.fixture
def run(tmp_path):
    db = Store(tmp_path / "pairs.duckdb")
    rows = b"id,model,answer\n" + b"".join(f"d{i},{m},x\n".encode() for i in range(20) for m in ("a", "b"))
    rows += b"solo,a,x\n"
    dataset_id = db.save_dataset(load_dataset(rows, file_name="p.csv", name="p"))
    run_id = db.create_run(dataset_id, ["grade"], {}, {}, ["a", "b"])
    cells = [(f"d{i}", m, "grade", "grade", float((i + (m == "b")) % 5 + 1), None, None)
             for i in range(20) for m in ("a", "b")]
    db.write_cells(run_id, cells + [("solo", "a", "grade", "grade", 3.0, None, None)])
    return db, run_id


def test_pairs_take_whole_datums_with_every_models_cell(run):
    db, run_id = run
    queue = select_cells(db, run_id, "grade", "pairs", 10)
    assert len(queue) == 10
    per_datum = queue.groupby("datum_id")["model"].apply(sorted)
    assert all(models == ["a", "b"] for models in per_datum) and len(per_datum) == 5
    assert "solo" not in set(queue["datum_id"])  # a datum of one model cannot be paired
    # the two cells of a datum follow each other in the queue, so any prefix of pairs stays paired
    assert all(queue["datum_id"].iloc[i] == queue["datum_id"].iloc[i + 1] for i in range(0, 10, 2))
    assert queue["probability"].unique().tolist() == [5 / 20]
    assert queue.equals(select_cells(db, run_id, "grade", "pairs", 10))  # repeatable


def test_an_odd_count_rounds_up_to_whole_pairs_and_labelled_cells_are_skipped(run):
    db, run_id = run
    queue = select_cells(db, run_id, "grade", "pairs", 3)
    assert len(queue) == 4
    first = queue.iloc[0]
    db.write_labels(run_id, [(first["datum_id"], first["model"], "grade", "ana", 3.0, None, "pairs", 0.1)])
    left = select_cells(db, run_id, "grade", "pairs", 3, annotator="ana")
    assert (first["datum_id"], first["model"]) not in set(zip(left["datum_id"], left["model"]))
    with pytest.raises(ParameterError, match="pairs"):
        select_cells(db, run_id, "grade", "pair", 3)
