"""Spending caps end to end: real openai client, loopback judge, real DuckDB file.

A capped run stops before passing its cap (interrupted, "budget reached", finished cells kept) and
``resume`` -- with a higher cap or none -- finishes it with the numbers an uncapped run gets, without
paying again for what the first part already asked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from judge_server import CHAT, JudgeServer
from scripted_judge import ScriptedJudge, suite_rows, write_suite_jsonl
from textgen_core.errors import ParameterError
from textgen_core.evaluate import evaluate, resume
from textgen_core.judge.settings import JudgeSettings
from textgen_core.model import Dataset
from textgen_core.store import Store

METRICS = ["faithfulness", "answer_relevance", "coherence", "bias"]
PRICES = {"price_prompt_per_million": 2.0, "price_completion_per_million": 8.0}


def settings(server: JudgeServer, **overrides: Any) -> JudgeSettings:
    values = {"concurrency": 4, "timeout": 5.0, "retries": 2, **PRICES, **overrides}
    return JudgeSettings(base_url=server.url, model="judge", api_key="sk-budget", **values)


def scores(store: Store, run_id: int) -> dict[tuple[str, str, str], float | None]:
    frame = store.scores(run_id)
    return {(r.datum_id, r.model, r.score): (None if r.value != r.value else r.value) for r in frame.itertuples()}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The uncapped run: its scores, calls and cost."""
    with JudgeServer(responder=ScriptedJudge()) as server:
        store = Store(tmp_path_factory.mktemp("ref") / "ref.duckdb")
        dataset_id = store.save_dataset(Dataset("d", suite_rows(6)))
        run_id = evaluate(store, dataset_id, METRICS, judge=settings(server))
        run = store.get_run(run_id)
        assert run["status"] == "finished"
        return {"scores": scores(store, run_id), "calls": run["judge_calls"], "cost": run["cost"],
                "requests": server.count(CHAT)}


def capped_run(db: Path, server: JudgeServer, **cap: Any) -> tuple[Store, int]:
    store = Store(db)
    dataset_id = store.save_dataset(Dataset("d", suite_rows(6)))
    return store, evaluate(store, dataset_id, METRICS, judge=settings(server, **cap))


@pytest.mark.parametrize("concurrency", [1, 8])
def test_max_calls_stops_before_the_cap_and_resume_finishes(db_path: Path, reference: dict,
                                                            concurrency: int) -> None:
    with JudgeServer(responder=ScriptedJudge(), latency=0.01) as server:
        store, run_id = capped_run(db_path, server, max_calls=13, concurrency=concurrency)
        run = store.get_run(run_id)
        assert run["status"] == "interrupted" and "budget reached" in run["error"]
        assert server.count(CHAT) <= 13 and run["judge_calls"] == server.count(CHAT)
        kept = {k: v for k, v in scores(store, run_id).items()}
        assert 0 < len(kept) < len(reference["scores"])  # some cells finished, the rest left for resume
        assert all(reference["scores"][k] == v for k, v in kept.items())
        assert all(v is not None for v in kept.values())  # nothing unscored because of the cap

        resume(store, run_id, judge=settings(server, concurrency=concurrency))  # no cap: finish
        run = store.get_run(run_id)
        assert run["status"] == "finished" and not run["error"]
        assert scores(store, run_id) == reference["scores"]
        assert server.count(CHAT) == reference["requests"]  # nothing asked twice across the two parts
        assert run["judge_calls"] == reference["calls"]


def test_max_cost_stops_below_the_cap_and_a_higher_cap_finishes(db_path: Path, reference: dict) -> None:
    cap = reference["cost"] * 0.4
    with JudgeServer(responder=ScriptedJudge(), latency=0.01) as server:
        store, run_id = capped_run(db_path, server, max_cost=cap)
        run = store.get_run(run_id)
        assert run["status"] == "interrupted" and "budget reached" in run["error"] and "--max-cost" in run["error"]
        assert 0 < run["cost"] <= cap
        assert run["judge_calls"] > 0

        resume(store, run_id, judge=settings(server, max_cost=cap * 1.5))  # still not enough: stops again
        again = store.get_run(run_id)
        assert again["status"] == "interrupted" and run["cost"] < again["cost"] <= cap * 1.5

        # A request on the wire is counted at an upper estimate, so the last cap needs some room.
        resume(store, run_id, judge=settings(server, max_cost=reference["cost"] * 2))
        done = store.get_run(run_id)
        assert done["status"] == "finished"
        assert scores(store, run_id) == reference["scores"]
        assert done["cost"] == pytest.approx(reference["cost"], rel=1e-9)


