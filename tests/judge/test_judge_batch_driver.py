"""The Batch API driver and the batch rounds, against the loopback server with the real openai client."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace

import pytest

from judge_server import CHAT, JudgeServer
from textgen_core.judge.batch import Batcher, BatchDriver, BatchStillPending, LineResult, Polling, complete, custom_id
from textgen_core.llm.endpoint import async_openai
from textgen_core.judge.replies import Unscored
from textgen_core.judge.settings import JudgeSettings
from textgen_core.judge.transport import Budget
from textgen_core.store import Store

FAST = Polling(first=0.02, factor=1.5, cap=0.1)


def body(i: int) -> dict:
    return {"model": "judge-test", "messages": [{"role": "user", "content": f"question {i}"}], "temperature": 0.0}


def answer(request: dict) -> dict:
    text = request["messages"][-1]["content"]
    return {"verdict": "yes" if int(text.split()[-1]) % 2 == 0 else "no", "echo": text}


@pytest.fixture
def server(judge_server: JudgeServer) -> JudgeServer:
    judge_server.responder = answer
    judge_server.batches.delay = 0.1
    return judge_server


def run_driver(settings: JudgeSettings, requests: dict) -> tuple[dict[str, LineResult], list[str]]:
    async def go() -> tuple[dict[str, LineResult], list[str]]:
        api = async_openai(settings)
        created: list[str] = []
        try:
            results = await BatchDriver(api, polling=FAST).run(requests, lambda b, f: created.append(b))
        finally:
            await api.close()
        return results, created
    return asyncio.run(go())


def content(result: LineResult) -> dict:
    assert result.reply is not None, result
    return json.loads(result.reply["choices"][0]["message"]["content"])


def test_driver_maps_every_custom_id_to_its_reply(server: JudgeServer, judge_settings: JudgeSettings) -> None:
    requests = {custom_id(body(i)): body(i) for i in range(6)}
    results, created = run_driver(judge_settings, requests)
    assert created == server.batches.created and len(created) == 1
    assert server.count(CHAT) == 0  # nothing went to the chat route directly
    for i in range(6):
        got = content(results[custom_id(body(i))])
        assert got == answer(body(i))
        assert results[custom_id(body(i))].reply["usage"]["prompt_tokens"] > 0
    uploaded = server.batches.lines(created[0])
    assert {line["custom_id"] for line in uploaded} == set(requests)
    assert all(line["url"] == "/v1/chat/completions" and line["method"] == "POST" for line in uploaded)
    assert server.recorded("/v1/files")[0].headers["authorization"] == f"Bearer {judge_settings.api_key}"


def test_driver_reports_partial_failures_by_id(server: JudgeServer, judge_settings: JudgeSettings) -> None:
    requests = {custom_id(body(i)): body(i) for i in range(4)}
    bad = custom_id(body(2))
    server.batches.line_error = lambda cid, request: 500 if cid == bad else None
    results, _ = run_driver(judge_settings, requests)
    assert results[bad].reply is None and results[bad].status == 500
    assert "scripted failure 500" in results[bad].message
    assert all(content(results[custom_id(body(i))]) == answer(body(i)) for i in (0, 1, 3))


def test_driver_expired_batch_keeps_finished_lines(server: JudgeServer, judge_settings: JudgeSettings) -> None:
    server.batches.outcomes.append("expired")
    requests = {custom_id(body(i)): body(i) for i in range(5)}
    results, _ = run_driver(judge_settings, requests)
    done = [cid for cid, r in results.items() if r.reply is not None]
    expired = [cid for cid, r in results.items() if r.code == "batch_expired"]
    assert len(done) == 3 and len(expired) == 2


def test_failed_batch_gives_every_line_the_batch_reason(server: JudgeServer, judge_settings: JudgeSettings) -> None:
    server.batches.outcomes.append("failed")
    requests = {custom_id(body(i)): body(i) for i in range(3)}
    results, created = run_driver(judge_settings, requests)
    assert {r.code for r in results.values()} == {"batch_failed"}
    assert all(created[0] in r.message and "scripted validation failure" in r.message for r in results.values())


def test_complete_fills_lines_the_batch_left_out() -> None:
    class Done:
        id, status = "batch-1", "completed"
    filled = complete({"a": 1, "b": 2}, Done(), {"a": LineResult({"choices": []}, 200)})
    assert filled["a"].status == 200 and filled["b"].code == "batch_missing"


# -- rounds ----------------------------------------------------------------------------------

def post_all(batcher: Batcher, bodies: list[dict], retries: int = 2) -> list[object]:
    async def one(request: dict) -> object:
        try:
            return await batcher.post(request, Budget(retries))
        except Unscored as exc:
            return exc

    async def go() -> list[object]:
        try:
            return await asyncio.gather(*(one(b) for b in bodies))
        finally:
            await batcher.aclose()
    return asyncio.run(go())


def test_concurrent_requests_go_out_as_one_batch(server: JudgeServer, judge_settings: JudgeSettings) -> None:
    batcher = Batcher(judge_settings, polling=FAST, settle=0.05)
    bodies = [body(i) for i in range(20)] + [body(3)]  # a repeated request is sent once
    replies = post_all(batcher, bodies)
    assert len(server.batches.created) == 1
    assert len(server.batches.lines(server.batches.created[0])) == 20
    assert [json.loads(r["choices"][0]["message"]["content"]) for r in replies] == [answer(b) for b in bodies]
    assert server.count(CHAT) == 0


def test_a_round_waits_settle_seconds_after_the_newest_request(server: JudgeServer,
                                                              judge_settings: JudgeSettings) -> None:
    """Requests that keep coming closer together than ``settle`` all join one round; it goes out once none
    has come for ``settle`` seconds (the ``batch_settle`` setting unless given)."""
    assert Batcher(replace(judge_settings, batch_settle=7.0)).settle == 7.0
    batcher = Batcher(judge_settings, polling=FAST, settle=0.15)
    asked: list[float] = []

    async def late(i: int) -> object:
        await asyncio.sleep(0.1 * i)  # 0.1 s apart: each arrives within the previous one's quiet time
        asked.append(time.monotonic())
        return await batcher.post(body(i), Budget(0))

    async def go() -> list[object]:
        try:
            return await asyncio.gather(*(late(i) for i in range(4)))
        finally:
            await batcher.aclose()

    replies = asyncio.run(go())
    assert len(server.batches.created) == 1 and len(server.batches.lines(server.batches.created[0])) == 4
    assert [json.loads(r["choices"][0]["message"]["content"]) for r in replies] == [answer(body(i)) for i in range(4)]
    upload = next(r for r in server.recorded(None) if r.path == "/v1/files")
    assert upload.started - max(asked) >= 0.15  # the newest request had its full quiet time


def test_failed_and_expired_lines_are_resubmitted_alone(server: JudgeServer, judge_settings: JudgeSettings) -> None:
    flaky = {custom_id(body(1)), custom_id(body(4))}
    seen: dict[str, int] = {}

    def line_error(cid: str, request: dict) -> int | None:
        seen[cid] = seen.get(cid, 0) + 1
        return 503 if cid in flaky and seen[cid] == 1 else None

    server.batches.line_error = line_error
    server.batches.outcomes.extend(["completed", "expired"])  # second round: only its first line runs
    batcher = Batcher(judge_settings, polling=FAST, settle=0.05)
    replies = post_all(batcher, [body(i) for i in range(6)])
    assert all(isinstance(r, dict) for r in replies), replies
    first, second, third = (server.batches.lines(b) for b in server.batches.created)
    assert len(first) == 6
    assert {line["custom_id"] for line in second} == flaky  # the two failed lines, alone
    assert len(third) == 1  # the one that expired in the second batch
    assert server.count(CHAT) == 0


def test_final_line_error_unscored_with_its_reason(server: JudgeServer, judge_settings: JudgeSettings) -> None:
    server.batches.line_error = lambda cid, request: 400 if cid == custom_id(body(0)) else None
    replies = post_all(Batcher(judge_settings, polling=FAST, settle=0.05), [body(0), body(1)])
    assert isinstance(replies[0], Unscored) and "HTTP 400" in replies[0].reason and not replies[0].fatal
    assert isinstance(replies[1], dict)
    assert len(server.batches.created) == 1  # a 400 is not sent again


def test_retries_run_out(server: JudgeServer, judge_settings: JudgeSettings) -> None:
    server.batches.line_error = lambda cid, request: 500
    replies = post_all(Batcher(judge_settings, polling=FAST, settle=0.05), [body(0)], retries=1)
    assert isinstance(replies[0], Unscored) and "gave up after 2 batch attempts" in replies[0].reason
    assert len(server.batches.created) == 2


def test_logged_batch_is_taken_over_not_resubmitted(server: JudgeServer, judge_settings: JudgeSettings,
                                                    db_path) -> None:
    store = Store(db_path)
    server.batches.delay = 1.0  # the first batcher stops waiting (batch_wait) before the batch is done
    first = Batcher(replace(judge_settings, batch_wait=0.2), store, run_id=7, polling=FAST, settle=0.05)
    with pytest.raises(BatchStillPending, match="still in_progress after 0.2 s"):
        post_all(first, [body(i) for i in range(4)])
    assert first.pending == server.batches.created
    assert [row["batch_id"] for row in store.judge_batches(7)] == server.batches.created
    assert store.judge_batches(7)[0]["status"] == "in_progress"
    again = Batcher(judge_settings, store, run_id=7, polling=FAST, settle=0.05)
    replies = post_all(again, [body(i) for i in range(5)])  # 4 known requests and a new one
    # the 4 logged requests are read from the first batch: only the new one goes out, alone
    assert len(server.batches.created) == 2 and len(server.batches.lines(server.batches.created[1])) == 1
    assert [json.loads(r["choices"][0]["message"]["content"]) for r in replies] == [answer(body(i)) for i in range(5)]
    assert store.judge_batches(8) == []
    # Read, then deleted from the provider: both batches are 'collected' and no file stays there.
    assert {row["status"] for row in store.judge_batches(7)} == {"collected"} and server.batches.files == {}


def test_a_round_larger_than_one_batch_is_split(server: JudgeServer, judge_settings: JudgeSettings,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from textgen_core.llm import batch_api as batch

    monkeypatch.setattr(batch, "MAX_REQUESTS", 4)
    replies = post_all(Batcher(judge_settings, polling=FAST, settle=0.05), [body(i) for i in range(10)])
    assert sorted(len(server.batches.lines(b)) for b in server.batches.created) == [2, 4, 4]  # sent side by side
    assert [json.loads(r["choices"][0]["message"]["content"]) for r in replies] == [answer(body(i)) for i in range(10)]
    assert len(batch.split({str(i): {"x": "y" * 1000} for i in range(3)})) == 1
    monkeypatch.setattr(batch, "MAX_BYTES", 2500)
    assert [len(p) for p in batch.split({str(i): {"x": "y" * 1000} for i in range(3)})] == [2, 1]
