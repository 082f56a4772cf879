"""Smaller hostile cases of issue 19 point 9: a killed run whose PID another program now has, two uploads at
once, score() given a database path, rows as dicts with mixed keys, and a file of 10,000 models."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from pathlib import Path

import duckdb
import pytest

from textgen_core.api import score
from textgen_core.errors import InputError
from textgen_core.evaluate import evaluate
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store



def _start_time(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]


def test_a_run_whose_pid_another_program_now_has_is_resumed_and_the_cli_force_deletes(tmp_path: Path,
                                                                                      cli_main) -> None:
    db = tmp_path / "pid.duckdb"
    store = Store(db)
    rows = [Datum(f"d{i}", "m", "q", f"answer {i}", (f"answer {i % 3}",)) for i in range(20)]
    dataset_id = store.save_dataset(Dataset("pid", rows))
    first, second = (evaluate(store, dataset_id, ["exact_match"]) for _ in range(2))
    store.close()
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        host, started = socket.gethostname(), int(_start_time(other.pid))
        with duckdb.connect(str(db)) as con:  # run 1: the dead runner had this PID, but started earlier
            con.execute("UPDATE runs SET status = 'running', runner = ? WHERE run_id = ?",
                        [f"{host}:{other.pid}:{started - 500}", first])
            con.execute("UPDATE runs SET status = 'running', runner = ? WHERE run_id = ?",  # run 2: as recorded
                        [f"{host}:{other.pid}", second])                               # before start times
        done = cli_main("--db", db, "resume", first)  # the other program is the one holding the PID
        assert done.returncode == 0 and "finished" in done.stdout, done.stderr
        refused = cli_main("--db", db, "delete-run", second)
        assert refused.returncode == 2 and f"PID {other.pid}" in refused.stderr, refused.stderr
        assert f"'textgen-eval delete-run {second} --force'" in refused.stderr
        forced = cli_main("--db", db, "delete-run", second, "--force")
        assert forced.returncode == 0 and f"deleted run {second}" in forced.stdout, forced.stderr
    finally:
        other.kill()
        other.wait(timeout=10)
    assert Store(db, read_only=True).list_runs()["run_id"].tolist() == [first]


def test_two_uploads_at_once_keep_their_own_temporary_files() -> None:
    from textgen_dashboard import upload_stream

    payloads = [(f"id,model,prediction,reference\n" + "".join(f"d{i},m{k},p {i},r {i}\n" for i in range(20_000))
                 ).encode() for k in range(2)]
    paths: list[Path] = []
    errors: list[BaseException] = []

    def upload(payload: bytes) -> None:
        try:
            for _ in range(5):  # each session previews, checks and saves: the file is read several times
                path = upload_stream.spill("big.jsonl", payload)
                assert path.read_bytes() == payload
                paths.append(path)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=upload, args=(p,)) for p in payloads + payloads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    assert len(set(paths)) == 2 and all(p.exists() for p in paths)
    assert not list(paths[0].parent.glob("*.part"))


def test_score_takes_a_database_path(tmp_path: Path) -> None:
    rows = [{"id": "a", "prediction": "x y", "reference": "x y"}, {"id": "b", "prediction": "x", "reference": "z"}]
    frame = score(rows, ["exact_match"], store=str(tmp_path / "api.duckdb"))
    assert frame["exact_match"].tolist() == [1.0, 0.0]
    stored = Store(tmp_path / "api.duckdb", read_only=True)
    assert stored.get_run(frame.attrs["run_id"])["status"] == "finished"


def test_dicts_with_mixed_keys_are_named_never_a_silent_nan() -> None:
    rows = [{"id": "a", "prediction": "x y", "reference": "x y"},
            {"id": "b", "response": "x z", "reference": "x z"},  # the prediction under another key
            {"id": "c", "prediction": "q", "reference": "q"}]
    with pytest.raises(InputError) as refused:
        score(rows, ["exact_match"])
    assert refused.value.row == 2 and refused.value.column == "prediction"
    assert "response" in str(refused.value)
    # a value given as None is missing on purpose: the cell says why it is unscored
    rows[1] = {"id": "b", "prediction": None, "reference": "x z"}
    cells = score(rows, ["exact_match"], long=True)
    assert cells.loc[cells["datum_id"] == "b", "reason"].item() == "no prediction"


def test_ten_thousand_models_print_a_bounded_summary(tmp_path: Path, cli_main) -> None:
    path = tmp_path / "many.csv"
    path.write_text("id,model,prediction,reference\n"
                    + "".join(f"d{i % 2},model{i // 2:05d},answer {i % 7},answer {i % 5}\n" for i in range(20_000)))
    run = cli_main("--db", tmp_path / "many.duckdb", "run", path, "--metrics", "exact_match", "--workers", "1",
                   cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "10000 models: the summary shows the 20 best by mean exact_match" in run.stdout
    assert len(run.stdout) < 20_000 and run.stdout.count("model0") <= 20
