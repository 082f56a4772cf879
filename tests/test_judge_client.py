"""The judge client against the loopback server: the real openai client, real HTTP, injected faults.

Nothing here mocks the openai client. Each test drives :class:`JudgeClient`
against tests/judge_server.py on 127.0.0.1 and asserts on what the server
received (counts, bodies, timing, peak concurrency) and what the client returned.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any, Awaitable, Callable

import pytest

from judge_server import COMPLETIONS, EMBEDDINGS, Fault, JudgeServer, Reply, default_embed, default_logprob
from textgen_core.judge import JudgeClient, JudgeSettings, Unscored, Usage
from textgen_core.judge.client import CORRECTION, SCHEMA_INSTRUCTION
from textgen_core.judge.retry import FAST_POLICY
from textgen_core.store import Store

VERDICTS = {
    "type": "object",
    "properties": {
        "verdicts": {
            "type": "array", "minItems": 3, "maxItems": 3,
            "items": {
                "type": "object",
                "properties": {"verdict": {"type": "string", "enum": ["yes", "no"]}, "reason": {"type": "string"}},
                "required": ["verdict", "reason"], "additionalProperties": False,
            },
        },
    },
    "required": ["verdicts"], "additionalProperties": False,
}
GOOD = {"verdicts": [{"verdict": "yes", "reason": "r"}] * 3}


def messages(text: str = "Is the sky blue?") -> list[dict]:
    return [{"role": "system", "content": "You are a careful judge."}, {"role": "user", "content": text}]


def run(client: JudgeClient, body: Callable[[], Awaitable[Any]]) -> Any:
    """Run ``body`` in a fresh event loop and close the client's HTTP pool of that loop."""
    async def main() -> Any:
        try:
            return await body()
        finally:
            await client.aclose()
    return asyncio.run(main())


def ask(client: JudgeClient, text: str = "Is the sky blue?", *, version: str = "v1", schema: dict = VERDICTS):
    return client.ask(messages(text), schema, schema_name="verdicts", prompt_version=version)


def make(settings: JudgeSettings, store: Store | None = None, **changes: Any) -> JudgeClient:
    from dataclasses import replace
    return JudgeClient(replace(settings, **changes), store, retry_policy=FAST_POLICY)


# -- a plain successful ask ------------------------------------------------------------------
def test_success_sends_strict_json_schema_and_counts_tokens(judge_server: JudgeServer, judge_settings) -> None:
    judge_server.responder = lambda request: GOOD
    client = make(judge_settings, seed=7, max_tokens=300)
    reply = run(client, lambda: ask(client))
    assert reply.value == GOOD and not reply.cached and reply.mode == "json_schema"
    assert json.loads(reply.text) == GOOD and reply.messages == messages()
    (request,) = judge_server.recorded()
    body = request.body
    assert body["response_format"] == {"type": "json_schema",
                                       "json_schema": {"name": "verdicts", "strict": True, "schema": VERDICTS}}
    assert body["temperature"] == 0 and body["seed"] == 7 and body["max_tokens"] == 300
    assert request.headers["authorization"] == f"Bearer {judge_settings.api_key}"
    assert (reply.prompt_tokens, reply.completion_tokens) == (9, len(reply.text.split()))
    assert client.usage == Usage(calls=1, prompt_tokens=9, completion_tokens=reply.completion_tokens)


# -- transient faults are retried ------------------------------------------------------------
@pytest.mark.parametrize("fault", [
    Fault.rate_limit(retry_after_ms=10), Fault.http(500), Fault.http(502), Fault.http(503), Fault.http(408),
    Fault.http(409), Fault.drop(), Fault.hang(5), Fault.bad_body(),
], ids=lambda f: f.kind)
def test_transient_fault_is_retried(judge_server: JudgeServer, judge_settings, fault: Fault) -> None:
    judge_server.responder = lambda request: GOOD
    judge_server.script(fault)
    client = make(judge_settings, timeout=0.3)
    reply = run(client, lambda: ask(client))
    assert reply.value == GOOD and reply.attempts == 2
    assert judge_server.count() == 2
    assert client.usage.retries == 1 and client.usage.calls == 1


def test_persistent_server_error_is_unscored_after_all_attempts(judge_server: JudgeServer, judge_settings) -> None:
    judge_server.responder = lambda request: Fault.http(503, "overloaded")
    client = make(judge_settings, retries=3)
    with pytest.raises(Unscored) as caught:
        run(client, lambda: ask(client))
    assert judge_server.count() == 4
    assert caught.value.kind == "server" and caught.value.status == 503 and not caught.value.fatal
    assert caught.value.reason == "HTTP 503: overloaded (gave up after 4 attempts)"
    assert client.usage.failed == 1 and client.usage.retries == 3 and client.usage.calls == 0


