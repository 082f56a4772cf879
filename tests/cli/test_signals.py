"""Signals on real processes: SIGTERM stops a run like Ctrl-C (interrupted, resumable), and stopping
`textgen-eval dashboard` stops its Streamlit server (no orphan keeps serving or holding the file)."""

from __future__ import annotations

import os
import signal
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from local_servers import free_port, streamlit_healthy
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store

CLI = [sys.executable, "-m", "textgen_core.cli.main"]
ROWS = 5_000  # 5 chunks of 1,000 (at least POOL_THRESHOLD, so the pool case has a pool): a stop lands mid-run; the resume scores the rest (was 20,000)
#: Scored by WER: ~0.2 CPU-s a chunk here, as long as METEOR's ~0.26 once WordNet is loaded (so the stop still
#: lands with chunks to go), without METEOR's start in every scoring process (nltk's import and WordNet, ~3.4 CPU-s
#: in the CLI, in each pool worker and in the resume).
METRIC = "wer"


def _big_dataset() -> Dataset:
    words = "the quick brown fox jumps over the lazy dog while seven small cats watch from a sunny wall".split()
    rows = []
    for i in range(ROWS):
        text = " ".join(words[(i + k) % len(words)] for k in range(40))
        rows.append(Datum(f"d{i}", "m", "q", text, (text[::-1], text)))
    return Dataset("big", rows)


def _wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _scored(db: Path, run_id: int) -> int:
    return len(Store(db, read_only=True).scores(run_id))


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("workers", "to_group"), [(1, False), (2, True)], ids=["in-process", "pool-process-group"])
def test_sigterm_marks_the_run_interrupted_and_resume_finishes_it(db_path: Path, workers: int, to_group: bool,
                                                                  cli_main) -> None:
    """With a process pool, SIGTERM to the whole group (as a service manager sends it) reaches the workers too."""
    Store(db_path).save_dataset(_big_dataset(), "big")
    proc = subprocess.Popen([*CLI, "--db", str(db_path), "run", "big", "--metrics", METRIC,
                             "--workers", str(workers)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    lines: list[str] = []
    first_cells = threading.Event()

    def read_stderr() -> None:
        for line in proc.stderr:  # the progress lines: the first comes once the first chunk's cells are stored
            lines.append(line)
            found = re.match(r"lexical: (\d+)/", line)
            if found and int(found.group(1)) > 0:
                first_cells.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        # the run says when its first cells are stored (reading the file meanwhile would hold up its writes)
        assert first_cells.wait(120), "".join(lines) or "timed out waiting for the first cells"
        if to_group:
            os.killpg(proc.pid, signal.SIGTERM)
        else:
            proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
        reader.join(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = "".join(lines)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "interrupted" in err and "resume" in err and "Traceback" not in err
    run = Store(db_path, read_only=True).get_run(1)
    assert run["status"] == "interrupted"
    kept = _scored(db_path, 1)
    assert 0 < kept < ROWS  # finished cells are kept, the rest is left to resume
    if to_group:
        return  # resuming is the same either way; once is enough
    # in this process (the stopped run was the real one), without a pool: spawned workers would each import the
    # package again; the pool's own stop is the other case's point
    done = cli_main("--db", db_path, "resume", "1", "--workers", "1")
    assert done.returncode == 0, done.stderr
    assert Store(db_path, read_only=True).get_run(1)["status"] == "finished"
    assert _scored(db_path, 1) == ROWS


def _servers_on(port: int) -> list[int]:
    """PIDs of processes whose command line serves Streamlit on ``port``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"streamlit" in b" ".join(argv) and str(port).encode() in argv:
            found.append(int(entry.name))
    return found


@pytest.mark.timeout(120)
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_stopping_the_dashboard_command_stops_its_server(tmp_path: Path, stop: int) -> None:
    port = free_port()
    db = tmp_path / "dash.duckdb"
    proc = subprocess.Popen([*CLI, "--db", str(db), "dashboard", "--port", str(port)], cwd=tmp_path,
                            env=dict(os.environ, STREAMLIT_SERVER_HEADLESS="true"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for(lambda: streamlit_healthy(f"http://127.0.0.1:{port}"), 60, "the dashboard server")
        assert _servers_on(port) == [proc.pid]  # the command became the server: nothing else to orphan
        proc.send_signal(stop)
        proc.wait(timeout=30)
        _wait_for(lambda: not streamlit_healthy(f"http://127.0.0.1:{port}"), 10, "the server to stop answering")
        assert _servers_on(port) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
