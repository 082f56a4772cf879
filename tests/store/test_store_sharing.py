"""One database file, two programs: per-operation connections, lock waits, unreadable files, safe deletes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from textgen_core.datasets import load_dataset, load_sample
from textgen_core.errors import StoreError
from textgen_core.evaluate import evaluate
from textgen_core.store import Store

HOLD = textwrap.dedent("""
    import sys, threading
    from textgen_core.store import Store
    released = threading.Event()
    def listen():  # a line "release" on stdin ends the hold early
        if sys.stdin.readline().strip() == "release":
            released.set()
    threading.Thread(target=listen, daemon=True).start()
    store = Store(sys.argv[1])
    with store.session():
        store.list_runs()
        print("holding", flush=True)
        released.wait(float(sys.argv[2]))
""")


def _hold(path: Path, seconds: float) -> subprocess.Popen:
    """Another process that keeps the file open for ``seconds``."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path), str(seconds)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "holding"
    return proc


def test_nothing_is_created_until_a_write(db_path: Path) -> None:
    store = Store(db_path)
    assert not db_path.exists()
    with pytest.raises(StoreError, match="no database at"):
        Store(db_path, read_only=True).list_runs()
    assert not db_path.exists()
    assert store.list_runs().empty  # a read on the read-write store creates the schema
    assert db_path.exists()


