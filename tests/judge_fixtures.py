"""Pytest fixtures for judge tests: a loopback OpenAI-compatible server and settings pointing at it.

Listed in ``pytest_plugins`` of tests/conftest.py. Typical use::

    def test_something(judge_server, judge_settings):
        judge_server.responder = lambda request: {"verdict": "yes"}
        judge_server.script(Fault.rate_limit(retry_after_ms=20))   # the next request gets a 429
        client = JudgeClient(judge_settings, retry_policy=FAST_POLICY)
        reply = asyncio.run(client.ask(...))
        assert judge_server.count() == 2

Configuration attributes (``responder``, ``latency``, ``fault_rate``,
``fault_kinds``, ``json_schema``, ``json_object``, ``api_key``, ``embed``,
``logprob``) may be changed while the server runs.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from judge_server import JudgeServer
from textgen_core.judge import JudgeSettings
from textgen_core.llm.retry import FAST_POLICY, RetryPolicy

#: The key the fixture settings send; tests that check for leaks grep for it.
TEST_API_KEY = "sk-test-fixture-0000"


@pytest.fixture
def judge_server() -> Iterator[JudgeServer]:
    """A started server on 127.0.0.1 with no latency and no faults; stopped after the test."""
    server = JudgeServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def judge_settings(judge_server: JudgeServer) -> JudgeSettings:
    """Settings for the fixture server: short timeout, 8 in flight, 4 retries."""
    return JudgeSettings(base_url=judge_server.url, model="judge-test", api_key=TEST_API_KEY,
                         timeout=2.0, concurrency=8, retries=4)


@pytest.fixture
def fast_retry() -> RetryPolicy:
    """Millisecond backoff so fault drills stay fast (Retry-After is still honoured, up to 5 s)."""
    return FAST_POLICY
