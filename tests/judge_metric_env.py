"""The ``env`` fixture of the judge metric tests: the scripted judge behind the loopback server, a store, settings.

Listed in ``pytest_plugins`` of tests/conftest.py; tests take ``env`` and build rows with :func:`row`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

from judge_server import JudgeServer
from scripted_judge import ScriptedJudge
from textgen_core.judge.engine import run_judge_metrics
from textgen_core.judge.settings import JudgeSettings
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store

Q = "What is the capital of France?"


@dataclass
class Env:
    server: JudgeServer
    judge: ScriptedJudge
    store: Store
    settings: JudgeSettings

    def score(self, rows: list[Datum], *metrics: str, **params: dict[str, Any]) -> dict[tuple[str, str], tuple]:
        """Run ``metrics`` on ``rows``; {(datum_id, metric): (value, details, reason)}."""
        dataset_id = self.store.save_dataset(Dataset(f"d{len(self.store.list_datasets())}", rows))
        run_id = self.store.create_run(dataset_id, list(metrics), {}, {}, sorted({r.model for r in rows}))
        self.run_id = run_id
        run_judge_metrics(self.store, run_id, rows, {m: params.get(m, {}) for m in metrics}, self.settings)
        frame = self.store.scores(run_id)
        return {(r.datum_id, r.metric): (None if r.value != r.value else r.value,
                                         json.loads(r.details) if isinstance(r.details, str) else None,
                                         r.reason if isinstance(r.reason, str) else None)
                for r in frame.itertuples()}


def _embed(text: str) -> list[float]:
    """2-d embeddings: texts about cats point one way, everything else the other."""
    return [1.0, 0.0] if "cat" in text.lower() else [0.0, 1.0]


@pytest.fixture(params=["polite", "impolite"])
def env(empty_db: Path, request: pytest.FixtureRequest) -> Iterator[Env]:
    """Every metric test runs twice: the impolite judge (shuffled keyed verdicts, keys and ratings as
    strings or floats, labels in capitals) must give exactly the polite judge's numbers."""
    judge = ScriptedJudge(impolite=request.param == "impolite")
    with JudgeServer(responder=judge, embed=_embed) as server:
        store = Store(empty_db)
        settings = JudgeSettings(base_url=server.url, model="judge", api_key="sk-test", concurrency=8,
                                 timeout=5.0, retries=2)
        yield Env(server, judge, store, settings)
        store.close()


def row(datum_id: str, prediction: str | None, *, query: str | None = Q, references: tuple[str, ...] = (),
        contexts: tuple[str, ...] = (), metadata: dict | None = None) -> Datum:
    return Datum(datum_id, "m", query, prediction, references, contexts, metadata or {})
