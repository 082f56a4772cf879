"""Two programs never score one run: a resume is refused while the run's program lives, and claimed once it died.

Real processes on a real DuckDB file. A run is left 'running' as a killed
program leaves it, recorded as scored by another live process of this machine;
`textgen-eval resume` (run in the test's process) is refused, naming that process, and changes nothing; once
the process is gone (SIGKILL: no chance to mark the run) the resume goes through.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import duckdb

from textgen_core.evaluate import evaluate
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store

def test_a_live_run_is_not_resumed_twice_and_a_dead_ones_run_is(tmp_path: Path, cli_main) -> None:
    db = tmp_path / "claim.duckdb"
    store = Store(db)
    rows = [Datum(f"d{i}", "m", "q", f"answer {i}", (f"answer {i % 3}",)) for i in range(30)]
    run_id = evaluate(store, store.save_dataset(Dataset("claim", rows)), ["exact_match", "token_f1"])
    assert store.get_run(run_id)["status"] == "finished"
    store.close()
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        with duckdb.connect(str(db)) as con:  # the state a program scoring the run leaves in the file
            con.execute("UPDATE runs SET status = 'running', runner = ? WHERE run_id = ?",
                        [f"{socket.gethostname()}:{other.pid}", run_id])
            con.execute("DELETE FROM scores WHERE run_id = ? AND datum_id IN ('d1', 'd2')", [run_id])
        refused = cli_main("--db", db, "resume", run_id)  # the CLI in this process; the other program is real
        assert refused.returncode == 2, refused.stderr
        assert f"PID {other.pid}" in refused.stderr and "Nothing was changed" in refused.stderr
        assert "Traceback" not in refused.stderr
        assert len(Store(db, read_only=True).scores(run_id)) == 56  # nothing scored by the refused resume
        other.send_signal(signal.SIGKILL)
        other.wait(timeout=10)
    finally:
        if other.poll() is None:
            other.kill()
    done = cli_main("--db", db, "resume", run_id)
    assert done.returncode == 0, done.stderr
    run = Store(db, read_only=True).get_run(run_id)
    assert run["status"] == "finished" and len(Store(db, read_only=True).scores(run_id)) == 60


def test_deleting_a_run_waits_for_a_live_program_not_for_a_dead_one(tmp_path: Path) -> None:
    import pytest

    from textgen_core.errors import StoreError

    db = tmp_path / "delete.duckdb"
    store = Store(db)
    dataset_id = store.save_dataset(Dataset("d", [Datum("a", "m", "q", "x", ("x",))]))
    runs = [store.create_run(dataset_id, ["exact_match"], {}, {}, ["m"]) for _ in range(3)]
    store.close()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait(timeout=30)
    try:
        with duckdb.connect(str(db)) as con:
            for run_id, runner in zip(runs, (live.pid, dead.pid, None)):
                con.execute("UPDATE runs SET runner = ? WHERE run_id = ?",
                            [None if runner is None else f"{socket.gethostname()}:{runner}", run_id])
        store = Store(db)
        with pytest.raises(StoreError, match=f"is still scoring .*by PID {live.pid}"):
            store.delete_run(runs[0])
        store.delete_run(runs[1])  # its program is gone: a run like any other
        with pytest.raises(StoreError, match="an unknown program"):  # from before runners were recorded
            store.delete_run(runs[2])
        assert sorted(store.list_runs()["run_id"]) == [runs[0], runs[2]]
    finally:
        live.kill()
