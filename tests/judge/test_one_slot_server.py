"""Good company for a slow one-slot local server (#18.8): timeouts narrow concurrency as 429s do.

The loopback judge serves one request at a time (``slots = 1``, like a llama.cpp server started with
one slot): requests beyond it queue there and their time in the queue counts against the client's
timeout. The client must find the server's pace instead of timing out request after request.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from judge_server import CHAT, JudgeServer
from textgen_core.judge.client import JudgeClient
from textgen_core.judge.engine import run_judge_metrics
from textgen_core.llm.ratelimit import Limiter, use_limiter
from textgen_core.judge.settings import JudgeSettings
from textgen_core.model import Dataset, Datum
from textgen_core.progress import Progress
from textgen_core.store import Store


def rows(n: int) -> list[Datum]:
    return [Datum(f"d{i}", "m", query=f"Capital number {i}?", prediction=f"City {i}.", references=(f"City {i}.",))
            for i in range(n)]


def test_timeouts_narrow_concurrency_and_every_cell_is_scored(tmp_path: Path,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    seen: list[Progress] = []
    with JudgeServer(responder=lambda r: {"reason": "same", "grade": "CORRECT"}, latency=0.1) as server:
        server.slots = 1
        settings = JudgeSettings(base_url=server.url, model="judge", concurrency=16, timeout=0.33, retries=4)
        limiter = Limiter(16)
        use_limiter(settings.endpoint, settings.model, limiter)
        store = Store(tmp_path / "slot.duckdb")
        data = rows(16)
        run_id = store.create_run(store.save_dataset(Dataset("d", data)), ["qa_grade"], {}, {}, ["m"])
        with caplog.at_level(logging.WARNING, logger="textgen_core.judge"):
            run_judge_metrics(store, run_id, data, {"qa_grade": {}}, settings, client=JudgeClient(settings, store),
                              progress=seen.append)
        received = server.count(CHAT)
    frame = store.scores(run_id)
    assert frame["value"].notna().all(), frame["reason"].tolist()
    assert limiter.timeouts >= 1 and limiter.limit <= 4  # it met the slot and came down to the server's pace
    # 27-29 here (31 at 0.15 s a request and a 0.5 s timeout; 46 before timeouts narrowed concurrency): the
    # first wave times out, later ones fit the slot.
    assert received <= 36, received
    # The timed-out attempts are counted and shown: progress, the closing warning and the run's calls.
    assert seen[-1].unanswered == limiter.timeouts and seen[-1].retries >= limiter.timeouts
    assert store.get_run(run_id)["judge_calls"] == received
    assert any("timed out or were refused" in r.getMessage() for r in caplog.records)
