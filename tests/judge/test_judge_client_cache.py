"""The judge client against the loopback server: cache, concurrency, usage, endpoints, secrets.

Real openai client, real HTTP to tests/judge_server.py on 127.0.0.1; no mocks.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import replace
from typing import Any

import pytest

from judge_client_helpers import GOOD, VERDICTS, ask, make, messages, run
from judge_server import COMPLETIONS, EMBEDDINGS, Fault, JudgeServer, Reply, default_embed, default_logprob
from textgen_core.judge import JudgeClient, JudgeSettings, Unscored, Usage
from textgen_core.llm.retry import FAST_POLICY
from textgen_core.judge.storage import CellWrite
from textgen_core.store import Store


# -- cache --------------------------------------------------------------------------------------------
def test_cache_hit_makes_no_request_and_persists_in_duckdb(judge_server: JudgeServer, judge_settings, db_path) -> None:
    judge_server.responder = lambda request: GOOD
    store = Store(db_path)
    client = make(judge_settings, store)

    async def twice() -> tuple[Any, Any]:
        return await ask(client), await ask(client)

    first, second = run(client, twice)
    assert judge_server.count() == 1 and not first.cached and second.cached
    assert second.value == first.value and second.text == first.text and second.messages == first.messages
    assert second.cache_key == first.cache_key and client.usage.cached == 1 and client.usage.calls == 1
    store.close()

    reopened = Store(db_path)
    fresh = make(judge_settings, reopened)
    assert fresh.cached_values([fresh.cache_key(messages(), VERDICTS, prompt_version="v1")])
    third = run(fresh, lambda: ask(fresh))
    assert third.cached and third.value == GOOD and judge_server.count() == 1
    assert fresh.usage == Usage(cached=1) and fresh.cost() is None
    row = reopened.judge_cache_get(first.cache_key)
    assert row["request"]["mode"] == "json_schema" and row["parsed"] == GOOD and row["model"] == "judge-test"
    reopened.close()


def test_errors_are_never_cached(judge_server: JudgeServer, judge_settings, db_path) -> None:
    store = Store(db_path)
    judge_server.responder = lambda request: "not json"
    client = make(judge_settings, store, retries=0)
    with pytest.raises(Unscored):
        run(client, lambda: ask(client))
    judge_server.script(Fault.http(400, "bad request"))
    with pytest.raises(Unscored):
        run(client, lambda: ask(client, "other"))
    with store.session():  # nothing was cached
        assert store.db.cursor().execute("SELECT count(*) FROM judge_cache").fetchone()[0] == 0
    judge_server.responder = lambda request: GOOD
    assert not run(client, lambda: ask(client)).cached
    assert judge_server.count() == 3
    store.close()


def test_identical_concurrent_asks_are_paid_once(judge_server: JudgeServer, judge_settings) -> None:
    judge_server.responder = lambda request: GOOD
    judge_server.latency = 0.05
    client = make(judge_settings)

    async def body() -> list[Any]:
        return await asyncio.gather(*(ask(client) for _ in range(10)))

    replies = run(client, body)
    assert judge_server.count() == 1 and sum(r.cached for r in replies) == 9


@pytest.mark.parametrize("change, same", [
    ({"temperature": 0.7}, False), ({"model": "other-judge"}, False), ({"seed": 3}, False),
    ({"base_url": "http://127.0.0.1:9/v1"}, False),
    ({"concurrency": 2}, True), ({"timeout": 5.0}, True), ({"retries": 0}, True), ({"api_key": "sk-other"}, True),
    ({"price_prompt_per_million": 1.0}, True), ({"max_tokens": 10}, True),
], ids=lambda v: str(v))
def test_cache_key_covers_what_changes_the_answer(judge_settings, change: dict, same: bool) -> None:
    base = make(judge_settings).cache_key(messages(), VERDICTS, prompt_version="v1")
    other = make(judge_settings, **change).cache_key(messages(), VERDICTS, prompt_version="v1")
    assert (base == other) is same


def test_cache_key_changes_with_messages_schema_and_prompt_version(judge_settings) -> None:
    client = make(judge_settings)
    base = client.cache_key(messages(), VERDICTS, prompt_version="v1")
    assert base == client.cache_key(messages(), json.loads(json.dumps(VERDICTS)), prompt_version="v1")
    assert base == make(judge_settings, base_url=judge_settings.base_url + "/").cache_key(messages(), VERDICTS, prompt_version="v1")
    assert base != client.cache_key(messages("Is grass green?"), VERDICTS, prompt_version="v1")
    assert base != client.cache_key(messages(), {**VERDICTS, "required": []}, prompt_version="v1")
    assert base != client.cache_key(messages(), VERDICTS, prompt_version="v2")
    assert len(base) == 64 and int(base, 16) >= 0


# -- concurrency -------------------------------------------------------------------------------------
def test_concurrency_is_bounded_and_used(judge_server: JudgeServer, judge_settings) -> None:
    judge_server.responder = lambda request: GOOD
    judge_server.latency = 0.05
    seen: list[int] = []
    client = JudgeClient(judge_settings, retry_policy=FAST_POLICY, on_change=lambda u: seen.append(u.in_flight))
    assert judge_settings.concurrency == 8

    async def body() -> list[Any]:
        return await asyncio.gather(*(ask(client, f"question {i}") for i in range(100)))

    started = time.monotonic()
    replies = run(client, body)
    elapsed = time.monotonic() - started
    assert len(replies) == 100 and judge_server.count() == 100
    assert judge_server.peak == 8 and max(seen) == 8 and client.usage.in_flight == 0
    ideal = 100 / 8 * 0.05  # 13 waves of 50 ms
    assert ideal <= elapsed < ideal * 6  # one at a time would take 8 times longer (margin for a loaded machine)


def test_server_queues_64_connections_opened_at_once() -> None:
    """The loopback judge's listen backlog: 80 connects complete while nothing accepts them yet."""
    import select
    import socket

    from judge_server import BACKLOG, _Handler, _QuietServer

    assert BACKLOG >= 64
    server = _QuietServer(("127.0.0.1", 0), _Handler)  # bound and listening; no thread accepts
    clients = [socket.socket() for _ in range(80)]
    try:
        for sock in clients:
            sock.setblocking(False)
            sock.connect_ex(server.server_address)
        pending, deadline = list(clients), time.monotonic() + 2.0
        while pending and time.monotonic() < deadline:  # a dropped SYN is retried after 1 s, then 3 s
            _, ready, _ = select.select([], pending, [], 0.1)
            pending = [s for s in pending if s not in ready]
        assert pending == [] and all(s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0 for s in clients)
    finally:
        for sock in clients:
            sock.close()
        server.server_close()