def test_timeouts_are_unscored_with_the_limit_in_the_reason(judge_server: JudgeServer, judge_settings) -> None:
    judge_server.responder = lambda request: Fault.hang(5)
    client = make(judge_settings, timeout=0.2, retries=1)
    with pytest.raises(Unscored, match=r"did not answer within 0.2 s \(gave up after 2 attempts\)"):
        run(client, lambda: ask(client))
    assert judge_server.count() == 2


# -- final answers: not retried --------------------------------------------------------------
@pytest.mark.parametrize("fault, kind, fatal", [
    (Fault.http(400, "messages must not be empty"), "http", False),
    (Fault.http(401, "Incorrect API key"), "auth", True),
    (Fault.http(403, "not allowed"), "auth", True),
    (Fault.http(404, "model judge-test does not exist"), "http", True),
    (Fault.http(400, "This model's maximum context length is 8192 tokens", "context_length_exceeded"), "too_long", False),
    (Fault.rate_limit(code="insufficient_quota"), "quota", True),
    (Fault.content_filter(), "refused", False),
    (Fault.refusal("I will not judge this."), "refused", False),
    (Fault.length(), "length", False),
], ids=["400", "401", "403", "404", "context", "quota", "content_filter", "refusal", "length"])
def test_final_failures_are_unscored_without_retry(judge_server: JudgeServer, judge_settings, fault: Fault,
                                                   kind: str, fatal: bool) -> None:
    judge_server.script(fault)
    client = make(judge_settings)
    with pytest.raises(Unscored) as caught:
        run(client, lambda: ask(client))
    assert judge_server.count() == 1
    assert caught.value.kind == kind and caught.value.fatal is fatal
    assert client.usage.retries == 0 and client.usage.failed == 1
    assert caught.value.messages == messages()
    if fault.kind == "refusal":
        assert "I will not judge this." in caught.value.reason
    if fault.kind == "length":
        assert "max_tokens=1024" in caught.value.reason and caught.value.text == fault.content


def test_fatal_failure_stops_further_requests(judge_server: JudgeServer, judge_settings) -> None:
    judge_server.responder = lambda request: GOOD
    client = make(judge_settings)

    async def body() -> list[Any]:
        await ask(client, "works")
        judge_server.responder = lambda request: Fault.http(401, "Incorrect API key provided")
        results = await asyncio.gather(*(ask(client, f"q{i}") for i in range(30)), return_exceptions=True)
        sent = judge_server.count()
        try:
            await ask(client, "later")
        except Unscored as exc:
            results.append(exc)
        assert judge_server.count() == sent  # known bad: not sent again
        return results

    results = run(client, body)
    assert len(results) == 31 and all(isinstance(r, Unscored) and r.fatal and "HTTP 401" in r.reason for r in results)
    assert judge_server.count(status=401) <= judge_settings.concurrency and client.usage.failed == 31


def test_unsupported_value_is_fatal(judge_server: JudgeServer, judge_settings) -> None:
    judge_server.responder = lambda request: Fault.http(
        400, "Unsupported value: 'temperature' does not support 0 with this model.", "unsupported_value")
    client = make(judge_settings)

    async def body() -> list[Any]:
        return await asyncio.gather(*(ask(client, f"q{i}") for i in range(5)), return_exceptions=True)

    results = run(client, body)
    assert all(isinstance(r, Unscored) and r.fatal and "temperature" in r.reason for r in results)
    assert judge_server.count() == 1


def test_unreachable_endpoint_stops_after_a_few_requests(judge_settings) -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = make(judge_settings, base_url=f"http://127.0.0.1:{port}/v1", retries=1)

    async def body() -> list[Unscored]:
        failures = []
        for i in range(5):
            try:
                await ask(client, f"q{i}")
            except Unscored as exc:
                failures.append(exc)
        return failures

    failures = run(client, body)
    assert [f.kind for f in failures] == ["connection"] * 5
    assert [f.fatal for f in failures] == [False, False, True, True, True]
    assert failures[-1].reason.startswith("the judge endpoint is unreachable: connection failed")
    assert client.usage.retries == 3  # the fourth and fifth asks sent nothing


# -- Retry-After -----------------------------------------------------------------------------
@pytest.mark.parametrize("fault, wait", [
    (Fault.rate_limit(retry_after="1"), 1.0),
    (Fault.rate_limit(retry_after_ms=300), 0.3),
], ids=["retry-after", "retry-after-ms"])
def test_retry_after_is_honoured(judge_server: JudgeServer, judge_settings, fault: Fault, wait: float) -> None:
    judge_server.responder = lambda request: GOOD
    judge_server.script(fault)
    client = make(judge_settings)
    run(client, lambda: ask(client))
    first, second = judge_server.recorded()
    gap = second.started - first.ended
    assert wait <= gap < wait * 1.1 + 0.5


