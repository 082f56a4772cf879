"""--dry-run against a rambling local judge (#18.13, #19.9): an upper bound, a time from one probe call,
and --max-tokens honoured.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from judge_server import CHAT, Fault, JudgeServer
from textgen_core.cli.main import main

ROWS = "id,model,query,prediction,reference\n" + "".join(
    f"d{i},m,Capital {i}?,City {i}.,City {i}.\n" for i in range(5))


def dry_run(tmp_path: Path, server: JudgeServer, *flags: str) -> str:
    data = tmp_path / "rows.csv"
    data.write_text(ROWS, encoding="utf-8")
    code = main(["--db", str(tmp_path / "d.duckdb"), "run", str(data), "--metrics", "qa_grade,coherence",
                 "--judge-base-url", server.url, "--judge-model", "judge", "--dry-run", *flags])
    assert code == 0
    return ""


def test_dry_run_prints_the_upper_bound_and_a_probe_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with JudgeServer(latency=0.2) as server:
        dry_run(tmp_path, server, "--max-tokens", "40", "--concurrency", "2", "--price-prompt", "1",
                "--price-completion", "2")
        probes = server.count(CHAT)
    out = capsys.readouterr().out
    calls = int(re.search(r"judge calls: (?:\d+ to )?(\d+) to make", out).group(1))
    completion = int(re.search(r"estimated tokens: \d+ prompt \+ (\d+) completion", out).group(1))
    assert completion <= calls * 40  # --max-tokens is honoured: no reply is estimated longer (was ignored)
    assert f"at most: {calls * 40} completion tokens ({calls} calls x --max-tokens 40), cost" in out, out
    match = re.search(r"time: one probe call took (\d+\.\d) s", out)
    assert match and float(match.group(1)) >= 0.2, out
    assert "on a one-slot server" in out and "if it serves --concurrency 2 at once" in out
    assert probes == 1  # exactly one real call
    assert not (tmp_path / "d.duckdb").exists()  # nothing written


def test_a_failing_probe_is_one_call_and_says_there_is_no_time_estimate(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    with JudgeServer() as server:
        server.script(*[Fault.http(503)] * 5)  # down for longer than any retry schedule
        dry_run(tmp_path, server)
        probes = server.count(CHAT)
    out = capsys.readouterr().out
    assert "time: the probe call failed after" in out and "HTTP 503" in out and "no time estimate" in out, out
    assert probes == 1  # one real call, not one per retry (the retries' backoff is no endpoint's time)


def test_no_probe_for_a_remote_endpoint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with JudgeServer() as server:
        server_url = server.url.replace("127.0.0.1", "127.0.0.1")
        data = tmp_path / "rows.csv"
        data.write_text(ROWS, encoding="utf-8")
        # a remote-looking name for the same server is not probed (time is not the cost there)
        code = main(["--db", str(tmp_path / "d.duckdb"), "run", str(data), "--metrics", "qa_grade",
                     "--judge-base-url", server_url.replace("127.0.0.1", "judge.example.invalid"),
                     "--judge-model", "judge", "--dry-run"])
        assert code == 0 and server.count(CHAT) == 0
    out = capsys.readouterr().out
    assert "at most:" in out and "time:" not in out


def test_no_probe_makes_no_call(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with JudgeServer() as server:
        dry_run(tmp_path, server, "--no-probe")
        assert server.count(CHAT) == 0
    assert "time:" not in capsys.readouterr().out