def test_client_works_across_event_loops(judge_server: JudgeServer, judge_settings) -> None:
    judge_server.responder = lambda request: GOOD
    client = make(judge_settings)
    for i in range(3):  # as a dashboard does: one asyncio.run per job, one client
        assert run(client, lambda: ask(client, f"q{i}")).value == GOOD
    assert judge_server.count() == 3


def test_random_transient_faults_never_drop_a_row(judge_server: JudgeServer, judge_settings) -> None:
    judge_server.responder = lambda request: GOOD
    judge_server.fault_rate = 0.3
    client = make(judge_settings, retries=8)

    async def body() -> list[Any]:
        return await asyncio.gather(*(ask(client, f"row {i}") for i in range(60)))

    replies = run(client, body)
    assert len(replies) == 60 and all(r.value == GOOD for r in replies)
    assert judge_server.count() == 60 + client.usage.retries and client.usage.retries > 0


def test_max_completion_tokens_is_used_when_the_model_asks_for_it(judge_server: JudgeServer, judge_settings) -> None:
    def responder(request: dict) -> Any:
        if "max_tokens" in request:
            return Fault.http(400, "Unsupported parameter: 'max_tokens' is not supported with this model. "
                                   "Use 'max_completion_tokens' instead.", "unsupported_parameter")
        return GOOD

    judge_server.responder = responder
    client = make(judge_settings)

    async def body() -> tuple[Any, Any]:
        return await ask(client, "a"), await ask(client, "b")

    run(client, body)
    assert judge_server.count() == 3 and judge_server.recorded()[-1].body["max_completion_tokens"] == 1024


