"""A stopped streamed run is kept 'interrupted'; resuming it scores only the chunks not stored and gives exactly
the cells and corpus aggregates of a run that was never stopped. A changed file is refused; a bad row found on
resume still leaves nothing stored."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from streamed_files import RESUMED_METRICS as METRICS, same_run, stopped_run, write_csv, write_jsonl
from textgen_core.datasets import load_dataset
from textgen_core.errors import InputError
from textgen_core.evaluate import resume
from textgen_core.progress import Progress
from textgen_core.store import Store
from textgen_core.streaming import stream_file

ROWS = 2000  # rows of the file the CLI streams: 10 chunks of 200, room for a stop between writes (was 5000)
#: The CLI with small chunks, each written alone. After its first write it leaves a mark beside the database and
#: pauses, so the stop lands between two writes however fast the host is (a poller of the file could miss the
#: short gaps between writes on a fast run and stop it after its last one).
RUNNER = """import pathlib, sys, time
import textgen_core.streaming.run as run
run.CHUNK_ROWS, run.ROWS_PER_WRITE = 200, 1
flush = run._Loader.flush
def first_then_pause(loader):
    flush(loader)
    mark = pathlib.Path(sys.argv[sys.argv.index("--db") + 1] + ".written")
    if loader.run_id is not None and not mark.exists():
        mark.touch()
        time.sleep(60)
run._Loader.flush = first_then_pause
from textgen_core.cli.main import main
sys.exit(main())"""


@pytest.mark.timeout(120)
def test_sigterm_mid_run_then_resume_gives_the_uninterrupted_run(tmp_path: Path, cli_main) -> None:
    path = write_csv(tmp_path / "outputs.csv", ROWS)
    db = tmp_path / "runs.duckdb"
    proc = subprocess.Popen([sys.executable, "-c", RUNNER, "--db", str(db), "run", str(path), "--metrics",
                             ",".join(METRICS), "--workers", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, cwd=tmp_path)
    mark, deadline = Path(f"{db}.written"), time.monotonic() + 60
    while not mark.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert mark.exists(), proc.communicate(timeout=60)[1]
    os.killpg(proc.pid, signal.SIGTERM)  # the whole group, as a service manager stops it
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "run 1 is kept as interrupted: 'textgen-eval resume 1' finishes it" in err
    stopped = Store(db, read_only=True)
    assert stopped.get_run(1)["status"] == "interrupted"
    assert 0 < len(stopped.scores(1)) < ROWS * 7 and stopped.list_datasets()["n_rows"].isna().all()
    # in this process (the stopped one was real), without a pool spawned from pytest (each worker imports the
    # package again); a resume on a pool is test_resume_scores_only_the_chunks_not_stored[jsonl]
    again = cli_main("--db", db, "resume", "1", "--workers", "1", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "run 1 on dataset 'outputs': finished" in again.stdout
    whole = Store(tmp_path / "whole.duckdb")
    whole_run = stream_file(whole, path, METRICS, workers=1).run_id
    same_run(Store(db), 1, whole, whole_run)
    assert Store(db).load_dataset(1).rows == whole.load_dataset(1).rows
    assert Store(db).list_datasets()["n_rows"].tolist() == [ROWS]


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_resume_scores_only_the_chunks_not_stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    path = write_csv(tmp_path / "outputs.csv", 400) if kind == "csv" else write_jsonl(tmp_path / "outputs.jsonl", 400)
    store = Store(tmp_path / "s.duckdb")
    run_id = stopped_run(store, path, monkeypatch, after_rows=200)
    assert len(store.finished_blocks(run_id)) == 4  # two writes of two chunks; the chunk after them is lost
    seen: list[Progress] = []
    assert resume(store, run_id, progress=seen.append, workers=2 if kind == "jsonl" else 1) == run_id
    assert seen[-1] == Progress("done", 400, 400, seen[-1].failed, cached=160)
    whole = Store(tmp_path / "whole.duckdb")
    same_run(store, run_id, whole, stream_file(whole, path, METRICS, workers=1).run_id)
    assert store.load_dataset(1).rows == whole.load_dataset(1).rows


@pytest.mark.parametrize("change", ["append", "same-size-edit", "gone"])
def test_a_changed_file_is_refused_and_the_stopped_run_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           change: str) -> None:
    path = write_csv(tmp_path / "outputs.csv", 200)
    store = Store(tmp_path / "s.duckdb")
    run_id = stopped_run(store, path, monkeypatch, after_rows=100)
    cells = store.scores(run_id)
    data = path.read_bytes()
    if change == "append":
        path.write_bytes(data + b"d999,m0,one more,one more,t0\n")
    elif change == "same-size-edit":
        path.write_bytes(data[:-3] + b"XYZ")
    else:
        path.unlink()
    with pytest.raises(InputError) as refused:
        resume(store, run_id, workers=1)
    expected = {"append": "size", "same-size-edit": "content", "gone": "is gone"}
    assert expected[change] in str(refused.value) and "outputs.csv" in str(refused.value)
    assert "nothing was resumed" in str(refused.value)
    assert store.get_run(run_id)["status"] == "interrupted"
    pd.testing.assert_frame_equal(store.scores(run_id), cells)


def test_a_bad_row_found_on_resume_leaves_nothing_stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_csv(tmp_path / "outputs.csv", 300, bad_row=290)
    with pytest.raises(InputError) as whole:
        load_dataset(path)
    store = Store(tmp_path / "s.duckdb")
    run_id = stopped_run(store, path, monkeypatch, after_rows=100)
    assert not store.scores(run_id).empty
    with pytest.raises(InputError) as resumed:
        resume(store, run_id, workers=1)
    assert str(resumed.value) == str(whole.value) and resumed.value.row == 290
    assert store.list_datasets().empty and store.list_runs().empty
    assert store.block_run(run_id) is None and not store.finished_blocks(run_id)  # nor its chunk records
