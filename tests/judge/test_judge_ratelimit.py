"""The shared adaptive limiter against a loopback judge that enforces a request rate with 429s."""

from __future__ import annotations

import threading
from pathlib import Path

from judge_server import JudgeServer, RateLimit
from scripted_judge import ScriptedJudge
from textgen_core.judge.client import JudgeClient
from textgen_core.judge.engine import run_judge_metrics
from textgen_core.llm.ratelimit import duration_seconds
from textgen_core.judge.settings import JudgeSettings
from textgen_core.model import Dataset, Datum
from textgen_core.progress import Progress
from textgen_core.store import Store

METRICS = {m: {} for m in ("coherence", "qa_grade", "context_relevance", "hallucination")}


def rows(tag: str, n: int) -> list[Datum]:
    return [Datum(f"{tag}{i}", "m", query=f"What is topic {tag}{i}?", prediction=f"Topic {tag}{i} is old.",
                  references=(f"Topic {tag}{i} is old.",), contexts=(f"Topic {tag}{i} is old.", "Unrelated."))
            for i in range(n)]


def run(store: Store, data: list[Datum], settings: JudgeSettings, seen: list[Progress]) -> JudgeClient:
    run_id = store.create_run(store.save_dataset(Dataset(data[0].datum_id, data)), list(METRICS), {}, {}, ["m"])
    client = JudgeClient(settings, store)
    run_judge_metrics(store, run_id, data, METRICS, settings, client=client, progress=seen.append)
    assert store.scores(run_id)["value"].notna().all()  # a 429 is never a lost cell
    return client


def test_a_rate_limited_endpoint_loses_no_cell_and_the_run_says_how_long_it_waited(tmp_path: Path) -> None:
    seen: list[Progress] = []
    with JudgeServer(responder=ScriptedJudge(), latency=0.02) as server:
        server.limits = RateLimit(rpm=1200, burst_seconds=0.5)  # 20 per second, bursts of 10
        settings = JudgeSettings(base_url=server.url, model="judge", concurrency=16, timeout=5.0)
        store = Store(tmp_path / "rl.duckdb")
        client = run(store, rows("a", 15), settings, seen)  # 60 requests: ~3 s at 20 per second
        store.close()
        sent, refused = server.count(None), server.count(status=429)
    assert refused <= 0.05 * sent, (refused, sent)  # paced from the x-ratelimit headers before refusal
    assert server.limits.achieved_rpm() <= 1200 * 1.1
    assert client.usage.waited_s > 1.0 and seen[-1].waited_s == client.usage.waited_s


def test_two_runs_in_two_threads_share_one_limit(tmp_path: Path) -> None:
    with JudgeServer(responder=ScriptedJudge(), latency=0.05) as server:
        server.limits = RateLimit(rpm=1500, burst_seconds=0.5)
        settings = JudgeSettings(base_url=server.url, model="judge", concurrency=4, timeout=5.0)
        store = Store(tmp_path / "two.duckdb")
        errors: list[BaseException] = []

        def job(tag: str) -> None:  # a dashboard job: its own thread, its own event loop
            try:
                run(store, rows(tag, 14), settings, [])  # 56 requests each: ~4.5 s for both at 25 per second
            except BaseException as exc:  # noqa: BLE001 - re-raised in the test thread
                errors.append(exc)

        threads = [threading.Thread(target=job, args=(tag,)) for tag in "xy"]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        store.close()
        assert not errors, errors
        assert server.peak <= 4  # one concurrency limit for the endpoint, not one per run
        assert server.count(status=429) <= 0.05 * server.count(None)
        assert server.limits.achieved_rpm() <= 1500 * 1.1


def test_reset_durations() -> None:
    assert [duration_seconds(t) for t in ("20ms", "1.5s", "6m0s", "2", "1h", "", "soon")] == \
        [0.02, 1.5, 360.0, 2.0, 3600.0, None, None]


def test_limiter_cuts_on_429_grows_when_clean_and_holds_until_the_reset() -> None:
    import asyncio
    import time

    from textgen_core.llm.ratelimit import Limiter

    limiter = Limiter(cap=16)

    async def one(status: int, headers: dict | None = None, retry_after: float | None = None) -> float:
        started = time.monotonic()
        permit = await limiter.acquire()
        limiter.release(permit, status=status, headers=headers, retry_after=retry_after)
        return time.monotonic() - started

    async def main() -> None:
        assert limiter.limit == 8  # slow start below the cap
        for _ in range(20):
            await one(200)
        assert limiter.limit == 16  # grows by one per clean reply, up to the cap
        await one(429, retry_after=0.2)
        assert limiter.limit == 8 and limiter.refused == 1
        assert await one(200) >= 0.15  # everyone waits out the Retry-After
        await one(200, {"x-ratelimit-limit-requests": "600", "x-ratelimit-remaining-requests": "0",
                        "x-ratelimit-reset-requests": "200ms"})
        # held until one request is back (60/600 s; the reset is when the bucket is full again), then paced
        assert limiter.learned_rpm == 600 and await one(200) >= 0.09
        assert limiter.waited >= 0.25

    asyncio.run(main())
