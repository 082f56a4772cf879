"""Absurd x-ratelimit-* headers on good replies never crash a run nor hold it without a bound or a word (#19.3).

Real openai client against the loopback judge sending the headers with every 200 reply; each test
makes its own limiter (use_limiter) with short bounds so a hold that is not bounded would show as
a test over time rather than a run parked for a day.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from judge_server import CHAT, JudgeServer
from scripted_judge import ScriptedJudge
from textgen_core.judge.client import JudgeClient
from textgen_core.judge.engine import run_judge_metrics
from textgen_core.llm.ratelimit import Limiter, duration_seconds, use_limiter
from textgen_core.judge.settings import JudgeSettings
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store

METRICS = {"coherence": {}, "qa_grade": {}}

ABSURD = [
    {"x-ratelimit-limit-requests": "inf", "x-ratelimit-remaining-requests": "5"},
    {"x-ratelimit-limit-tokens": "1e400"},
    {"x-ratelimit-limit-requests": "nan", "x-ratelimit-limit-tokens": "-3"},
    {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "86400s"},
    {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "inf"},
    {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1e400"},
    {"x-ratelimit-limit-tokens": "1"},
]


def rows(n: int) -> list[Datum]:
    return [Datum(f"d{i}", "m", query=f"What is topic {i}?", prediction=f"Topic {i} is old.",
                  references=(f"Topic {i} is old.",)) for i in range(n)]


@pytest.mark.parametrize("headers", ABSURD, ids=lambda h: ",".join(f"{k[12:]}={v}" for k, v in h.items()))
def test_absurd_headers_on_good_replies_score_every_cell_within_the_bound(
        tmp_path: Path, headers: dict[str, str], caplog: pytest.LogCaptureFixture) -> None:
    with JudgeServer(responder=ScriptedJudge()) as server:
        server.reply_headers = headers
        settings = JudgeSettings(base_url=server.url, model="judge", concurrency=4, timeout=5.0, retries=1)
        use_limiter(settings.endpoint, settings.model, Limiter(4, max_hold=0.5, header_hold=0.5))
        store = Store(tmp_path / "h.duckdb")
        data = rows(3)
        run_id = store.create_run(store.save_dataset(Dataset("d", data)), list(METRICS), {}, {}, ["m"])
        started = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="textgen_core.judge"):
            run_judge_metrics(store, run_id, data, METRICS, settings, client=JudgeClient(settings, store))
        elapsed = time.monotonic() - started
        frame = store.scores(run_id)
        assert len(frame) == 6 and frame["value"].notna().all(), frame[["score", "reason"]]
        assert server.count(CHAT) == 6  # every billed reply was used, none thrown away
    # Each request waits at most the bound (here 0.5 s): a day's reset is not a day's hold.
    assert elapsed < 20
    if "86400s" in str(headers):  # a hold was taken (an unreadable reset takes none): stderr says what it waits for
        said = [r.getMessage() for r in caplog.records if "waiting" in r.getMessage()]
        assert said and "x-ratelimit-remaining-requests 0" in said[0], said


def test_unreadable_numbers_are_no_limit() -> None:
    for raw in ("inf", "1e400", "nan", "-1", "soon", None):
        assert duration_seconds(raw) is None or duration_seconds(raw) == 0.0
    limiter = Limiter(4)
    limiter.release(limiter_permit(limiter), status=200, headers={"x-ratelimit-limit-requests": "1e400",
                                                                 "x-ratelimit-limit-tokens": "inf"})
    assert limiter.learned_rpm is None and limiter.learned_tpm is None


def limiter_permit(limiter: Limiter):
    import asyncio

    return asyncio.run(limiter.acquire(100))


def test_a_tokens_limit_below_what_was_just_served_is_ignored() -> None:
    limiter = Limiter(4)
    limiter.release(limiter_permit(limiter), status=200, headers={"x-ratelimit-limit-tokens": "1"})
    assert limiter.learned_tpm is None
    limiter.release(limiter_permit(limiter), status=200, headers={"x-ratelimit-limit-tokens": "90000"})
    assert limiter.learned_tpm == 90000


def test_a_user_tokens_limit_below_one_request_holds_it_at_most_max_hold() -> None:
    import asyncio

    limiter = Limiter(4, tpm=1, max_hold=0.2)
    limiter.release(limiter_permit(limiter), status=200)  # the first request empties the bucket
    started = time.monotonic()
    permit = limiter_permit(limiter)  # would need 6,000 s at 1 token per minute
    assert time.monotonic() - started < 2.0 and permit.paced_s <= 0.3
    del asyncio
