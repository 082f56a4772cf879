"""Spending caps count every attempt the endpoint may bill (#19.2), end to end against the loopback judge.

The judge here is slow (timeouts), refuses with 5xx and 429, or omits usage; each test counts the
requests the endpoint received -- what it could bill -- against the cap the run was given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from judge_server import CHAT, Fault, JudgeServer, Reply
from textgen_core.evaluate import evaluate, resume
from textgen_core.judge.prompting import prompt_bound
from textgen_core.judge.settings import JudgeSettings
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store

PRICES = {"price_prompt_per_million": 1000.0, "price_completion_per_million": 1000.0}


def rows(n: int) -> list[Datum]:
    return [Datum(f"d{i}", "m", query=f"Capital number {i}?", prediction=f"City {i}.", references=(f"City {i}.",))
            for i in range(n)]


def grade(request: dict) -> Any:
    return {"reason": "same city", "grade": "CORRECT"}


def settings(server: JudgeServer, **overrides: Any) -> JudgeSettings:
    values = {"concurrency": 4, "timeout": 5.0, "retries": 2, "max_tokens": 64, "backoff": 0.01, **overrides}
    return JudgeSettings(base_url=server.url, model="judge", api_key="sk-caps", **values)


def run(db: Path, judge: JudgeSettings, n: int = 12) -> tuple[Store, int]:
    store = Store(db)
    return store, evaluate(store, store.save_dataset(Dataset("d", rows(n))), ["qa_grade"], judge=judge)


def test_timed_out_attempts_count_against_max_calls(db_path: Path) -> None:
    with JudgeServer(responder=grade, latency=1.5) as server:  # every reply comes after the timeout
        store, run_id = run(db_path, settings(server, timeout=0.15, retries=2, max_calls=6))
        received = server.count(CHAT)
    record = store.get_run(run_id)
    assert received <= 6, received  # was 36: the endpoint completed (and billed) 6x the cap
    assert record["judge_calls"] == received and record["status"] == "interrupted"
    assert "budget reached" in record["error"]


def test_5xx_and_429_attempts_count_against_max_calls(db_path: Path) -> None:
    with JudgeServer(responder=grade) as server:
        server.script(*[Fault.http(503)] * 4, *[Fault.rate_limit(retry_after_ms=10)] * 4)
        store, run_id = run(db_path, settings(server, max_calls=10, concurrency=1))
        received = server.count(CHAT)
    record = store.get_run(run_id)
    assert received == 10 == record["judge_calls"], (received, record["judge_calls"])  # 8 refused + 2 answered
    assert store.scores(run_id)["value"].notna().sum() == 2 and record["status"] == "interrupted"


def test_max_cost_binds_when_the_endpoint_omits_usage(db_path: Path) -> None:
    with JudgeServer(responder=lambda r: Reply('{"reason": "same city", "grade": "CORRECT"}', usage=False)) as server:
        judge = settings(server, concurrency=1, max_cost=1.0, **PRICES)
        store, run_id = run(db_path, judge, n=40)
        received = server.count(CHAT)
        prompt_chars = sum(len(str(r.messages)) for r in server.recorded(CHAT))
    # What the endpoint may bill at most: every prompt at 4 characters a token, every reply at max_tokens.
    upper = (prompt_chars / 4 + received * 64) * 1000.0 / 1e6
    assert store.get_run(run_id)["status"] == "interrupted" and received < 40
    assert 0.5 <= upper <= 1.0 + 1e-9, upper  # near the cap and within it at the upper estimate (was: 3.6x)


def test_a_resume_counts_an_earlier_part_run_without_prices(db_path: Path) -> None:
    with JudgeServer(responder=grade) as server:
        store, run_id = run(db_path, settings(server, max_calls=8, concurrency=1))  # no prices: cost 0
        first = store.get_run(run_id)
        assert first["status"] == "interrupted" and first["judge_calls"] == 8
        tokens = first["prompt_tokens"] + first["completion_tokens"]
        cap = tokens * 1000.0 / 1e6 * 1.2  # room for a fifth of the first part's spend, no more
        resume(store, run_id, judge=settings(server, concurrency=1, max_cost=cap, **PRICES))
        resumed = server.count(CHAT) - 8
    assert store.get_run(run_id)["status"] == "interrupted"
    assert resumed <= 2, resumed  # was: the first part counted $0, the resume spent the whole cap again


def test_timed_out_attempts_are_recorded_at_their_estimated_cost(db_path: Path,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    """#34.15: attempts that count against the cap were recorded at cost 0 ("cost 0.0000")."""
    with JudgeServer(responder=grade, latency=1.5) as server:  # every reply comes after the timeout
        judge = settings(server, timeout=0.15, retries=2, max_calls=6, **PRICES)
        store, run_id = run(db_path, judge)
        sent = [r.body for r in server.recorded(CHAT)]
    record = store.get_run(run_id)
    assert len(sent) == record["judge_calls"] > 0 and record["prompt_tokens"] == 0  # no usage came back
    # Each at the cap's upper estimate: its prompt's bound, and a reply of max_tokens.
    expected = sum(judge.price(prompt_bound(body), judge.max_tokens) for body in sent)
    assert record["cost"] == pytest.approx(expected, rel=1e-9) and expected > 0
    assert f"at an estimated ${expected:.4f}" in caplog.text
