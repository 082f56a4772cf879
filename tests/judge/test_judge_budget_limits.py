"""User-set rate limits (--rpm / --tpm) reach the client's limiter: a run paces itself below them.

The loopback judge here enforces nothing, so any pacing seen comes from the user's limits alone.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from judge_server import CHAT, JudgeServer
from scripted_judge import ScriptedJudge, suite_rows
from textgen_core.cli.judge_args import add_judge_arguments, judge_settings_from_args
from textgen_core.evaluate import evaluate
from textgen_core.model import Dataset
from textgen_core.store import Store

METRICS = ["faithfulness", "coherence"]


def settings_from_flags(server: JudgeServer, *flags: str):
    parser = argparse.ArgumentParser()
    add_judge_arguments(parser)
    return judge_settings_from_args(parser.parse_args(["--judge-base-url", server.url, "--judge-model", "judge",
                                                       "--concurrency", "16", *flags]))


def busiest_second(server: JudgeServer) -> int:
    """Most requests that arrived within any one second."""
    starts = sorted(r.started for r in server.recorded(CHAT))
    return max(sum(1 for t in starts[i:] if t - start < 1.0) for i, start in enumerate(starts))


def test_rpm_flag_paces_the_run(db_path: Path) -> None:
    with JudgeServer(responder=ScriptedJudge(), latency=0.01) as server:
        settings = settings_from_flags(server, "--rpm", "600")  # 10 per second
        assert settings.rpm == 600
        store = Store(db_path)
        run_id = evaluate(store, store.save_dataset(Dataset("d", suite_rows(8))), METRICS, judge=settings)
        assert store.get_run(run_id)["status"] == "finished"
        calls = server.count(CHAT)
        starts = sorted(r.started for r in server.recorded(CHAT))
        assert calls >= 20  # unpaced they all go out within 0.2 s: paced, about 2.3 s
        assert (calls - 1) / (starts[-1] - starts[0]) * 60 <= 600 * 1.1  # no faster than the limit
        assert busiest_second(server) <= 10 + 10  # at most one second's worth beyond the pace
        assert store.scores(run_id)["value"].notna().all()


def test_tpm_flag_paces_the_run(db_path: Path) -> None:
    with JudgeServer(responder=ScriptedJudge(), latency=0.01) as server:
        # Each request counts its prompt plus the reply it may get (--max-tokens 200), about 450 tokens: about 9
        # per second, so the run's 24 requests take about 2.6 s; at least 1.7 s even if a full bucket (one
        # second's worth) went out at once (at --tpm 90000 they took 7 s)
        settings = settings_from_flags(server, "--tpm", "240000", "--max-tokens", "200")
        assert settings.tpm == 240000
        store = Store(db_path)
        run_id = evaluate(store, store.save_dataset(Dataset("d", suite_rows(8))), METRICS, judge=settings)
        assert store.get_run(run_id)["status"] == "finished"
        starts = sorted(r.started for r in server.recorded(CHAT))
        elapsed = starts[-1] - starts[0]
        assert elapsed > 1.5  # unpaced, these requests would all go out within a fraction of a second


def test_no_requests_remaining_holds_for_one_request_not_the_whole_reset() -> None:
    """x-ratelimit-reset-requests is when the bucket is full again; one request is back after 60/limit s."""
    import asyncio
    import time

    from textgen_core.llm.ratelimit import Limiter

    async def go() -> float:
        limiter = Limiter(cap=4)
        permit = await limiter.acquire()
        limiter.release(permit, status=200, headers={"x-ratelimit-limit-requests": "600",
                                                     "x-ratelimit-remaining-requests": "0",
                                                     "x-ratelimit-reset-requests": "1s"})
        started = time.monotonic()
        await limiter.acquire()
        return time.monotonic() - started

    assert asyncio.run(go()) < 0.5  # 0.1 s at 600 rpm, not the 1 s reset
