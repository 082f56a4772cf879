"""A stop signal never cuts a database write in half: it is held until the COMMIT, then raised.

Real processes and real signals: a child process writes many cells while a
thread of its own sends it SIGTERM or SIGINT at several moments during the write.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CELLS = 300_000
DELAYS = ("0.05", "0.2", "0.5")  # seconds from the write's start to the signal

_CHILD = textwrap.dedent("""
    import json, os, signal, sys, threading, time
    from textgen_core import stops
    from textgen_core.store import Store
    from textgen_core.model import Dataset, Datum

    folder, signum, cells = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    reports = []
    for trial, delay in enumerate(map(float, sys.argv[4:])):  # one new file per trial
        store = Store(os.path.join(folder, f"t{trial}.duckdb"))
        dataset_id = store.save_dataset(Dataset("d", [Datum("a", "m", "q", "p", ("r",))]), "d")
        run_id = store.create_run(dataset_id, ["exact_match"], {}, {}, ["m"])
        records = [(f"d{i}", "m", "exact_match", "exact_match", 1.0, None, None) for i in range(cells)]
        previous = stops.install()
        threading.Timer(delay, lambda: os.kill(os.getpid(), signum)).start()
        outcome = "finished"
        try:
            store.write_cells(run_id, records)
            time.sleep(2)  # a signal after the write lands here, as a plain stop
        except stops.Terminated:
            outcome = "Terminated"
        except KeyboardInterrupt:
            outcome = "KeyboardInterrupt"
        except BaseException as exc:
            outcome = f"{type(exc).__name__}: {exc}"
        stops.restore(previous)
        counts = store.score_counts(run_id)  # cells stored, counted by DuckDB (not 300,000 rows read into pandas)
        reports.append({"delay": delay, "outcome": outcome,
                        "stored": int(counts["n_scored"].sum() + counts["n_unscored"].sum())})
    print(json.dumps(reports))
""")


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("signum", "expected"), [(15, "Terminated"), (2, "KeyboardInterrupt")], ids=["TERM", "INT"])
def test_a_stop_during_a_write_waits_for_its_commit(tmp_path: Path, signum: int, expected: str) -> None:
    # before, inside and after the insert, depending on speed: three trials in one program (one file each), so
    # the program's imports are paid once per signal, not once per trial; each trial installs the handlers anew
    child = subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path), str(signum), str(CELLS), *DELAYS],
                           capture_output=True, text=True, timeout=100)
    assert child.returncode == 0, child.stderr
    assert "Traceback" not in child.stderr
    reports = json.loads(child.stdout)
    assert [r["delay"] for r in reports] == [float(d) for d in DELAYS]
    for report in reports:
        assert report["outcome"] == expected, (report, child.stderr)  # never a DuckDB error
        assert report["stored"] in (0, CELLS), report  # all or nothing, never part
