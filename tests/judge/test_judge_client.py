"""The judge client against the loopback server: faults, retries, structured-output fallback, re-asks.

Nothing here mocks the openai client. Each test drives :class:`JudgeClient`
against tests/judge_server.py on 127.0.0.1 and asserts on what the server
received (counts, bodies, timing) and what the client returned.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace
from typing import Any

import pytest

from judge_client_helpers import GOOD, VERDICTS, ask, make, messages, run
from judge_server import Fault, JudgeServer
from textgen_core.judge import Unscored, Usage
from textgen_core.judge.client import CORRECTION, SCHEMA_INSTRUCTION, JudgeClient
from textgen_core.llm.retry import FAST_POLICY


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
    # The failed attempt reached the endpoint, which may bill it (#19.2): a call too, unless the
    # connection dropped before any answer.
    billed = 0 if fault.kind == "drop" else 1
    assert client.usage.retries == 1 and client.usage.calls == 1 + billed and client.usage.unanswered == billed


def test_persistent_server_error_is_unscored_after_all_attempts(judge_server: JudgeServer, judge_settings) -> None:
    judge_server.responder = lambda request: Fault.http(503, "overloaded")
    client = make(judge_settings, retries=3)
    with pytest.raises(Unscored) as caught:
        run(client, lambda: ask(client))
    assert judge_server.count() == 4
    assert caught.value.kind == "server" and caught.value.status == 503 and not caught.value.fatal
    assert caught.value.reason == "HTTP 503: overloaded (gave up after 4 attempts)"
    assert client.usage.failed == 1 and client.usage.retries == 3 and client.usage.calls == 4 == client.usage.unanswered  # each may be billed (#19.2)


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


def test_the_backoff_setting_times_the_retries(judge_server: JudgeServer, judge_settings) -> None:
    judge_server.responder = lambda request: GOOD
    judge_server.script(Fault.http(503), Fault.http(503))
    client = JudgeClient(replace(judge_settings, backoff=0.2))  # no retry policy given: the setting decides
    assert client.policy.base == 0.2
    reply = run(client, lambda: ask(client))
    first, second, third = judge_server.recorded()
    assert reply.value == GOOD and reply.attempts == 3
    assert second.started - first.ended >= 0.1  # full jitter: between half the backoff and all of it
    assert third.started - second.ended >= 0.2  # doubled for the second retry


def test_retry_after_pauses_every_request_to_the_endpoint(judge_server: JudgeServer, judge_settings) -> None:
    """Timed on the client's side: when each request went on the wire (``in_flight`` rose) and when the client
    took in the 429 (``rate_limited`` rose; the pause is set just before, with no await between). The server's
    clock cannot tell a request the other slot sent before the 429 reached a busy client from a violation."""
    judge_server.responder = lambda request: GOOD
    judge_server.latency = 0.05
    sends: list[float] = []
    learned: list[float] = []
    seen = Usage()

    def note(usage: Usage) -> None:  # called on the client's event loop, after each change of its usage
        now = time.monotonic()
        if usage.in_flight > seen.in_flight:
            sends.append(now)
        if usage.rate_limited > seen.rate_limited:
            learned.append(now)
        seen.in_flight, seen.rate_limited = usage.in_flight, usage.rate_limited

    client = JudgeClient(replace(judge_settings, concurrency=2), None, retry_policy=FAST_POLICY, on_change=note)

    async def body() -> list[Any]:
        await ask(client, "warm-up")  # settles the response mode, so requests run in parallel
        judge_server.script(Fault.rate_limit(retry_after_ms=300))
        return await asyncio.gather(*(ask(client, f"q{i}") for i in range(6)))

    run(client, body)
    records = judge_server.recorded()
    limited = next(r for r in records if r.status == 429)
    assert len(records) == len(sends) == 8 and len(learned) == 1
    # Once the client knows, nothing goes out until the pause is over: the 429's own request and the other
    # slot's (which at least the 429's retry and one more are: the other slot had at most 5 to send)
    later = [t - learned[0] for t in sends if t > learned[0]]
    assert len(later) >= 2 and min(later) >= 0.3 - 0.005, later
    # what the endpoint saw: those requests all arrived 0.3 s or more after it sent the 429
    assert sum(r.started - limited.ended >= 0.3 for r in records) >= len(later)


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
    assert not client.cached_values([client.cache_key(messages(), VERDICTS, prompt_version="v1")])


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
    # Valid JSON of the wrong shape is named as such, not as "invalid JSON" (#18.14).
    with pytest.raises(Unscored, match=r"^reply does not fit the schema after 3 attempts: \$\.verdicts: expected "
                                       r"exactly 3 items, got 2$"):
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
