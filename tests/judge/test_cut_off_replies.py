"""Cut-off replies (#18.10, #18.14): a resume may raise --max-tokens; a looping reply is named as such;
valid JSON of the wrong shape is not called invalid JSON.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from judge_server import CHAT, JudgeServer, Reply
from textgen_core.errors import ParameterError
from textgen_core.evaluate import evaluate, resume
from textgen_core.judge.replies import repeated_tail
from textgen_core.judge.settings import JudgeSettings
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store

GOOD = '{"reason": "same city", "grade": "CORRECT"}'


def rows(n: int = 3) -> list[Datum]:
    return [Datum(f"d{i}", "m", query=f"Capital number {i}?", prediction=f"City {i}.", references=(f"City {i}.",))
            for i in range(n)]


def limit_of(request: dict) -> int:
    return int(request.get("max_completion_tokens") or request.get("max_tokens") or 0)


def settings(server: JudgeServer, **overrides: Any) -> JudgeSettings:
    return JudgeSettings(base_url=server.url, model="judge", **{"retries": 1, "timeout": 5.0, **overrides})


def test_a_resume_may_raise_max_tokens_for_the_cells_cut_off(db_path: Path) -> None:
    def rambling(request: dict) -> Reply:  # needs 200 tokens for its reasoning before the verdict
        if limit_of(request) < 200:
            return Reply('{"reason": "Let me think about the capital step by step', finish_reason="length",
                         completion_tokens=limit_of(request))
        return Reply(GOOD)

    with JudgeServer(responder=rambling) as server:
        store = Store(db_path)
        run_id = evaluate(store, store.save_dataset(Dataset("d", rows())), ["qa_grade"],
                          judge=settings(server, max_tokens=64))
        first = store.scores(run_id)
        assert first["value"].isna().all() and first["reason"].str.contains("raise --max-tokens").all()
        resume(store, run_id, judge=settings(server, max_tokens=512))  # was refused as "another judge"
        assert store.scores(run_id)["value"].tolist() == [1.0, 1.0, 1.0]
        with pytest.raises(ParameterError, match="another judge"):  # what does decide verdicts still counts
            resume(store, run_id, judge=settings(server, max_tokens=512, temperature=0.5))


def test_a_reply_that_loops_until_the_limit_is_named_as_such(db_path: Path) -> None:
    loop = '{"reason": "The answer is right. ' + "The answer is right. " * 60

    with JudgeServer(responder=lambda r: Reply(loop, finish_reason="length", completion_tokens=limit_of(r))) as server:
        store = Store(db_path)
        run_id = evaluate(store, store.save_dataset(Dataset("d", rows(1))), ["qa_grade"], judge=settings(server))
        reason = store.scores(run_id)["reason"].iloc[0]
        assert server.count(CHAT) >= 1
    assert "repeated 'The answer is right.' over and over" in reason and "will not help" in reason, reason


@pytest.mark.parametrize(("text", "expected"), [
    ("The answer is right. " * 6, "The answer is right."),
    ("ab" * 40, "ab"),
    ('{"reason": "It names the same city as the reference, so the grade is', None),  # cut, not looping
    ("aaaaaaaa", None),  # too short to call a loop
])
def test_repeated_tail(text: str, expected: str | None) -> None:
    assert repeated_tail(text) == expected


def test_an_unscored_exchange_keeps_its_tokens_latency_and_attempts(db_path: Path) -> None:
    cut = Reply('{"reason": "Let me think', finish_reason="length", prompt_tokens=100, completion_tokens=64)
    with JudgeServer(responder=lambda r: cut, latency=0.05) as server:
        store = Store(db_path)
        run_id = evaluate(store, store.save_dataset(Dataset("d", rows(1))), ["qa_grade"],
                          judge=settings(server, max_tokens=64))
    failed = store.exchanges(run_id, "d0")
    assert list(failed["status"]) == ["unscored"]
    row = failed.iloc[0]
    assert (row["prompt_tokens"], row["completion_tokens"], row["attempts"]) == (100, 64, 1)  # was 0, 0
    assert row["latency_s"] >= 0.05  # was empty
    assert store.get_run(run_id)["completion_tokens"] == 64  # and counted in the run's usage
