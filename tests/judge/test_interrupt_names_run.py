"""Ctrl-C during a judge run names the run to resume (#18.14), and resume needs no endpoint or model again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judge_server import CHAT, JudgeServer
from textgen_core.cli.main import main
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store

ROOT = Path(__file__).resolve().parents[2]


def grade(request: dict) -> dict:
    return {"reason": "same city", "grade": "CORRECT"}


def store_rows(db: Path, n: int = 4) -> None:
    store = Store(db)
    store.save_dataset(Dataset("rows", [Datum(f"d{i}", "m", query=f"Capital {i}?", prediction=f"City {i}.",
                                              references=(f"City {i}.",)) for i in range(n)]))
    store.close()


@pytest.mark.timeout(120)
def test_ctrl_c_names_the_run_id_and_resume_reuses_the_stored_judge(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "c.duckdb"
    store_rows(db)
    with JudgeServer(responder=grade, latency=30.0) as server:
        proc = subprocess.Popen([sys.executable, "-m", "textgen_core.cli.main", "--db", str(db), "run", "rows",
                                 "--metrics", "qa_grade", "--judge-base-url", server.url, "--judge-model", "judge",
                                 "--max-tokens", "300"],
                                cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while server.count(CHAT) == 0 and time.monotonic() < deadline:
                time.sleep(0.05)
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode != 0
        assert "'textgen-eval resume 1' finishes it" in err, err
        server.latency = 0.0
        # resume names neither endpoint nor model: the run stored them (the key is never stored)
        code = main(["--db", str(db), "resume", "1"])
    out = capsys.readouterr().out
    assert code == 0 and "run 1 on dataset 'rows': finished" in out, out
    assert Store(db, read_only=True).get_run(1)["judge"]["max_tokens"] == 300  # the stored settings, kept
