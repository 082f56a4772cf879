"""Another program holding the database file (as the dashboard does while it draws a page) never makes a streamed
run lose its work or delete the file: the run waits (saying so on stderr) or stops 'interrupted', and
'textgen-eval resume' then finishes it exactly as an uninterrupted run.

Real processes on a real DuckDB file: a reader process opens the file read-only, holds it for most of each
second and lets go briefly; the CLI streams a file with a one-second lock timeout so it must meet the reader.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from textgen_core.store import Store
from textgen_core.streaming import stream_file
from streamed_files import write_csv

METRICS = "rouge,bleu,wer"
RUNNER = ("import sys\nimport textgen_core.streaming.run as run\nrun.CHUNK_ROWS, run.ROWS_PER_WRITE = 200, 1\n"
          "from textgen_core.cli.main import main\nsys.exit(main())")
#: Holds the file read-only 1.5 s at a time with 0.3 s gaps (once ``table`` has rows, if given); writes any error
#: it meets, such as the file deleted or replaced under it.
READER = """
import os, sys, time, duckdb
db, stop, log, table = sys.argv[1:5]
while not os.path.exists(db) and not os.path.exists(stop):
    time.sleep(0.01)
inode = None
while not os.path.exists(stop):
    try:
        con = duckdb.connect(db, read_only=True)
    except duckdb.Error as exc:
        if "lock" in str(exc).lower():
            time.sleep(0.02)
            continue
        open(log, "a").write(f"error {exc}\\n")
        break
    try:
        if table and not con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]:  # hold it from then on
            con.close()
            time.sleep(0.02)
            continue
        inode = inode or os.stat(db).st_ino
        if not os.path.exists(db) or os.stat(db).st_ino != inode:
            open(log, "a").write("error the database file was replaced or deleted\\n")
        time.sleep(1.5)
    except duckdb.Error as exc:
        if "does not exist" in str(exc):  # the schema is not written yet
            con.close()
            time.sleep(0.02)
            continue
        open(log, "a").write(f"error {exc}\\n")
    finally:
        con.close()
    time.sleep(0.3)
open(log, "a").write("done\\n")
"""


@pytest.mark.timeout(240)
def test_a_reader_holding_the_file_never_costs_the_run_or_the_file(tmp_path: Path, cli_main) -> None:
    path = write_csv(tmp_path / "outputs.csv", 3000)
    db, stop, log = tmp_path / "busy.duckdb", tmp_path / "stop", tmp_path / "reader.log"
    reader = subprocess.Popen([sys.executable, "-c", READER, str(db), str(stop), str(log), "scores"])
    try:
        env = dict(os.environ, TEXTGEN_EVAL_LOCK_TIMEOUT="1")
        run = subprocess.run([sys.executable, "-c", RUNNER, "--db", str(db), "run", str(path), "--metrics", METRICS,
                              "--workers", "1"], capture_output=True, text=True, timeout=180, cwd=tmp_path, env=env)
    finally:
        stop.touch()
        reader.wait(timeout=30)
    assert log.read_text() == "done\n", (log.read_text(), run.stderr)  # the reader never lost its file
    assert "Traceback" not in run.stderr, run.stderr
    assert db.exists()
    if run.returncode == 0:
        assert "run 1 on dataset 'outputs': finished" in run.stdout
    else:  # stopped by the busy file: kept for a resume, and said how
        assert run.returncode == 2, run.stderr
        assert "busy" in run.stderr and "'textgen-eval resume 1' finishes it" in run.stderr, run.stderr
        # the reader is gone: this process resumes (one process, as the stopped run scored)
        again = cli_main("--db", db, "resume", "1", "--workers", "1", cwd=tmp_path)
        assert again.returncode == 0, again.stderr
    whole = Store(tmp_path / "whole.duckdb")
    whole_run = stream_file(whole, path, METRICS.split(","), workers=1).run_id
    stored = Store(db, read_only=True)
    assert stored.get_run(1)["status"] == "finished"
    pd.testing.assert_frame_equal(stored.scores(1), whole.scores(whole_run), check_exact=True)
    pd.testing.assert_frame_equal(stored.aggregates(1), whole.aggregates(whole_run), check_exact=True)


@pytest.mark.timeout(120)
def test_a_refused_command_leaves_a_file_another_program_holds(tmp_path: Path) -> None:
    """A command that created the file and stored nothing removes it only when no other program holds it."""
    db, stop, log = tmp_path / "held.duckdb", tmp_path / "stop", tmp_path / "reader.log"
    bad = tmp_path / "bad.csv"
    bad.write_text("id,model,prediction,reference\n" + "".join(f"d{i},m,p,r\n" for i in range(3000))
                   + "d1,m,p,r\n")  # a duplicate pair at the end: the streamed run stores nothing
    reader = subprocess.Popen([sys.executable, "-c", READER, str(db), str(stop), str(log), ""])
    try:
        env = dict(os.environ, TEXTGEN_EVAL_LOCK_TIMEOUT="5")
        run = subprocess.run([sys.executable, "-c", RUNNER, "--db", str(db), "run", str(bad), "--metrics", "bleu",
                              "--workers", "1"], capture_output=True, text=True, timeout=100, cwd=tmp_path, env=env)
        time.sleep(0.5)
    finally:
        stop.touch()
        reader.wait(timeout=30)
    assert run.returncode == 2 and "appears in rows 2 and 3001" in run.stderr, run.stderr
    assert log.read_text() == "done\n", log.read_text()  # the file stayed while the reader had it
    assert db.exists() and Store(db, read_only=True).list_datasets().empty
