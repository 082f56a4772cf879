"""The votes table: one write path, upserts by (datum, model, score, judge, sample), a read per run, an older file
migrated to hold it, a deleted run takes its votes along, and a read-only older file reads as no votes."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from textgen_core.errors import StoreError
from textgen_core.evaluate import evaluate
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store
from textgen_core.store.votes_sql import VOTE_COLUMNS, vote_step


def _run(store: Store) -> int:
    data = Dataset("d", [Datum("a", "m", "q", "x", ("x",)), Datum("b", "m", "q", "y", ("x",))])
    return evaluate(store, store.save_dataset(data), ["exact_match"])


def test_votes_upsert_and_read_back_per_run_and_score(tmp_path: Path) -> None:
    store = Store(tmp_path / "v.duckdb")
    run_id = _run(store)
    assert store.write_votes(run_id, [("a", "m", "tone", "tone", "j1", 0, 4.0, None),
                                      ("a", "m", "tone", "tone", "j1", 1, None, "reply without a verdict"),
                                      ("a", "m", "tone", "tone", "j2", 0, 2.0, None),
                                      ("a", "m", "other", "other", "j1", 0, 1.0, None)]) == 4
    store.write_votes(run_id, [("a", "m", "tone", "tone", "j1", 1, 5.0, None)])  # judged again: replaced
    votes = store.votes_for_run(run_id, score="tone")
    assert tuple(votes.columns) == VOTE_COLUMNS
    assert list(zip(votes.judge, votes["sample"], votes.value)) == [("j1", 0, 4.0), ("j1", 1, 5.0), ("j2", 0, 2.0)]
    assert votes.reason.isna().all()
    assert len(store.votes_for_run(run_id)) == 4
    assert store.vote_cells(run_id, "j1", 1, scored=True) == {("a", "m", "tone")}
    assert store.vote_cells(run_id, "j2", 1, scored=True) == set()
    assert len(store.scores(run_id)) == 2  # a vote is never a score cell
    store.delete_run(run_id)
    assert store.votes_for_run(run_id).empty
    with pytest.raises(StoreError, match="no longer exists"):  # no orphan vote for a deleted run
        store.write_votes(run_id, [("a", "m", "tone", "tone", "j1", 0, 4.0, None)])


def test_an_older_file_gets_the_table_and_reads_as_no_votes_read_only(tmp_path: Path) -> None:
    db = tmp_path / "old.duckdb"
    store = Store(db)
    run_id = _run(store)
    store.close()
    with duckdb.connect(str(db)) as con:
        con.execute("DROP TABLE votes")
        con.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    old = Store(db, read_only=True).votes_for_run(run_id)
    assert old.empty and tuple(old.columns) == VOTE_COLUMNS
    # the file under a name this process never opened: its first read-write open here migrates it, as a new
    # program's does (a second interpreter cost ~1.5 CPU-s)
    moved = tmp_path / "moved.duckdb"
    shutil.copyfile(db, moved)
    writer = Store(moved)
    writer.write_votes(run_id, [("a", "m", "s", "s", "j1", 0, 1.0, None)])
    writer.close()
    assert len(Store(moved, read_only=True).votes_for_run(run_id)) == 1


def test_a_vote_step_names_member_and_sample() -> None:
    assert vote_step("claims", "judge-b", 2) == "claims | judge judge-b, sample 2"
