"""A run whose every cell is unscored ends with a non-zero exit (#19.5), through the real CLI entry point."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge_server import Fault, JudgeServer
from textgen_core.cli.main import main

ROWS = "id,model,query,prediction,reference\n" + "".join(
    f"d{i},m,Capital {i}?,City {i}.,City {i}.\n" for i in range(3))


@pytest.mark.parametrize("how", ["timeouts", "invalid", "failed-batch", "cancelled-batch"])
def test_a_run_that_scored_nothing_exits_non_zero(tmp_path: Path, how: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "rows.csv"
    data.write_text(ROWS, encoding="utf-8")
    responder = (lambda r: "no JSON here") if how == "invalid" else (lambda r: {"reason": "x", "grade": "CORRECT"})
    with JudgeServer(responder=responder, latency=1.0 if how == "timeouts" else 0.0) as server:
        server.batches.outcomes.extend([how.removesuffix("-batch")] * 10)
        flags = ["--batch", "--batch-poll", "0.02", "--batch-settle", "0.1"] if how.endswith("-batch") else []
        timeout = "0.1" if how == "timeouts" else "0.2"  # the server never answers in time: the shorter, the sooner
        code = main(["--db", str(tmp_path / "t.duckdb"), "run", str(data), "--metrics", "qa_grade",
                     "--judge-base-url", server.url, "--judge-model", "judge", "--timeout", timeout, "--retries", "1",
                     "--backoff", "0.01", *flags])
    err = capsys.readouterr().err
    assert code != 0 and "scored nothing: all 3 cells are unscored" in err, (code, err)


def test_a_run_with_one_scored_cell_still_exits_zero(tmp_path: Path) -> None:
    data = tmp_path / "rows.csv"
    data.write_text(ROWS, encoding="utf-8")
    with JudgeServer(responder=lambda r: {"reason": "x", "grade": "CORRECT"}) as server:
        server.script(*[Fault.http(400, "bad request")] * 2)  # two cells fail for good, one is scored
        code = main(["--db", str(tmp_path / "t.duckdb"), "run", str(data), "--metrics", "qa_grade",
                     "--judge-base-url", server.url, "--judge-model", "judge", "--concurrency", "1"])
    assert code == 0


def test_batch_mode_against_nothing_listening_exits_non_zero(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    data = tmp_path / "rows.csv"
    data.write_text(ROWS, encoding="utf-8")
    with socket.socket() as sock:  # a port nobody listens on once it is closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code = main(["--db", str(tmp_path / "t.duckdb"), "run", str(data), "--metrics", "qa_grade", "--judge-base-url",
                 f"http://127.0.0.1:{port}/v1", "--judge-model", "judge", "--batch", "--batch-poll", "0.02", "--batch-settle", "0.1",
                 "--backoff", "0.01"])
    err = capsys.readouterr().err
    assert code != 0 and "unreachable" in err, (code, err)