# -- usage and cost ------------------------------------------------------------------------------
def test_usage_and_cost_add_up(judge_server: JudgeServer, judge_settings) -> None:
    judge_server.responder = lambda request: Reply(json.dumps(GOOD), prompt_tokens=1000, completion_tokens=100)
    judge_server.script(Fault.malformed("{"))  # billed too
    updates: list[Usage] = []
    client = JudgeClient(replace(judge_settings, price_prompt_per_million=2.5, price_completion_per_million=10.0),
                         retry_policy=FAST_POLICY, on_change=updates.append)

    async def body() -> list[Any]:
        return await asyncio.gather(*(ask(client, f"q{i}") for i in range(4)))

    replies = run(client, body)
    malformed = next(r for r in judge_server.recorded() if r.fault == "malformed")
    assert client.usage.calls == 5 and client.usage.prompt_tokens == 4000 + 1000 * 0 + max(1, len(malformed.prompt_text.split()))
    assert client.usage.completion_tokens == 400 + 1
    assert sum(r.prompt_tokens for r in replies) == client.usage.prompt_tokens
    assert client.cost() == pytest.approx((client.usage.prompt_tokens * 2.5 + client.usage.completion_tokens * 10.0) / 1e6)
    assert updates[-1] == client.usage and updates[-1] is not client.usage
    assert make(judge_settings).cost() is None


def test_missing_usage_is_warned_about(judge_server: JudgeServer, judge_settings, caplog) -> None:
    judge_server.responder = lambda request: Reply(json.dumps(GOOD), usage=False)
    client = make(judge_settings)
    with caplog.at_level(logging.WARNING, logger="textgen_core.judge"):
        run(client, lambda: ask(client))
    assert client.usage.calls == 1 and client.usage.prompt_tokens == 0
    assert "reports no token usage" in caplog.text


# -- embeddings and prompt log-probabilities ------------------------------------------------------------
def test_embeddings_round_trip_cached_per_text(judge_server: JudgeServer, judge_settings) -> None:
    client = make(judge_settings, embedding_model="embedder")
    judge_server.script(Fault.http(503), path=EMBEDDINGS)

    async def body() -> tuple[Any, Any]:
        first = await client.embed(["alpha", "beta", "alpha"])
        second = await client.embed(["beta", "gamma"])
        return first, second

    first, second = run(client, body)
    assert first == [default_embed("alpha"), default_embed("beta"), default_embed("alpha")]
    assert second == [default_embed("beta"), default_embed("gamma")]
    requests = judge_server.recorded(EMBEDDINGS)
    assert len(requests) == 3 and requests[0].status == 503
    assert requests[1].body == {"model": "embedder", "input": ["alpha", "beta"], "encoding_format": "float"}
    assert requests[2].body["input"] == ["gamma"]
    assert run(client, lambda: client.embed([])) == []


def test_prompt_logprobs_round_trip(judge_server: JudgeServer, judge_settings) -> None:
    client = make(judge_settings)
    text = "The cat sat on the mat"
    values = run(client, lambda: client.prompt_logprobs(text))
    assert values == pytest.approx([default_logprob(t) for t in [" cat", " sat", " on", " the", " mat"]])
    (request,) = judge_server.recorded(COMPLETIONS)
    assert request.body["echo"] is True and request.body["logprobs"] == 1 and request.body["max_tokens"] == 1
    assert run(client, lambda: client.prompt_logprobs(text)) == values and judge_server.count(COMPLETIONS) == 1


def test_prompt_logprobs_unsupported_is_unscored(judge_server: JudgeServer, judge_settings) -> None:
    judge_server.script(Fault.http(404, "no route /v1/completions"), path=COMPLETIONS)
    client = make(judge_settings)
    with pytest.raises(Unscored, match="HTTP 404"):
        run(client, lambda: client.prompt_logprobs("some text"))


