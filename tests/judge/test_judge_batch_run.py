"""Batch mode end to end: the same numbers as direct calls, no direct chat call, resumable after kill -9.

Real openai client, real HTTP to the loopback judge (which implements the Batch API), real DuckDB file,
and for kill -9 a real CLI process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from judge_server import CHAT, JudgeServer
from scripted_judge import ScriptedJudge, suite_rows, write_suite_jsonl
from textgen_core.errors import TextgenError
from textgen_core.evaluate import evaluate
from textgen_core.judge.settings import JudgeSettings
from textgen_core.model import Dataset
from textgen_core.store import Store

ROOT = Path(__file__).resolve().parents[2]
METRICS = ["faithfulness", "answer_relevance", "coherence", "bias", "context_precision"]
ROWS = 5


def settings(server: JudgeServer, **overrides: Any) -> JudgeSettings:
    values = {"concurrency": 8, "timeout": 5.0, "retries": 2, "price_prompt_per_million": 2.0,
              "price_completion_per_million": 8.0, "batch_poll": 0.02, "batch_settle": 0.1, **overrides}
    return JudgeSettings(base_url=server.url, model="judge", api_key="sk-batch", **values)


def scores(store: Store, run_id: int) -> dict[tuple[str, str, str], tuple[float | None, str | None]]:
    frame = store.scores(run_id)
    return {(r.datum_id, r.model, r.score): (None if r.value != r.value else r.value,
                                             r.reason if isinstance(r.reason, str) else None)
            for r in frame.itertuples()}


@pytest.fixture(scope="module")
def direct(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    with JudgeServer(responder=ScriptedJudge()) as server:
        store = Store(tmp_path_factory.mktemp("direct") / "direct.duckdb")
        run_id = evaluate(store, store.save_dataset(Dataset("d", suite_rows(ROWS))), METRICS, judge=settings(server))
        run = store.get_run(run_id)
        return {"scores": scores(store, run_id), "run": run, "requests": server.count(CHAT)}


def batch_run(db: Path, server: JudgeServer, **overrides: Any) -> tuple[Store, int]:
    store = Store(db)
    dataset_id = store.save_dataset(Dataset("d", suite_rows(ROWS)))
    return store, evaluate(store, dataset_id, METRICS, judge=settings(server, batch=True, **overrides))


def test_batch_mode_gives_the_direct_numbers_without_direct_calls(db_path: Path, direct: dict) -> None:
    with JudgeServer(responder=ScriptedJudge()) as server:
        server.batches.delay = 0.05
        store, run_id = batch_run(db_path, server)
        run = store.get_run(run_id)
        assert run["status"] == "finished"
        assert scores(store, run_id) == direct["scores"]
        assert all(value is not None for value, _ in direct["scores"].values())
        assert server.count(CHAT) == 0  # every chat request went through a batch
        # Extractions in the first batch, verdicts on extracted items in the second: two rounds.
        assert len(server.batches.created) == 2
        lines = [len(server.batches.lines(b)) for b in server.batches.created]
        assert sum(lines) == direct["requests"] == run["judge_calls"]
        assert run["cost"] == pytest.approx(direct["run"]["cost"] * 0.5, rel=1e-9)
        assert run["prompt_tokens"] == direct["run"]["prompt_tokens"]
        logged = store.judge_batches(run_id)
        assert [row["batch_id"] for row in logged] == server.batches.created
        assert {row["status"] for row in logged} == {"collected"}  # read, and its files deleted
        assert server.batches.files == {}  # no input, output or error file stays at the provider


def test_failed_and_expired_requests_are_resubmitted_alone(db_path: Path, direct: dict) -> None:
    seen: dict[str, int] = {}
    failed: set[str] = set()

    def line_error(custom_id: str, body: dict) -> int | None:  # every third request fails the first time
        seen[custom_id] = seen.get(custom_id, 0) + 1
        if seen[custom_id] == 1 and len(seen) % 3 == 0:
            failed.add(custom_id)
            return 500
        return None

    with JudgeServer(responder=ScriptedJudge()) as server:
        server.batches.delay = 0.05
        server.batches.line_error = line_error
        server.batches.outcomes.append("expired")  # the first batch expires with half its requests done
        store, run_id = batch_run(db_path, server)
        assert store.get_run(run_id)["status"] == "finished"
        assert scores(store, run_id) == direct["scores"]
        assert server.count(CHAT) == 0
        batches = [[line["custom_id"] for line in server.batches.lines(b)] for b in server.batches.created]
        first = batches[0]
        expired = set(first[(len(first) + 1) // 2:])
        resent = set(first) & {cid for later in batches[1:] for cid in later}
        # Exactly the requests of the first batch that expired or failed went out again, each once.
        assert expired and failed & set(first)
        assert resent == expired | (failed & set(first))
        sent = [cid for lines in batches for cid in lines]
        assert len(set(sent)) == direct["requests"]
        assert len(sent) - len(set(sent)) == len(expired) + len(failed)  # in any round, only failures go again


def test_a_batch_that_keeps_failing_unscores_with_the_reason(db_path: Path) -> None:
    with JudgeServer(responder=ScriptedJudge()) as server:
        server.batches.delay = 0.02
        server.batches.outcomes.extend(["failed"] * 10)
        store, run_id = batch_run(db_path, server, retries=1)
        assert store.get_run(run_id)["status"] == "finished"
        reasons = {reason for value, reason in scores(store, run_id).values() if value is None}
        assert reasons and all("scripted validation failure" in r and "gave up after 2" in r for r in reasons)
        assert len(server.batches.created) == 2


def _args(server: JudgeServer, *args: str) -> list[str]:
    return [*args, "--judge-base-url", server.url, "--judge-model", "judge", "--price-prompt", "2",
            "--price-completion", "8", "--batch", "--batch-poll", "0.05", "--batch-settle", "0.1"]


def _cli(server: JudgeServer, *args: str) -> list[str]:
    return [sys.executable, "-m", "textgen_core", *_args(server, *args)]


def test_kill_9_while_a_batch_is_pending_then_resume_submits_nothing_twice(tmp_path: Path, direct: dict,
                                                                          cli_main) -> None:
    data, db = tmp_path / "data.jsonl", tmp_path / "runs.duckdb"
    write_suite_jsonl(data, ROWS)
    env = {**os.environ, "TEXTGEN_EVAL_JUDGE_API_KEY": "sk-batch", "PYTHONPATH": str(ROOT)}
    with JudgeServer(responder=ScriptedJudge()) as server:
        server.batches.delay = 3600.0  # the first batch stays in progress
        process = subprocess.Popen(_cli(server, "run", str(data), "--metrics", ",".join(METRICS), "--db", str(db)),
                                   cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 60
            while not any(r.path.startswith("GET /v1/batches/") for r in server.recorded(None)):
                assert process.poll() is None, process.communicate()
                assert time.monotonic() < deadline, "the run never polled its batch"
                time.sleep(0.02)
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait(30)
        assert process.returncode == -signal.SIGKILL
        assert len(server.batches.created) == 1
        pending = server.batches.created[0]

        server.batches.delay = 0.0  # the batch the dead process left behind is now complete
        # the resume is this process: the killed one is the real process that matters here
        again = cli_main(*_args(server, "resume", "1", "--db", str(db)), env={"TEXTGEN_EVAL_JUDGE_API_KEY": "sk-batch"})
        assert again.returncode == 0, again.stderr
        assert "finished" in again.stdout

        assert server.count(CHAT) == 0
        created = server.batches.created
        assert created[0] == pending and len(created) == 2  # the resume made only the verdict round
        first = {line["custom_id"] for line in server.batches.lines(created[0])}
        second = {line["custom_id"] for line in server.batches.lines(created[1])}
        assert not first & second  # nothing of the pending batch was submitted again
        store = Store(db, read_only=True)
        assert scores(store, 1) == direct["scores"]
        assert [row["batch_id"] for row in store.judge_batches(1)] == created


def test_dry_run_shows_direct_and_batch_cost(tmp_path: Path, cli_main) -> None:
    data = tmp_path / "data.jsonl"
    write_suite_jsonl(data, ROWS)
    with JudgeServer(responder=ScriptedJudge()) as server:
        done = cli_main(*_args(server, "run", str(data), "--metrics", ",".join(METRICS), "--db",
                               str(tmp_path / "x.duckdb"), "--dry-run"),
                        cwd=tmp_path, env={"TEXTGEN_EVAL_JUDGE_API_KEY": "sk-batch"})
        assert done.returncode == 0, done.stderr
        line = next(text for text in done.stdout.splitlines() if text.startswith("estimated cost"))
        direct_cost = float(line.split("direct ")[1].split(",")[0])
        batch_cost = float(line.split("batch ")[1].split(" ")[0])
        assert batch_cost == pytest.approx(direct_cost * 0.5, rel=1e-3) and direct_cost > 0
        assert "batch mode: 2 batch rounds expected" in done.stdout  # extractions, then verdicts on them
        assert server.count(CHAT) == 0 and not server.batches.created


def test_a_refused_key_fails_the_batch_run_with_the_reason(db_path: Path) -> None:
    with JudgeServer(responder=ScriptedJudge(), api_key="sk-the-right-one") as server:
        store = Store(db_path)
        dataset_id = store.save_dataset(Dataset("d", suite_rows(2)))
        with pytest.raises(TextgenError, match="refused: HTTP 401"):
            evaluate(store, dataset_id, METRICS, judge=settings(server, batch=True))
        run = store.get_run(1)
        assert run["status"] == "failed" and "Incorrect API key" in run["error"]
        assert "sk-batch" not in run["error"]  # the key sent is never repeated
        assert not server.batches.created