def test_the_file_is_closed_between_operations(db_path: Path) -> None:
    store = Store(db_path)
    store.save_dataset(load_sample(), "sample")
    # another process can open the file read-write right away: this one holds nothing
    code = "import sys; from textgen_core.store import Store; print(len(Store(sys.argv[1], timeout=0).list_datasets()))"
    out = subprocess.run([sys.executable, "-c", code, str(db_path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1"


def test_a_busy_file_is_waited_for_then_used(db_path: Path) -> None:
    Store(db_path).save_dataset(load_sample(), "sample")
    holder = _hold(db_path, 1.5)
    heard: list[str] = []
    started = time.monotonic()
    frame = Store(db_path, timeout=30, on_wait=heard.append).list_datasets()
    waited = time.monotonic() - started
    holder.wait(timeout=30)
    assert list(frame["name"]) == ["sample"]
    assert 0.5 < waited < 25
    assert len(heard) == 1 and "busy" in heard[0] and "PID" in heard[0]


def test_a_file_that_stays_busy_is_a_clear_error(db_path: Path) -> None:
    Store(db_path).list_runs()
    holder = _hold(db_path, 20)
    try:
        with pytest.raises(StoreError) as caught:
            Store(db_path, timeout=0.5).list_runs()
    finally:
        holder.kill()
        holder.wait()
    message = str(caught.value)
    assert "in use by" in message and f"PID {holder.pid}" in message and "TEXTGEN_EVAL_LOCK_TIMEOUT" in message


@pytest.mark.parametrize("damage", ["truncate", "garbage", "csv"])
def test_an_unreadable_database_file_is_a_clear_error(db_path: Path, damage: str) -> None:
    if damage == "csv":
        db_path.write_text("id,answer\n1,a\n")
    else:
        Store(db_path).save_dataset(load_sample(), "sample")
        data = db_path.read_bytes()
        db_path.write_bytes(data[: len(data) // 3] if damage == "truncate" else data[:4096] + b"\x00junk" * 5000)
        Path(str(db_path) + ".wal").unlink(missing_ok=True)
    from textgen_core.cli.main import main

    with pytest.raises(StoreError, match="not a readable DuckDB file|truncated or corrupt"):
        Store(db_path).list_runs()
    assert main(["--db", str(db_path), "runs"]) == 2


def test_text_filters_match_percent_and_underscore_literally(db_path: Path) -> None:
    payload = b"id,model,answer,reference\nq1,m,100% sure,r\nq2,m,plain a_b,r\nq3,m,nothing here,r\n"
    store = Store(db_path)
    dataset_id = store.save_dataset(load_dataset(payload, file_name="t.csv"))
    run_id = evaluate(store, dataset_id, ["exact_match"], workers=1)
    assert list(store.find_rows(run_id, text="a_b")["datum_id"]) == ["q2"]
    assert list(store.find_rows(run_id, text="%")["datum_id"]) == ["q1"]
    assert list(store.find_rows(run_id, text="_")["datum_id"]) == ["q2"]
    assert store.find_rows(run_id, text="0%s").empty


def test_deleting_a_scoring_dataset_is_refused_and_leaves_no_orphans(db_path: Path) -> None:
    store = Store(db_path)
    dataset_id = store.save_dataset(load_sample(), "sample")
    run_id = store.create_run(dataset_id, ["exact_match"], {}, {}, ["model-a"])  # status 'running'
    store.write_cells(run_id, [("q1", "model-a", "exact_match", "exact_match", 1.0, None, None)])
    for delete in (lambda: store.delete_dataset(dataset_id), lambda: store.delete_run(run_id)):
        with pytest.raises(StoreError, match=f"run {run_id} is still scoring"):
            delete()
    assert len(store.scores(run_id)) == 1  # nothing was deleted
    store.delete_dataset(dataset_id, force=True)
    # the job that was scoring it cannot write orphans or "finish" a run that is gone
    with pytest.raises(StoreError, match="no longer exists"):
        store.write_cells(run_id, [("q2", "model-a", "exact_match", "exact_match", 1.0, None, None)])
    with pytest.raises(StoreError, match="no longer exists"):
        store.set_run_status(run_id, "finished")
    with store.session():
        orphans = store.db.cursor().execute("SELECT count(*) FROM scores WHERE run_id = ?", [run_id]).fetchone()[0]
    assert orphans == 0


def test_a_finished_run_can_be_deleted(db_path: Path) -> None:
    store = Store(db_path)
    dataset_id = store.save_dataset(load_sample(), "sample")
    evaluate(store, dataset_id, ["exact_match"], workers=1)
    store.delete_dataset(dataset_id)
    assert store.list_runs().empty and store.list_datasets().empty


def test_cli_says_it_waits_for_a_busy_file_then_works(db_path: Path) -> None:
    Store(db_path).save_dataset(load_sample(), "sample")
    holder = _hold(db_path, 60)  # held until the CLI says it waits, however long the CLI takes to start
    cli = subprocess.Popen([sys.executable, "-m", "textgen_core.cli.main", "--db", str(db_path), "datasets"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    said = cli.stderr.readline()  # the CLI's first words on stderr: the wait it starts
    holder.stdin.write("release\n")
    holder.stdin.flush()
    holder.wait(timeout=30)
    out, err = cli.communicate(timeout=60)
    assert cli.returncode == 0, said + err
    assert "sample" in out
    assert "is busy" in said and "waiting up to" in said, said


def test_upload_page_refuses_to_delete_a_dataset_being_scored(app_db) -> None:
    from app_helpers import no_exception, page, store

    from textgen_dashboard import data, state

    db = store()
    dataset_id = db.save_dataset(load_sample(), "sample")
    run_id = db.create_run(dataset_id, ["exact_match"], {}, {}, ["model-a"])  # a job elsewhere is scoring it
    data.refresh()
    at = page("views/upload.py").run()
    no_exception(at)
    at.checkbox(key=state.UPLOAD_CONFIRM_DELETE).check().run()
    next(b for b in at.button if b.label == "Delete").click().run()
    no_exception(at)
    assert any(f"run {run_id} is still scoring" in e.value for e in at.error)
    assert db.list_datasets()["name"].tolist() == ["sample"]


def test_dashboard_explains_an_unreadable_database(app_db) -> None:
    from app_helpers import no_exception, page

    app_db.write_bytes(b"DUCK" + b"\x00not a database" * 2000)
    at = page("app.py").run()
    no_exception(at)
    assert at.error and "not a readable DuckDB file" in at.error[0].value


def test_a_deleted_file_is_recreated_with_its_tables(db_path: Path) -> None:
    store = Store(db_path)
    store.save_dataset(load_sample(), "sample")
    db_path.unlink()
    Path(f"{db_path}.wal").unlink(missing_ok=True)
    assert store.list_datasets().empty  # the same process opens a fresh file, schema and all
