"""Ray workers read the judge cache for real (#20): a second --engine ray judge run over the same data
makes 0 judge calls, counted at the loopback judge; the scores are the first run's.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from judge_server import JudgeServer
from scripted_judge import ScriptedJudge
from textgen_core.judge.settings import JudgeSettings
from textgen_core.store import Store

ray = pytest.importorskip("ray", reason="the Ray engine is the optional extra textgen-eval[ray]")
from textgen_core.engines.ray_engine import run_ray  # noqa: E402

METRICS = ["qa_grade", "coherence"]


pytestmark = pytest.mark.usefixtures("ray_cluster")  # a local 2-CPU cluster per module (conftest)


def write_rows(path: Path, n: int) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "model", "query", "prediction", "reference", "contexts"])
        for i in range(n):
            fact = f"Station {i} opened in {1900 + i}."
            writer.writerow([f"q{i:02d}", "m", f"When did station {i} open?", fact, fact, fact])


@pytest.mark.timeout(480)
def test_a_second_ray_run_over_the_same_data_makes_no_judge_call(tmp_path: Path) -> None:
    data = tmp_path / "rows.csv"
    write_rows(data, 6)
    with JudgeServer(responder=ScriptedJudge()) as server:
        judge = JudgeSettings(base_url=server.url, model="judge", concurrency=3, timeout=10.0)
        store = Store(tmp_path / "ray.duckdb")
        first = run_ray(store, str(data), METRICS, judge=judge, block_rows=3)
        paid = server.count(None)
        second = run_ray(store, str(data), METRICS, judge=judge, block_rows=3)
        again = server.count(None) - paid
    assert paid > 0 and again == 0  # was: every request paid again (the workers' store had no cache)
    assert store.get_run(second)["judge_calls"] == 0
    scores = [store.scores(r).sort_values(["datum_id", "score"])["value"].tolist() for r in (first, second)]
    assert scores[0] == scores[1] and all(v == v for v in scores[1])
