"""How a run session ends (runs/status.RunSession), the one place every source records a run's status."""

from __future__ import annotations

import pytest

from textgen_core.errors import BudgetReached, StoreBusy, TextgenError
from textgen_core.model import Dataset, Datum
from textgen_core.runs.status import RunSession
from textgen_core.store import Store


@pytest.fixture
def run(db_path) -> tuple[Store, int]:
    store = Store(db_path)
    dataset_id = store.save_dataset(Dataset("d", [Datum("1", "m", prediction="a", references=("a",))]))
    return store, store.runs.create_run(dataset_id, ["exact_match"], {}, {}, ["m"], None, "stored")


def test_a_session_that_ends_normally_is_finished_and_adds_its_time(run):
    store, run_id = run
    with RunSession(store, run_id, already=100.0):
        pass
    got = store.get_run(run_id)
    assert got["status"] == "finished" and got["duration_s"] >= 100.0 and got["error"] is None


def test_a_cancelled_session_says_so(run):
    store, run_id = run
    with RunSession(store, run_id) as session:
        session.end_as("cancelled")
    assert store.get_run(run_id)["status"] == "cancelled"


def test_a_stop_is_interrupted_and_goes_on(run):
    store, run_id = run
    with pytest.raises(KeyboardInterrupt):
        with RunSession(store, run_id):
            raise KeyboardInterrupt
    assert store.get_run(run_id)["status"] == "interrupted"


def test_a_spending_cap_is_interrupted_with_its_message_and_ends_quietly(run):
    store, run_id = run
    with RunSession(store, run_id) as session:
        raise BudgetReached("budget reached: 3 calls of --max-calls 3")
    got = store.get_run(run_id)
    assert session.outcome == "interrupted" and got["status"] == "interrupted" and "max-calls 3" in got["error"]


def test_a_busy_file_is_interrupted_and_says_how_to_resume(run):
    store, run_id = run
    with pytest.raises(StoreBusy, match=f"textgen-eval resume {run_id}"):
        with RunSession(store, run_id):
            raise StoreBusy("the database file is busy")
    assert store.get_run(run_id)["status"] == "interrupted"


def test_an_error_fails_the_run_with_its_reason_and_names_the_run(run):
    store, run_id = run
    with pytest.raises(TextgenError, match=f"run {run_id} failed: ZeroDivisionError: .*resume {run_id}"):
        with RunSession(store, run_id):
            1 / 0
    got = store.get_run(run_id)
    assert got["status"] == "failed" and "division by zero" in got["error"]
    with pytest.raises(TextgenError, match="^the endpoint refused$"):  # the library's own errors pass unchanged
        with RunSession(store, run_id):
            raise TextgenError("the endpoint refused")


def test_a_session_whose_failures_are_not_kept_records_nothing_and_passes_the_error(run):
    store, run_id = run
    store.runs.claim_run(run_id)
    with pytest.raises(ValueError, match="bad row"):
        with RunSession(store, run_id, keeps_failures=False):
            raise ValueError("bad row")
    assert store.get_run(run_id)["status"] == "running"  # the caller deletes the run with its dataset