def test_batch_mode_caps_at_batch_prices(db_path: Path, reference: dict) -> None:
    """A capped batch run stays under its cap at batch prices, makes progress, and resume finishes at half price."""
    cap = reference["cost"] * 0.3
    with JudgeServer(responder=ScriptedJudge()) as server:
        server.batches.delay = 0.05
        store, run_id = capped_run(db_path, server, max_cost=cap, batch=True, batch_poll=0.02, batch_settle=0.1)
        run = store.get_run(run_id)
        assert run["status"] == "interrupted" and "budget reached" in run["error"]
        assert 0 < run["cost"] <= cap and run["judge_calls"] > 0
        resume(store, run_id, judge=settings(server, batch=True, batch_poll=0.02, batch_settle=0.1))
        done = store.get_run(run_id)
        assert done["status"] == "finished"
        assert scores(store, run_id) == reference["scores"]
        assert done["cost"] == pytest.approx(reference["cost"] * 0.5, rel=1e-9)
        assert server.count(CHAT) == 0


def test_a_cost_cap_without_prices_is_refused() -> None:
    with pytest.raises(ParameterError, match="needs the prices"):
        JudgeSettings(base_url="http://127.0.0.1:9/v1", model="m", max_cost=1.0)
    with pytest.raises(ParameterError, match="max_calls"):
        JudgeSettings(base_url="http://127.0.0.1:9/v1", model="m", max_calls=-1)


def test_cli_max_calls_then_resume(tmp_path: Path, reference: dict, cli_main) -> None:
    data, db = tmp_path / "data.jsonl", tmp_path / "runs.duckdb"
    write_suite_jsonl(data, 6)  # the rows of the reference run
    env = {"TEXTGEN_EVAL_JUDGE_API_KEY": "sk-budget"}
    with JudgeServer(responder=ScriptedJudge()) as server:
        judge = ["--judge-base-url", server.url, "--judge-model", "judge", "--price-prompt", "2",
                 "--price-completion", "8", "--db", str(db)]
        first = cli_main("run", str(data), "--metrics", ",".join(METRICS), "--max-calls", "10", *judge, cwd=tmp_path,
                         env=env)
        assert first.returncode == 1, first.stdout + first.stderr
        assert "interrupted" in first.stdout and "budget reached: 10 judge calls" in first.stdout
        assert "textgen-eval resume 1" in first.stdout
        assert server.count(CHAT) <= 10
        second = cli_main("resume", "1", *judge, cwd=tmp_path, env=env)
        assert second.returncode == 0, second.stdout + second.stderr
        assert "finished" in second.stdout
        assert server.count(CHAT) == reference["requests"]
        store = Store(db, read_only=True)
        assert scores(store, 1) == reference["scores"]


def test_a_run_capped_in_direct_mode_resumes_in_batch_mode(db_path: Path, reference: dict) -> None:
    with JudgeServer(responder=ScriptedJudge()) as server:
        server.batches.delay = 0.05
        store, run_id = capped_run(db_path, server, max_calls=12)
        direct_calls = server.count(CHAT)
        assert store.get_run(run_id)["status"] == "interrupted" and direct_calls <= 12
        resume(store, run_id, judge=settings(server, batch=True, batch_poll=0.02, batch_settle=0.1))
        run = store.get_run(run_id)
        assert run["status"] == "finished" and scores(store, run_id) == reference["scores"]
        assert server.count(CHAT) == direct_calls  # the rest went through batches
        sent = [line for b in server.batches.created for line in server.batches.lines(b)]
        assert len(sent) == reference["requests"] - direct_calls  # nothing asked twice
        assert run["judge_calls"] == reference["calls"]