def test_retry_after_pauses_every_request_to_the_endpoint(judge_server: JudgeServer, judge_settings) -> None:
    judge_server.responder = lambda request: GOOD
    judge_server.latency = 0.05
    client = make(judge_settings, concurrency=2)

    async def body() -> list[Any]:
        await ask(client, "warm-up")  # settles the response mode, so requests run in parallel
        judge_server.script(Fault.rate_limit(retry_after_ms=300))
        return await asyncio.gather(*(ask(client, f"q{i}") for i in range(6)))

    run(client, body)
    records = judge_server.recorded()
    limited = next(r for r in records if r.status == 429)
    later = [r for r in records if r.started > limited.ended]
    assert len(records) == 8 and len(later) >= 4
    # The other slot waited too: nothing starts during the pause. A request the other slot had already
    # put on the wire while the 429 travelled back to the client (a few ms) is not a violation.
    gaps = [r.started - limited.ended for r in later]
    assert not [g for g in gaps if 0.05 < g < 0.3], gaps
    assert sum(g >= 0.3 for g in gaps) >= len(later) - 1


# -- structured-output fallback ---------------------------------------------------------------
def test_json_schema_rejection_falls_back_once_per_endpoint(judge_server: JudgeServer, judge_settings) -> None:
    judge_server.json_schema = False
    client = make(judge_settings)

    async def body() -> list[Any]:
        first = await asyncio.gather(*(ask(client, f"q{i}") for i in range(20)))
        second = await asyncio.gather(*(ask(client, f"r{i}") for i in range(5)))
        return first + second

    replies = run(client, body)
    assert judge_server.count(fault="reject_json_schema") == 1
    assert judge_server.count(status=200) == 25
    assert all(r.mode == "json_object" and len(r.value["verdicts"]) == 3 for r in replies)
    sent = judge_server.recorded()[-1]
    assert sent.response_format == "json_object"
    assert SCHEMA_INSTRUCTION in sent.messages[-1]["content"] and json.dumps(VERDICTS, separators=(",", ":")) in sent.prompt_text
    assert replies[0].messages == sent.messages[:1] + [replies[0].messages[1]] and SCHEMA_INSTRUCTION in replies[0].messages[1]["content"]


def test_json_object_rejection_falls_back_to_plain_text(judge_server: JudgeServer, judge_settings) -> None:
    judge_server.json_schema = judge_server.json_object = False
    client = make(judge_settings)

    async def body() -> list[Any]:
        return await asyncio.gather(*(ask(client, f"q{i}") for i in range(10)))

    replies = run(client, body)
    assert judge_server.count(fault="reject_json_schema") == 1 and judge_server.count(fault="reject_json_object") == 1
    assert {r.mode for r in replies} == {"text"} and judge_server.recorded()[-1].response_format is None


def test_422_counts_as_a_format_rejection(judge_server: JudgeServer, judge_settings) -> None:
    judge_server.responder = lambda req: Fault.http(422, "unprocessable") if req.get("response_format", {}).get("type") == "json_schema" else GOOD
    client = make(judge_settings)
    reply = run(client, lambda: ask(client))
    assert reply.mode == "json_object" and judge_server.count(status=422) == 1


def test_schema_not_fit_for_strict_mode_is_sent_non_strict(judge_server: JudgeServer, judge_settings) -> None:
    loose = {"type": "object", "properties": {"score": {"type": "integer"}, "note": {"type": "string"}},
             "required": ["score"]}
    judge_server.responder = lambda request: {"score": 3}
    client = make(judge_settings)
    reply = run(client, lambda: ask(client, schema=loose))
    assert reply.value == {"score": 3}
    assert judge_server.recorded()[0].body["response_format"]["json_schema"]["strict"] is False


# -- validation and re-asks ------------------------------------------------------------------------
def test_malformed_json_is_re_asked_then_accepted(judge_server: JudgeServer, judge_settings) -> None:
    judge_server.responder = lambda request: GOOD
    judge_server.script(Fault.malformed('{"verdicts": [{"verdict": "yes",'))
    client = make(judge_settings)
    reply = run(client, lambda: ask(client))
    assert reply.value == GOOD and reply.attempts == 2 and judge_server.count() == 2
    retry = judge_server.recorded()[1].messages
    assert retry[:2] == messages()
    assert retry[2] == {"role": "assistant", "content": '{"verdicts": [{"verdict": "yes",'}
    assert retry[3]["role"] == "user" and retry[3]["content"].startswith(CORRECTION.split("{")[0])
    assert reply.messages == retry and client.usage.retries == 1 and client.usage.calls == 2