# -- the API key goes nowhere but the Authorization header --------------------------------------------------
def test_api_key_never_reaches_db_logs_errors_or_reprs(judge_server: JudgeServer, db_path, caplog, capsys) -> None:
    secret = "sk-test-SECRET123"
    judge_server.api_key = secret  # the server checks it arrives
    judge_server.echo_key_in_errors = True  # and, like some proxies, echoes it in error text
    settings = JudgeSettings(base_url=judge_server.url, model="judge-test", api_key=secret, timeout=2.0, retries=1)
    store = Store(db_path)
    client = JudgeClient(settings, store, retry_policy=FAST_POLICY)
    judge_server.responder = lambda request: GOOD
    judge_server.script(Fault.http(503, "busy"), GOOD, Fault.http(400, "unsupported value"))

    async def body() -> tuple[Any, Any]:
        good = await ask(client, "first")
        try:
            await ask(client, "second")
        except Unscored as exc:
            return good, exc
        raise AssertionError("expected Unscored")

    with caplog.at_level(logging.DEBUG):
        good, failure = run(client, body)
    assert judge_server.recorded()[0].headers["authorization"] == f"Bearer {secret}"
    assert "[redacted]" in failure.reason and secret not in failure.reason and secret not in str(failure)
    run_id = store.create_run(1, ["faithfulness"], {}, {}, ["m"], judge=settings.public())
    store.judge_writer.put_cell(CellWrite(  # the cell as the judge writes it: its verdicts and failed exchange
        run_id, ("d1", "m", "faithfulness", "faithfulness", None, None, failure.reason),
        [("d1", "m", "faithfulness", "claims", 0, "claim", "yes", failure.reason, good.cache_key)],
        [{"datum_id": "d1", "model": "m", "metric": "faithfulness", "step": "claims", "call_index": 0,
          "status": "unscored", "reason": failure.reason, "cache_key": None, "messages": failure.messages,
          "reply": failure.text, "prompt_tokens": 0, "completion_tokens": 0, "attempts": 1, "latency_s": None}],
        False))
    store.judge_writer.flush()
    assert store.exchanges(run_id)["reason"].tolist() == [failure.reason]
    assert store.get_run(run_id)["judge"]["model"] == "judge-test"
    for shown in (repr(settings), str(settings.public()), repr(client), repr(failure), caplog.text,
                  capsys.readouterr().err, json.dumps(good.messages), good.text):
        assert secret not in shown
    store.close()
    leaked = [p.name for p in db_path.parent.iterdir() if p.is_file() and secret.encode() in p.read_bytes()]
    assert leaked == []
    assert cells_containing(db_path, secret) == []  # compressed columns could hide it from a byte grep
    planted = db_path.parent / "planted.duckdb"  # the scan itself finds a key where there is one
    control = Store(planted)
    control.create_run(1, [], {}, {}, [], judge={"api_key": secret})
    control.close()
    assert cells_containing(planted, secret) == ["runs.judge"]


def cells_containing(path, needle: str) -> list[str]:
    """table.column of every cell in a DuckDB file whose text contains ``needle``."""
    import duckdb

    con = duckdb.connect(str(path), read_only=True)
    try:
        columns = con.execute("SELECT table_name, column_name FROM information_schema.columns "
                              "WHERE table_schema = 'main'").fetchall()
        found = []
        for table, column in columns:
            hits = con.execute(f'SELECT count(*) FROM "{table}" WHERE CAST("{column}" AS VARCHAR) LIKE ?',
                               [f"%{needle}%"]).fetchone()[0]
            if hits:
                found.append(f"{table}.{column}")
        return found
    finally:
        con.close()


def test_cache_writes_are_batched_on_the_writer_thread_and_land_when_idle(judge_server: JudgeServer, judge_settings,
                                                                         db_path) -> None:
    import threading

    judge_server.responder = lambda request: GOOD
    store = Store(db_path)
    writes: list[tuple[int, str]] = []
    batch = store.write_judge_batch
    store.write_judge_batch = lambda entries, cells, usage=(): (  # count commits and where they happen
        writes.append((len(entries), threading.current_thread().name)) or batch(entries, cells, usage))
    client = make(judge_settings, store)

    async def body() -> list[Any]:
        replies = await asyncio.gather(*(ask(client, f"q{i}") for i in range(100)))
        deadline = time.monotonic() + 30
        while sum(n for n, _ in writes) < 100 and time.monotonic() < deadline:  # idle: written without a flush
            await asyncio.sleep(0.01)
        assert sum(n for n, _ in writes) == 100
        return replies

    replies = run(client, body)
    # batched: replies that arrive within the writer's 0.2 s window share a commit; a loaded machine spreads the
    # 100 replies over more windows, so the bound is far from one commit per reply rather than an exact count
    assert len(writes) <= 20 and {name for _, name in writes} == {"judge-store-writer"}
    assert store.judge_cache_has([r.cache_key for r in replies]) == {r.cache_key for r in replies}
    store.close()