def test_persistent_malformed_json_is_unscored_never_zero(judge_server: JudgeServer, judge_settings) -> None:
    judge_server.responder = lambda request: "The answer is yes, definitely."
    client = make(judge_settings)
    with pytest.raises(Unscored) as caught:
        run(client, lambda: ask(client))
    assert caught.value.kind == "invalid"
    assert caught.value.reason.startswith("invalid JSON after 5 attempts: no JSON object or array in the reply")
    assert caught.value.text == "The answer is yes, definitely." and len(caught.value.messages) == 10
    assert judge_server.count() == 5 and client.usage.failed == 1 and client.usage.calls == 5
    assert not client.is_cached(messages(), VERDICTS, schema_name="verdicts", prompt_version="v1")


def test_wrong_item_count_is_re_asked_with_the_error(judge_server: JudgeServer, judge_settings) -> None:
    two = {"verdicts": GOOD["verdicts"][:2]}
    judge_server.responder = lambda request: two if len(request["messages"]) == 2 else GOOD
    client = make(judge_settings)
    reply = run(client, lambda: ask(client))
    assert reply.value == GOOD and judge_server.count() == 2
    assert "$.verdicts: expected exactly 3 items, got 2" in judge_server.recorded()[1].messages[-1]["content"]


def test_wrong_item_count_every_time_names_the_mismatch(judge_server: JudgeServer, judge_settings) -> None:
    judge_server.responder = lambda request: {"verdicts": GOOD["verdicts"][:2]}
    client = make(judge_settings, retries=2)
    with pytest.raises(Unscored, match=r"^invalid JSON after 3 attempts: \$\.verdicts: expected exactly 3 items, got 2$"):
        run(client, lambda: ask(client))


@pytest.mark.parametrize("text", [
    '```json\n{"verdicts": [{"verdict": "yes", "reason": "r"}, {"verdict": "yes", "reason": "r"}, '
    '{"verdict": "yes", "reason": "r"}]}\n```',
    'Here is my verdict: {"verdicts": [{"verdict": "yes", "reason": "r"}, {"verdict": "yes", "reason": "r"}, '
    '{"verdict": "yes", "reason": "r"}]} Hope this helps.',
    '<think>first {"draft": 1}</think>{"verdicts": [{"verdict": "yes", "reason": "r"}, '
    '{"verdict": "yes", "reason": "r"}, {"verdict": "yes", "reason": "r"}]}',
], ids=["fenced", "prose", "think"])
def test_json_is_read_tolerantly(judge_server: JudgeServer, judge_settings, text: str) -> None:
    judge_server.responder = lambda request: text
    client = make(judge_settings)
    assert run(client, lambda: ask(client)).value == GOOD and judge_server.count() == 1


def test_out_of_enum_verdict_is_re_asked(judge_server: JudgeServer, judge_settings) -> None:
    bad = {"verdicts": [{"verdict": "maybe", "reason": "r"}] * 3}
    judge_server.script(bad)
    judge_server.responder = lambda request: GOOD
    client = make(judge_settings)
    assert run(client, lambda: ask(client)).value == GOOD
    assert '$.verdicts[0].verdict: "maybe" is not one of "yes", "no"' in judge_server.recorded()[1].prompt_text


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
    assert fresh.is_cached(messages(), VERDICTS, schema_name="verdicts", prompt_version="v1")
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
    assert store.judge_cache_stats().empty
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
    client = make(judge_settings, price_prompt_per_million=2.5, price_completion_per_million=10.0)
    updates: list[Usage] = []
    client.on_change = updates.append

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
    store.write_verdicts(run_id, [("d1", "m", "faithfulness", "claims", 0, "claim", "yes", failure.reason, good.cache_key)])
    store.write_exchanges(run_id, [{"datum_id": "d1", "model": "m", "metric": "faithfulness", "step": "claims",
                                    "status": "unscored", "reason": failure.reason, "messages": failure.messages,
                                    "reply": failure.text}])
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
    store.write_judge_batch = lambda entries, cells: (  # count commits and where they happen
        writes.append((len(entries), threading.current_thread().name)) or batch(entries, cells))
    client = make(judge_settings, store)

    async def body() -> list[Any]:
        replies = await asyncio.gather(*(ask(client, f"q{i}") for i in range(100)))
        deadline = time.monotonic() + 5
        while sum(n for n, _ in writes) < 100 and time.monotonic() < deadline:  # idle: written without a flush
            await asyncio.sleep(0.01)
        assert sum(n for n, _ in writes) == 100
        return replies

    replies = run(client, body)
    assert len(writes) <= 4 and {name for _, name in writes} == {"judge-store-writer"}
    assert store.judge_cache_has([r.cache_key for r in replies]) == {r.cache_key for r in replies}
    store.close()
